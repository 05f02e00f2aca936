// component/agent/client_features.h
//
// ClientFeatureCache remembers which users' clients can show a corrected message (XEP-0308),
// so that a streamed answer goes only where it reads as one message being written. It is
// learned by asking the client's disco#info (xmpp::DiscoverFeatures) when it writes, again
// after an hour; a client that does not answer counts as unable. Keyed by full JID (each of a
// user's devices answers for itself), bounded to kMaxClients (the oldest goes first). Lives on
// the I/O loop.
//
//   if (cache.StartQuery(from, now)) act(xmpp::DiscoverFeatures{.to = from, .from = own});
//   cache.Record(answer, now);                      // the xmpp::ClientFeatures that came back
//   cache.ShowsCorrections(from).value_or(false);   // nullopt: never asked, or not answered yet
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"

namespace herald::agent {

class ClientFeatureCache {
 public:
  static constexpr size_t kMaxClients = 4096;
  static constexpr absl::Duration kFreshFor = absl::Hours(1);
  static constexpr absl::Duration kAskAgainAfter = absl::Minutes(1);  // an open question

  // True when `client` should be asked now (and records that it is): it has a resource, and
  // was never asked, or its answer is older than kFreshFor, or a question left unanswered is
  // older than kAskAgainAfter.
  bool StartQuery(const xmpp::Jid& client, absl::Time now);

  // What the client answered (or that it did not).
  void Record(const xmpp::ClientFeatures& answer, absl::Time now);

  // Whether the client shows corrections; nullopt when it was never asked or has not answered.
  std::optional<bool> ShowsCorrections(const xmpp::Jid& client) const;

  size_t size() const { return clients_.size(); }

 private:
  struct Entry {
    absl::Time at;                    // asked, or answered
    std::optional<bool> corrections;  // nullopt while the question is open
  };
  using Clients = absl::flat_hash_map<std::string, Entry>;

  // Gives the client `it` points at `entry`, keeping by_age_ in step.
  void Set(Clients::iterator it, Entry entry);

  Clients clients_;  // by full JID
  // (Entry::at, full JID) of every client, oldest first: which one goes when the cache is full,
  // found without walking the others (a burst of 10,000 new senders asks 10,000 clients).
  std::set<std::pair<absl::Time, std::string>> by_age_;
};

}  // namespace herald::agent
