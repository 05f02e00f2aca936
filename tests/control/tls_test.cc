// The control plane over TCP with TLS and with mTLS, using certificates the test makes with
// the openssl command line: a CA, a server certificate for 127.0.0.1, and a client
// certificate from the same CA.
#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

namespace v1 = ::herald::v1;
using testing::ControlTestEnv;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/herald-tls-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    const std::string script =
        absl::StrCat("set -e; cd ", dir_, "; exec >openssl.log 2>&1\n",
                     "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                     "-keyout ca.key -out ca.pem -days 2 -subj /CN=herald-test-ca\n",
                     "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                     "-keyout server.key -out server.csr -subj /CN=localhost\n",
                     "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext\n",
                     "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                     "-out server.pem -days 2 -extfile san.ext\n",
                     "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                     "-keyout client.key -out client.csr -subj /CN=heraldctl\n",
                     "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                     "-out client.pem -days 2\n",
                     // A second CA, whose client certificates the server must not accept.
                     "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                     "-keyout other.key -out other.pem -days 2 -subj /CN=someone-else\n");
    ASSERT_EQ(system(script.c_str()), 0) << Read(dir_ + "/openssl.log");
  }

  void TearDown() override { system(absl::StrCat("rm -rf ", dir_).c_str()); }

  grpc::Status GetStatus(ControlTestEnv& env,
                         std::shared_ptr<grpc::ChannelCredentials> credentials) {
    auto admin =
        v1::AdminService::NewStub(grpc::CreateChannel(env.server().address(), credentials));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    env.Authorize(context, "reader");
    v1::GetStatusResponse response;
    return admin->GetStatus(&context, {}, &response);
  }

  std::string dir_;
};

TEST_F(TlsTest, ATlsListenerServesTlsClientsAndRefusesPlaintext) {
  ControlTestEnv env;
  ASSERT_TRUE(env.Start({.tls_cert = dir_ + "/server.pem", .tls_key = dir_ + "/server.key"}).ok());
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = Read(dir_ + "/ca.pem");
  EXPECT_TRUE(GetStatus(env, grpc::SslCredentials(options)).ok());
  EXPECT_EQ(GetStatus(env, grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, AnMtlsListenerRequiresAClientCertificateFromItsCa) {
  ControlTestEnv env;
  ASSERT_TRUE(env.Start({.tls_cert = dir_ + "/server.pem",
                         .tls_key = dir_ + "/server.key",
                         .tls_client_ca = dir_ + "/ca.pem"})
                  .ok());
  grpc::SslCredentialsOptions without;
  without.pem_root_certs = Read(dir_ + "/ca.pem");
  EXPECT_EQ(GetStatus(env, grpc::SslCredentials(without)).error_code(),
            grpc::StatusCode::UNAVAILABLE);

  grpc::SslCredentialsOptions stranger = without;
  stranger.pem_private_key = Read(dir_ + "/other.key");
  stranger.pem_cert_chain = Read(dir_ + "/other.pem");
  EXPECT_EQ(GetStatus(env, grpc::SslCredentials(stranger)).error_code(),
            grpc::StatusCode::UNAVAILABLE);

  grpc::SslCredentialsOptions with = without;
  with.pem_private_key = Read(dir_ + "/client.key");
  with.pem_cert_chain = Read(dir_ + "/client.pem");
  EXPECT_TRUE(GetStatus(env, grpc::SslCredentials(with)).ok());
}

TEST_F(TlsTest, AMissingCertificateFileIsAClearStartError) {
  ControlTestEnv env;
  absl::Status started =
      env.Start({.tls_cert = dir_ + "/absent.pem", .tls_key = dir_ + "/server.key"});
  EXPECT_EQ(started.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(started.message(), absl::StrCat("control.tls_cert: cannot read ", dir_, "/absent.pem"));
}

}  // namespace
}  // namespace herald::control
