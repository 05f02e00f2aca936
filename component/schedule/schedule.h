// component/schedule/schedule.h
//
// One schedule: a prompt that runs as a turn of a conversation (a person's chat or a room)
// at the times its Recurrence names, in its time zone. People make theirs in chat (the
// `schedule` skill, /schedules); operators define theirs in the config ([[schedules.task]]).
#pragma once

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "component/base/conversation_ref.h"
#include "component/schedule/recurrence.h"

namespace herald::schedule {

struct Schedule {
  int64_t id = 0;               // from 1, never reused
  base::ConversationRef owner;  // where it runs and whose it is (kDirect or kRoom)
  std::string author;           // who made it: a bare JID (a nick in a room), or "config"
  std::string name;             // an operator's schedule: its [[schedules.task]] name
  std::string prompt;
  Recurrence recurrence;
  std::string zone = "UTC";  // IANA name the times are read in
  absl::Time created;        // an interval counts from here
  absl::Time next;           // the next run
  absl::Time last_run = absl::InfinitePast();
  int64_t runs = 0;
};

}  // namespace herald::schedule
