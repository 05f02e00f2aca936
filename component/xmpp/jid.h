// component/xmpp/jid.h
//
// Jid is a parsed, validated XMPP address (RFC 7622): [localpart@]domainpart[/resource].
// Parsing checks each part's length (1..1023 bytes), UTF-8 validity and the characters
// RFC 7622 forbids in a localpart; localpart and domainpart are normalised to lower case
// (ASCII; non-ASCII text is kept as sent) and a trailing dot on the domain is dropped, so
// two Jids that name the same account compare equal. The resource is kept exactly.
//
//   absl::StatusOr<Jid> jid = Jid::Parse("Alice@LocalHost/phone");
//   jid->BareString();          // "alice@localhost"
//   jid->resource();            // "phone"
//   jid->Bare() == Jid::Parse("alice@localhost").value();   // true
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace herald::xmpp {

class Jid {
 public:
  // RFC 7622 §3.1: a JID is at most 3071 bytes, each part at most 1023.
  static constexpr size_t kMaxPartBytes = 1023;
  static constexpr size_t kMaxJidBytes = 3071;

  // Fails with InvalidArgument naming what is wrong ("JID has an empty domainpart", ...).
  static absl::StatusOr<Jid> Parse(std::string_view text);

  // The empty JID, which Parse never returns.
  Jid() = default;

  const std::string& local() const { return local_; }
  const std::string& domain() const { return domain_; }
  const std::string& resource() const { return resource_; }

  bool empty() const { return domain_.empty(); }
  bool IsBare() const { return resource_.empty(); }
  bool IsDomain() const { return local_.empty() && resource_.empty(); }

  Jid Bare() const;
  // Uses `resource` as given, without validation: pass one taken from a parsed Jid or from
  // validated configuration, never raw network text (run that through Parse instead).
  Jid WithResource(std::string_view resource) const;

  // "local@domain/resource", "local@domain", "domain"...
  std::string ToString() const;
  std::string BareString() const;

  // Whether `text` is exactly this JID's ToString() (so Parse(text) would give this JID back),
  // found without building the string.
  bool Spells(std::string_view text) const;

  // Same account: localparts and domainparts equal (they are normalised at parse).
  bool BareEquals(const Jid& other) const {
    return local_ == other.local_ && domain_ == other.domain_;
  }

  friend bool operator==(const Jid& a, const Jid& b) {
    return a.local_ == b.local_ && a.domain_ == b.domain_ && a.resource_ == b.resource_;
  }

  template <typename H>
  friend H AbslHashValue(H h, const Jid& jid) {
    return H::combine(std::move(h), jid.local_, jid.domain_, jid.resource_);
  }

 private:
  Jid(std::string local, std::string domain, std::string resource)
      : local_(std::move(local)), domain_(std::move(domain)), resource_(std::move(resource)) {}

  std::string local_;
  std::string domain_;
  std::string resource_;
};

// The domain one label up: the server a component is attached to ("agent.example.org" ->
// "example.org"); a domain of one label is its own parent.
std::string ParentDomain(std::string_view domain);

}  // namespace herald::xmpp
