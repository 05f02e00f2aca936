// [schedules], [[schedules.task]] and [[pubsub]] (docs/proactivity.md).

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/time_zone.h"
#include "component/config/bind_sections.h"
#include "component/config/toml_binder.h"
#include "component/config/value_formats.h"
#include "component/schedule/recurrence.h"

namespace herald::config {
namespace {

void BindTask(Binder& b, const Section& t, absl::flat_hash_set<std::string>& names,
              ScheduleTaskConfig& task) {
  for (const char* required : {"name", "to", "prompt", "when"}) {
    if (!b.Has(t, required)) b.Error(t.line, absl::StrCat(t.path, ".", required, " is required"));
  }
  if (b.NonEmptyString(t, "name", &task.name)) {
    if (!IsShortName(task.name)) {
      b.Error(t, "name", absl::StrCat(t.path, ".name must be 1-64 of a-z 0-9 _ -"));
    } else if (!names.insert(task.name).second) {
      b.Error(t, "name", absl::StrCat(t.path, ".name \"", task.name, "\" is used twice"));
    }
  }
  if (b.NonEmptyString(t, "to", &task.to)) {
    if (!IsValidBareJid(task.to, /*require_localpart=*/true)) {
      b.Error(t, "to",
              absl::StrCat(t.path, ".to must be a user's bare JID or a room's JID; got ",
                           b.Shown(b.Node(t, "to"))));
    } else {
      task.to = absl::AsciiStrToLower(task.to);
    }
  }
  b.NonEmptyString(t, "prompt", &task.prompt);
  if (b.String(t, "timezone", &task.timezone)) {
    if (absl::StatusOr<absl::TimeZone> zone = base::LoadNamedTimeZone(task.timezone); !zone.ok()) {
      b.Error(t, "timezone", absl::StrCat(t.path, ".timezone: ", zone.status().message()));
    }
  }
  if (b.NonEmptyString(t, "when", &task.when)) {
    absl::StatusOr<schedule::Recurrence> when =
        schedule::ParseRecurrence(task.when, absl::Now(), absl::UTCTimeZone());
    if (!when.ok()) {
      b.Error(t, "when", absl::StrCat(t.path, ".when: ", when.status().message()));
    } else if (when->kind() == schedule::Recurrence::Kind::kOnce) {
      b.Error(t, "when",
              absl::StrCat(t.path, ".when must repeat: \"every 1d\" or \"cron 0 9 * * MON\""));
    }
  }
}

}  // namespace

void BindSchedules(Binder& b, const Section& root, SchedulesConfig& schedules) {
  Section s = b.Sub(root, "schedules");
  b.Bool(s, "enabled", &schedules.enabled);
  b.NonEmptyString(s, "path", &schedules.path);
  b.Integer(s, "max_per_user", &schedules.max_per_user);
  b.Integer(s, "min_interval_seconds", &schedules.min_interval_seconds);
  if (b.String(s, "missed", &schedules.missed) && schedules.missed != "run_once" &&
      schedules.missed != "skip") {
    b.Error(s, "missed",
            absl::StrCat("schedules.missed must be \"run_once\" or \"skip\"; got ",
                         b.Shown(b.Node(s, "missed"))));
  }
  absl::flat_hash_set<std::string> names;
  for (const Section& t : b.Tables(s, "task")) {
    ScheduleTaskConfig task;
    BindTask(b, t, names, task);
    schedules.tasks.push_back(std::move(task));
  }
}

void BindPubsub(Binder& b, const toml::table& root, const std::vector<agent::RoomSettings>& rooms,
                std::vector<agent::PubsubFeed>& feeds) {
  absl::flat_hash_set<std::string> seen;
  for (const Section& f : b.Tables(Section::Root(root), "pubsub")) {
    agent::PubsubFeed feed;
    for (const char* required : {"service", "node", "to"}) {
      if (!b.Has(f, required)) b.Error(f.line, absl::StrCat(f.path, ".", required, " is required"));
    }
    if (b.NonEmptyString(f, "service", &feed.service)) {
      if (!IsValidBareJid(feed.service, /*require_localpart=*/false)) {
        b.Error(f, "service",
                absl::StrCat(f.path,
                             ".service must be a pubsub service's JID (or a person's, "
                             "for their PEP); got ",
                             b.Shown(b.Node(f, "service"))));
      } else {
        feed.service = absl::AsciiStrToLower(feed.service);
      }
    }
    if (b.NonEmptyString(f, "node", &feed.node) && feed.node.size() > 256) {
      b.Error(f, "node", absl::StrCat(f.path, ".node is longer than 256 bytes"));
    }
    if (b.NonEmptyString(f, "to", &feed.to)) {
      if (!IsValidBareJid(feed.to, /*require_localpart=*/true)) {
        b.Error(f, "to",
                absl::StrCat(f.path, ".to must be a user's bare JID or a room's JID; got ",
                             b.Shown(b.Node(f, "to"))));
      } else {
        feed.to = absl::AsciiStrToLower(feed.to);
        feed.to_room = std::any_of(rooms.begin(), rooms.end(),
                                   [&](const agent::RoomSettings& r) { return r.jid == feed.to; });
      }
    }
    b.String(f, "prompt", &feed.prompt);
    if (!seen.insert(absl::StrCat(feed.service, "\n", feed.node)).second) {
      b.Error(f.line, absl::StrCat(f.path, ": node '", feed.node, "' at ", feed.service,
                                   " is named twice"));
    }
    feeds.push_back(std::move(feed));
  }
}

}  // namespace herald::config
