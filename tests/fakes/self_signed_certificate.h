// tests/fakes/self_signed_certificate.h
//
// SelfSignedCertificate is a throwaway TLS identity for a fake server: a fresh P-256 key and a
// certificate signed by that key, naming the hosts a client checks it against. A name that
// parses as an IP address (v4 or v6) goes into subjectAltName as `IP:`, any other as `DNS:`;
// the first name is also the subject's CN. The certificate is valid from an hour ago for a
// day, is no CA, and is written with its key as PEM into a folder of its own (under
// $TEST_TMPDIR when set, else /tmp), which goes with the object. A client trusts it by taking
// certificate_path() as its CA file.
//
//   absl::StatusOr<std::unique_ptr<SelfSignedCertificate>> certificate =
//       SelfSignedCertificate::Create({"127.0.0.1"});
//   tls.use_certificate_chain_file((*certificate)->certificate_path());
//   tls.use_private_key_file((*certificate)->key_path(), asio::ssl::context::pem);
//   curl_easy_setopt(easy, CURLOPT_CAINFO, (*certificate)->certificate_path().c_str());
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace herald::fakes {

// Whether a certificate can name `name`: an IP address, or a DNS name of ASCII letters,
// digits, '-' and '.' (nothing that OpenSSL's extension syntax would read otherwise).
bool IsCertificateName(std::string_view name);

// Writes a new key and a certificate naming `names` (at least one, each IsCertificateName)
// to these two files as PEM. InvalidArgument for a name it cannot take.
absl::Status WriteSelfSignedCertificate(const std::vector<std::string>& names,
                                        const std::string& certificate_path,
                                        const std::string& key_path);

class SelfSignedCertificate {
 public:
  // Makes the folder and writes cert.pem and key.pem into it.
  static absl::StatusOr<std::unique_ptr<SelfSignedCertificate>> Create(
      const std::vector<std::string>& names);
  ~SelfSignedCertificate();  // removes the folder and both files

  SelfSignedCertificate(const SelfSignedCertificate&) = delete;
  SelfSignedCertificate& operator=(const SelfSignedCertificate&) = delete;

  const std::string& certificate_path() const { return certificate_path_; }
  const std::string& key_path() const { return key_path_; }

 private:
  explicit SelfSignedCertificate(std::string folder);

  std::string folder_;
  std::string certificate_path_;
  std::string key_path_;
};

}  // namespace herald::fakes
