#include "tools/heraldctl/connection.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/version.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "tools/heraldctl/argument_checks.h"
#include "tools/heraldctl/target.h"

namespace herald::heraldctl {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;   // a PEM bundle or a token file is far smaller
constexpr int kMaxReceiveBytes = 64 << 20;  // a long history page

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, std::string_view flag) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", AbslView(flag), " file '", path, "': ", std::strerror(errno)));
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", AbslView(flag), " file '", path, "'"));
  }
  std::string text = contents.str();
  if (text.size() > kMaxFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(flag), " file '", path, "' is larger than 1 MiB"));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmallFile(path, "--token-file");
  if (!text.ok()) return text.status();
  std::string_view first_line = *text;
  first_line = first_line.substr(0, first_line.find('\n'));
  std::string token(absl::StripAsciiWhitespace(AbslView(first_line)));
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--token-file '", path, "' is empty"));
  }
  if (!IsVisibleAscii(token)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the token in --token-file '", path,
        "' has characters a header cannot carry (spaces, control characters or non-ASCII)"));
  }
  return token;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const ConnectionOptions& options) {
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();

  grpc::ChannelArguments arguments;
  arguments.SetUserAgentPrefix(absl::StrCat("heraldctl/", kVersion));
  arguments.SetMaxReceiveMessageSize(kMaxReceiveBytes);

  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    if (!options.ca_file.empty()) {
      absl::StatusOr<std::string> roots = ReadSmallFile(options.ca_file, "--ca");
      if (!roots.ok()) return roots.status();
      ssl.pem_root_certs = *roots;
    }
    if (!options.cert_file.empty()) {
      absl::StatusOr<std::string> chain = ReadSmallFile(options.cert_file, "--cert");
      if (!chain.ok()) return chain.status();
      absl::StatusOr<std::string> key = ReadSmallFile(options.key_file, "--key");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *chain;
      ssl.pem_private_key = *key;
    }
    if (!options.server_name.empty()) arguments.SetSslTargetNameOverride(options.server_name);
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(options.target, credentials, arguments);
}

}  // namespace herald::heraldctl
