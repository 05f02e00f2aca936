#include "component/schedule/schedule_store.h"

#include <cstdint>
#include <utility>

#include "glog/logging.h"

namespace herald::schedule {

int64_t StoredSeconds(absl::Time time) {
  if (time == absl::InfiniteFuture()) return INT64_MAX;
  if (time == absl::InfinitePast()) return INT64_MIN;
  return absl::ToUnixSeconds(time);
}

absl::Time TimeFromStored(int64_t seconds) {
  if (seconds == INT64_MAX) return absl::InfiniteFuture();
  if (seconds == INT64_MIN) return absl::InfinitePast();
  return absl::FromUnixSeconds(seconds);
}

std::optional<Schedule> ScheduleFromRow(const StoredSchedule& row) {
  std::optional<base::ConversationRef> owner = base::ParseConversationName(row.owner);
  absl::StatusOr<Recurrence> recurrence = Recurrence::Decode(row.recurrence);
  if (!owner.has_value() || !recurrence.ok()) {
    LOG(WARNING) << "schedules: schedule " << row.id << " cannot be read and stays unused: "
                 << (owner.has_value() ? recurrence.status().message() : "bad owner");
    return std::nullopt;
  }
  return Schedule{.id = row.id,
                  .owner = *std::move(owner),
                  .author = std::string(row.author),
                  .name = std::string(row.name),
                  .prompt = std::string(row.prompt),
                  .recurrence = *std::move(recurrence),
                  .zone = std::string(row.zone),
                  .created = TimeFromStored(row.created),
                  .next = TimeFromStored(row.next),
                  .last_run = TimeFromStored(row.last_run),
                  .runs = row.runs};
}

}  // namespace herald::schedule
