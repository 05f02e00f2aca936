#include "component/agent/adhoc_commands.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "component/agent/slash_commands.h"
#include "component/base/absl_string_view.h"

namespace herald::agent {

std::vector<xmpp::AnswerCommand::Item> AdhocCommandItems(bool dev) {
  std::vector<xmpp::AnswerCommand::Item> items;
  for (const CommandEntry& entry : CommandTable()) {
    if (entry.who == Who::kDev && !dev) continue;
    items.push_back({.node = std::string(entry.name), .name = std::string(entry.help)});
  }
  return items;
}

std::string AdhocSessions::Start(std::string node, std::string owner, absl::Time now) {
  DropExpired(now);
  if (sessions_.size() >= kMaxSessions) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second.order < oldest->second.order) oldest = it;
    }
    sessions_.erase(oldest);
  }
  std::string id = absl::StrCat("adhoc-", ++next_);
  sessions_[id] = Session{.node = std::move(node),
                          .owner = std::move(owner),
                          .expires = now + kLifetime,
                          .order = next_};
  return id;
}

bool AdhocSessions::Finish(std::string_view id, std::string_view node, std::string_view owner,
                           absl::Time now) {
  DropExpired(now);
  auto it = sessions_.find(AbslView(id));
  if (it == sessions_.end() || it->second.node != node || it->second.owner != owner) return false;
  sessions_.erase(it);
  return true;
}

void AdhocSessions::DropExpired(absl::Time now) {
  absl::erase_if(sessions_, [now](const auto& entry) { return entry.second.expires <= now; });
}

}  // namespace herald::agent
