// component/agent/client_features.cc
//
// ClientFeatureCache: what each client answered to disco#info, for streamed answers (see the
// header).
#include "component/agent/client_features.h"

#include <algorithm>

#include "component/xmpp/namespaces.h"

namespace herald::agent {

bool ClientFeatureCache::StartQuery(const xmpp::Jid& client, absl::Time now) {
  if (client.IsBare()) return false;  // a bare JID is the account, not a client
  const std::string key = client.ToString();
  auto it = clients_.find(key);
  if (it != clients_.end()) {
    const absl::Duration age = now - it->second.at;
    if (age < (it->second.corrections.has_value() ? kFreshFor : kAskAgainAfter)) return false;
    Set(it, Entry{.at = now});
    return true;
  }
  if (clients_.size() >= kMaxClients && !by_age_.empty()) {
    clients_.erase(by_age_.begin()->second);
    by_age_.erase(by_age_.begin());
  }
  clients_.emplace(key, Entry{.at = now});
  by_age_.emplace(now, key);
  return true;
}

void ClientFeatureCache::Set(Clients::iterator it, Entry entry) {
  by_age_.erase({it->second.at, it->first});
  by_age_.emplace(entry.at, it->first);
  it->second = entry;
}

void ClientFeatureCache::Record(const xmpp::ClientFeatures& answer, absl::Time now) {
  // Only an answer to a question asked: a stray event cannot grow the cache.
  auto it = clients_.find(answer.of.ToString());
  if (it == clients_.end()) return;
  const bool corrections =
      answer.answered && std::find(answer.features.begin(), answer.features.end(),
                                   xmpp::ns::kMessageCorrect) != answer.features.end();
  Set(it, Entry{.at = now, .corrections = corrections});
}

std::optional<bool> ClientFeatureCache::ShowsCorrections(const xmpp::Jid& client) const {
  auto it = clients_.find(client.ToString());
  if (it == clients_.end()) return std::nullopt;
  return it->second.corrections;
}

}  // namespace herald::agent
