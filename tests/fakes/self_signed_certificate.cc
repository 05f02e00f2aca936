#include "tests/fakes/self_signed_certificate.h"

#include <arpa/inet.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace herald::fakes {
namespace {

struct PkeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct X509Deleter {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free_all(bio); }
};

bool IsIpAddress(const std::string& name) {
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), address) == 1 ||
         inet_pton(AF_INET6, name.c_str(), address) == 1;
}

bool IsPlainDnsName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') return false;
  }
  return true;
}

absl::Status AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (extension == nullptr) return absl::InternalError("cannot build certificate extension");
  int added = X509_add_ext(cert, extension, -1);
  X509_EXTENSION_free(extension);
  if (added != 1) return absl::InternalError("cannot add certificate extension");
  return absl::OkStatus();
}

}  // namespace

bool IsCertificateName(std::string_view name) {
  return IsPlainDnsName(name) || IsIpAddress(std::string(name));
}

absl::Status WriteSelfSignedCertificate(const std::vector<std::string>& names,
                                        const std::string& certificate_path,
                                        const std::string& key_path) {
  if (names.empty()) return absl::InvalidArgumentError("a certificate needs a name");
  std::string alt_names;
  for (const std::string& name : names) {
    if (!IsCertificateName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("a certificate cannot name \"", absl::CEscape(name), "\""));
    }
    absl::StrAppend(&alt_names, alt_names.empty() ? "" : ",",
                    IsIpAddress(name) ? "IP:" : "DNS:", name);
  }

  std::unique_ptr<EVP_PKEY, PkeyDeleter> key(EVP_EC_gen("P-256"));
  if (key == nullptr) return absl::InternalError("cannot generate a P-256 key");
  std::unique_ptr<X509, X509Deleter> cert(X509_new());
  if (cert == nullptr) return absl::InternalError("cannot allocate a certificate");

  uint64_t serial = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof(serial));
  if (X509_set_version(cert.get(), 2) != 1 ||
      ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), serial >> 1) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600) == nullptr ||
      X509_set_pubkey(cert.get(), key.get()) != 1) {
    return absl::InternalError("cannot fill in the certificate");
  }
  X509_NAME* subject = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(names[0].c_str()), -1, -1,
                                 0) != 1 ||
      X509_set_issuer_name(cert.get(), subject) != 1) {
    return absl::InternalError("cannot name the certificate");
  }
  if (absl::Status s = AddExtension(cert.get(), NID_subject_alt_name, alt_names); !s.ok()) {
    return s;
  }
  if (absl::Status s = AddExtension(cert.get(), NID_basic_constraints, "critical,CA:FALSE");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = AddExtension(cert.get(), NID_subject_key_identifier, "hash"); !s.ok()) {
    return s;
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return absl::InternalError("cannot sign the certificate");
  }

  std::unique_ptr<BIO, BioDeleter> cert_file(BIO_new_file(certificate_path.c_str(), "w"));
  if (cert_file == nullptr || PEM_write_bio_X509(cert_file.get(), cert.get()) != 1) {
    return absl::InternalError(absl::StrCat("cannot write ", certificate_path));
  }
  std::unique_ptr<BIO, BioDeleter> key_file(BIO_new_file(key_path.c_str(), "w"));
  if (key_file == nullptr || PEM_write_bio_PrivateKey(key_file.get(), key.get(), nullptr, nullptr,
                                                      0, nullptr, nullptr) != 1) {
    return absl::InternalError(absl::StrCat("cannot write ", key_path));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SelfSignedCertificate>> SelfSignedCertificate::Create(
    const std::vector<std::string>& names) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/self_signed_XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a folder like ", pattern));
  }
  // From here on the destructor removes the folder, whatever fails.
  std::unique_ptr<SelfSignedCertificate> certificate(new SelfSignedCertificate(std::move(pattern)));
  if (absl::Status status =
          WriteSelfSignedCertificate(names, certificate->certificate_path_, certificate->key_path_);
      !status.ok()) {
    return status;
  }
  return certificate;
}

SelfSignedCertificate::SelfSignedCertificate(std::string folder)
    : folder_(std::move(folder)),
      certificate_path_(folder_ + "/cert.pem"),
      key_path_(folder_ + "/key.pem") {}

SelfSignedCertificate::~SelfSignedCertificate() {
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

}  // namespace herald::fakes
