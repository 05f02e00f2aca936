#include "component/schedule/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/time_zone.h"
#include "component/schedule/postgres_schedule_store.h"
#include "component/schedule/sqlite_schedule_store.h"
#include "glog/logging.h"

namespace herald::schedule {
namespace {

using base::ConversationRef;

// The timer never sleeps longer than this, so a wall-clock change is noticed within it.
constexpr absl::Duration kMaxSleep = absl::Minutes(1);
// A shared store's: ids are taken this many at a time; claims wait this long after a failure;
// and a run overdue by more than kMissedAfter at start was missed (one less late is about to
// be made by an instance that is up).
constexpr int kIdBlock = 32;
constexpr absl::Duration kClaimRetry = absl::Seconds(5);
constexpr absl::Duration kMissedAfter = absl::Minutes(2);

absl::TimeZone ZoneOrUtc(const std::string& name) {
  absl::StatusOr<absl::TimeZone> zone = base::LoadNamedTimeZone(name);
  return zone.ok() ? *zone : absl::UTCTimeZone();
}

// Whether two schedules of the operator are the same one.
bool SameTask(const Schedule& stored, const Schedule& configured) {
  return stored.owner == configured.owner && stored.prompt == configured.prompt &&
         stored.zone == configured.zone &&
         stored.recurrence.Encode() == configured.recurrence.Encode();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Open(
    asio::io_context& io, asio::thread_pool& workers, SchedulerOptions options,
    const std::vector<ConfiguredSchedule>& configured, Clock clock) {
  std::shared_ptr<ScheduleStore> store;
  std::shared_ptr<PostgresScheduleStore> shared_store;
  if (options.postgres != nullptr) {
    absl::StatusOr<std::unique_ptr<PostgresScheduleStore>> opened =
        PostgresScheduleStore::Open(options.postgres);
    if (!opened.ok()) return opened.status();
    shared_store = *std::move(opened);
    store = shared_store;
  } else {
    absl::StatusOr<std::unique_ptr<SqliteScheduleStore>> opened =
        SqliteScheduleStore::Open(options.path);
    if (!opened.ok()) return opened.status();
    store = *std::move(opened);
  }
  absl::StatusOr<std::vector<Schedule>> loaded = store->LoadAll();
  if (!loaded.ok()) return loaded.status();
  absl::StatusOr<std::map<std::string, std::string>> zones = store->LoadZones();
  if (!zones.ok()) return zones.status();

  const absl::Time now = clock();
  // The operator's schedules as the config says them now.
  std::map<std::string, Schedule> wanted;
  for (const ConfiguredSchedule& task : configured) {
    absl::StatusOr<absl::TimeZone> zone = base::LoadNamedTimeZone(task.zone);
    if (!zone.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule '", task.name, "': ", zone.status().message()));
    }
    absl::StatusOr<Recurrence> recurrence = ParseRecurrence(task.when, now, *zone);
    if (!recurrence.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule '", task.name, "': ", recurrence.status().message()));
    }
    if (recurrence->kind() == Recurrence::Kind::kOnce) {
      return absl::InvalidArgumentError(absl::StrCat(
          "schedule '", task.name, "': a configured schedule repeats ('every' or 'cron')"));
    }
    wanted[task.name] = Schedule{.owner = task.owner,
                                 .author = "config",
                                 .name = task.name,
                                 .prompt = task.prompt,
                                 .recurrence = *std::move(recurrence),
                                 .zone = task.zone,
                                 .created = now};
  }

  std::unique_ptr<Scheduler> scheduler(
      new Scheduler(io, workers, std::move(options), store, shared_store, std::move(clock)));
  const bool shared = shared_store != nullptr;
  if (shared) {
    absl::StatusOr<int64_t> first = shared_store->ReserveIds(kIdBlock);
    if (!first.ok()) return first.status();
    scheduler->next_id_ = *first;
    scheduler->ids_end_ = *first + kIdBlock;
  }
  for (auto& [jid, zone] : *zones) scheduler->zones_[jid] = zone;
  for (Schedule& schedule : *loaded) {
    if (!shared) scheduler->next_id_ = std::max(scheduler->next_id_, schedule.id + 1);
    if (!schedule.name.empty()) {
      auto it = wanted.find(schedule.name);
      if (it == wanted.end() || !SameTask(schedule, it->second)) {
        LOG(INFO) << "schedules: '" << schedule.name << "' "
                  << (it == wanted.end() ? "is no longer in the config" : "changed")
                  << "; its stored state is dropped";
        if (absl::Status removed = store->Remove(schedule.id); !removed.ok()) return removed;
        continue;
      }
      wanted.erase(it);
    }
    const absl::TimeZone zone = ZoneOrUtc(schedule.zone);
    if (shared) {
      // Claims go by the run count, so what is adjusted here stays in this instance's memory:
      // an overdue run is simply due (and claimed once); only "skip" moves a long-missed one.
      const bool missed = schedule.next <= now - kMissedAfter;
      if (missed && !scheduler->options_.run_missed) {
        schedule.next = schedule.recurrence.NextAfter(now, schedule.created, zone);
        if (schedule.next == absl::InfiniteFuture()) {
          if (absl::Status removed = store->Remove(schedule.id); !removed.ok()) return removed;
          continue;
        }
      }
      scheduler->schedules_[schedule.id] = std::move(schedule);
      continue;
    }
    if (schedule.next <= now) {
      // Down when it was due: once now, or on to the next time.
      if (scheduler->options_.run_missed) {
        LOG(INFO) << "schedules: schedule " << schedule.id << " was due at "
                  << absl::FormatTime(schedule.next) << " while Herald was down; it runs now";
        schedule.next = now;
      } else {
        schedule.next = schedule.recurrence.NextAfter(now, schedule.created, zone);
        LOG(INFO) << "schedules: schedule " << schedule.id
                  << " was due while Herald was down; skipped to its next time";
      }
    }
    if (schedule.next == absl::InfiniteFuture()) {
      if (absl::Status removed = store->Remove(schedule.id); !removed.ok()) return removed;
      continue;
    }
    if (absl::Status put = store->Put(schedule); !put.ok()) return put;
    scheduler->schedules_[schedule.id] = std::move(schedule);
  }
  for (auto& [name, schedule] : wanted) {
    absl::StatusOr<int64_t> id = scheduler->TakeId();
    if (!id.ok()) return id.status();
    schedule.id = *id;
    schedule.next = schedule.recurrence.NextAfter(now, now, ZoneOrUtc(schedule.zone));
    absl::Status put = store->Put(schedule);
    // Another instance starting with the same config stored it first: its row is read at the
    // first refresh.
    if (shared && put.code() == absl::StatusCode::kAlreadyExists) continue;
    if (!put.ok()) return put;
    scheduler->schedules_[schedule.id] = std::move(schedule);
  }
  return scheduler;
}

Scheduler::Scheduler(asio::io_context& io, asio::thread_pool& workers, SchedulerOptions options,
                     std::shared_ptr<ScheduleStore> store,
                     std::shared_ptr<PostgresScheduleStore> shared_store, Clock clock)
    : io_(io),
      options_(std::move(options)),
      store_(std::move(store)),
      shared_store_(std::move(shared_store)),
      writes_(asio::make_strand(workers.get_executor())),
      clock_(std::move(clock)),
      timer_(io),
      refresh_timer_(io) {}

Scheduler::~Scheduler() {
  *alive_ = false;
  timer_.cancel();
  refresh_timer_.cancel();
}

void Scheduler::Start(Fire fire, InRoom in_room) {
  fire_ = std::move(fire);
  in_room_ = std::move(in_room);
  Arm();
  if (shared_store_ != nullptr) ArmRefresh();
}

bool Scheduler::RunsHere(const Schedule& schedule) const {
  if (shared_store_ == nullptr || schedule.owner.kind != ConversationRef::Kind::kRoom ||
      !in_room_) {
    return true;
  }
  return in_room_(schedule.owner.address);
}

void Scheduler::Arm() {
  if (!fire_) return;
  absl::Time soonest = absl::InfiniteFuture();
  for (const auto& [id, schedule] : schedules_) {
    if (claiming_.contains(id) || !RunsHere(schedule)) continue;
    soonest = std::min(soonest, schedule.next);
  }
  if (soonest != absl::InfiniteFuture()) soonest = std::max(soonest, claims_paused_until_);
  const absl::Duration wait = std::clamp(soonest - clock_(), absl::ZeroDuration(), kMaxSleep);
  timer_.expires_after(absl::ToChronoMilliseconds(wait) + std::chrono::milliseconds(1));
  timer_.async_wait([this, alive = alive_](const asio::error_code& error) {
    if (error || !*alive) return;
    RunDue();
  });
}

void Scheduler::RunDue() {
  const absl::Time now = clock_();
  std::vector<int64_t> due;
  for (const auto& [id, schedule] : schedules_) {
    if (schedule.next <= now && !claiming_.contains(id) && RunsHere(schedule)) due.push_back(id);
  }
  if (now < claims_paused_until_) due.clear();
  std::sort(due.begin(), due.end(),
            [this](int64_t a, int64_t b) { return schedules_.at(a).next < schedules_.at(b).next; });
  for (int64_t id : due) {
    auto it = schedules_.find(id);
    if (it == schedules_.end()) continue;  // cancelled by an earlier fire
    Schedule& schedule = it->second;
    if (shared_store_ != nullptr) {
      Claim(schedule, now,
            schedule.recurrence.NextAfter(std::max(now, schedule.next), schedule.created,
                                          ZoneOrUtc(schedule.zone)));
      continue;
    }
    schedule.last_run = now;
    ++schedule.runs;
    const Schedule fired = schedule;
    schedule.next = schedule.recurrence.NextAfter(std::max(now, fired.next), schedule.created,
                                                  ZoneOrUtc(schedule.zone));
    if (schedule.next == absl::InfiniteFuture()) {
      schedules_.erase(it);
      Forget(id);
    } else {
      Persist(schedule);
    }
    if (fire_) fire_(fired);
  }
  Arm();
}

absl::Status Scheduler::CheckInterval(const Recurrence& recurrence,
                                      const absl::TimeZone& zone) const {
  if (recurrence.kind() == Recurrence::Kind::kOnce) return absl::OkStatus();
  // The shortest gap among the next runs (a cron expression's gaps differ through a day).
  absl::Duration shortest = absl::InfiniteDuration();
  absl::Time at = clock_();
  absl::Time previous = recurrence.NextAfter(at, at, zone);
  for (int i = 0; i < 48 && previous != absl::InfiniteFuture(); ++i) {
    const absl::Time next = recurrence.NextAfter(previous, at, zone);
    if (next == absl::InfiniteFuture()) break;
    shortest = std::min(shortest, next - previous);
    previous = next;
  }
  if (shortest < options_.min_interval) {
    return absl::InvalidArgumentError(
        absl::StrCat("that runs more often than the shortest interval allowed, every ",
                     FormatInterval(options_.min_interval)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Schedule> Scheduler::Add(const ConversationRef& owner, std::string author,
                                        std::string prompt, std::string_view when,
                                        std::string_view zone_of) {
  if (owner.kind == ConversationRef::Kind::kApi) {
    return absl::InvalidArgumentError("schedules belong to a chat or a room");
  }
  if (prompt.empty()) return absl::InvalidArgumentError("the prompt is empty");
  if (prompt.size() > static_cast<size_t>(options_.max_prompt_bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the prompt is longer than ", options_.max_prompt_bytes, " bytes"));
  }
  const size_t owned = std::count_if(schedules_.begin(), schedules_.end(), [&](const auto& entry) {
    return entry.second.owner.kind == owner.kind && entry.second.owner.address == owner.address;
  });
  if (owned >= static_cast<size_t>(options_.max_per_owner)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("there are ", owned,
                     " schedules here already, the most allowed; cancel one "
                     "first (/schedules)"));
  }
  const std::string zone_name = TimeZoneName(zone_of);
  const absl::TimeZone zone = ZoneOrUtc(zone_name);
  const absl::Time now = clock_();
  absl::StatusOr<Recurrence> recurrence = ParseRecurrence(when, now, zone);
  if (!recurrence.ok()) return recurrence.status();
  if (absl::Status often = CheckInterval(*recurrence, zone); !often.ok()) return often;
  absl::StatusOr<int64_t> id = TakeId();
  if (!id.ok()) return id.status();
  changed_ids_.insert(*id);
  Schedule schedule{.id = *id,
                    .owner = ConversationRef{.kind = owner.kind, .address = owner.address},
                    .author = std::move(author),
                    .prompt = std::move(prompt),
                    .recurrence = *std::move(recurrence),
                    .zone = zone_name,
                    .created = now};
  schedule.next = schedule.recurrence.NextAfter(now, now, zone);
  Persist(schedule);
  const Schedule made = schedule;
  schedules_[schedule.id] = std::move(schedule);
  Arm();
  return made;
}

std::vector<Schedule> Scheduler::List(const ConversationRef* owner) const {
  std::vector<Schedule> listed;
  for (const auto& [id, schedule] : schedules_) {
    if (owner != nullptr &&
        (schedule.owner.kind != owner->kind || schedule.owner.address != owner->address)) {
      continue;
    }
    listed.push_back(schedule);
  }
  std::stable_sort(listed.begin(), listed.end(),
                   [](const Schedule& a, const Schedule& b) { return a.next < b.next; });
  return listed;
}

absl::Status Scheduler::Cancel(int64_t id, const ConversationRef* owner) {
  auto it = schedules_.find(id);
  if (it == schedules_.end() ||
      (owner != nullptr &&
       (it->second.owner.kind != owner->kind || it->second.owner.address != owner->address))) {
    return absl::NotFoundError(absl::StrCat("no schedule ", id, " here"));
  }
  if (owner != nullptr && !it->second.name.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("schedule ", id, " is the operator's ('",
                                                      it->second.name,
                                                      "'); only the config changes it"));
  }
  schedules_.erase(it);
  changed_ids_.insert(id);
  Forget(id);
  Arm();
  return absl::OkStatus();
}

std::string Scheduler::TimeZoneName(std::string_view jid) const {
  auto it = zones_.find(jid);
  return it == zones_.end() ? "UTC" : it->second;
}

absl::StatusOr<std::string> Scheduler::SetTimeZone(const std::string& jid, std::string_view name) {
  absl::StatusOr<absl::TimeZone> zone = base::LoadNamedTimeZone(name);
  if (!zone.ok()) return zone.status();
  std::string kept(name);
  zones_[jid] = kept;
  changed_zones_.insert(jid);
  asio::post(writes_, [store = store_, jid, kept] {
    if (absl::Status put = store->PutZone(jid, kept); !put.ok()) {
      LOG(ERROR) << "schedules: the time zone of " << jid << " could not be kept: " << put;
    }
  });
  return kept;
}

void Scheduler::Persist(const Schedule& schedule) {
  asio::post(writes_, [store = store_, schedule] {
    if (absl::Status put = store->Put(schedule); !put.ok()) {
      LOG(ERROR) << "schedules: schedule " << schedule.id << " could not be kept: " << put;
    }
  });
}

void Scheduler::Forget(int64_t id) {
  asio::post(writes_, [store = store_, id] {
    if (absl::Status removed = store->Remove(id); !removed.ok()) {
      LOG(ERROR) << "schedules: schedule " << id << " could not be removed: " << removed;
    }
  });
}

absl::StatusOr<int64_t> Scheduler::TakeId() {
  if (next_id_ >= ids_end_) {
    return absl::UnavailableError(
        "no schedule id is free just now (the database is out of reach); try again in a moment");
  }
  const int64_t id = next_id_++;
  if (shared_store_ != nullptr && ids_end_ - next_id_ < kIdBlock / 2 && !reserving_ids_) {
    reserving_ids_ = true;
    asio::post(writes_, [this, &io = io_, alive = alive_, store = shared_store_] {
      absl::StatusOr<int64_t> first = store->ReserveIds(kIdBlock);
      asio::post(io, [this, alive, first] {
        if (!*alive) return;
        reserving_ids_ = false;
        if (!first.ok()) {
          LOG(WARNING) << "schedules: no new block of ids: " << first.status();
          return;
        }
        next_id_ = *first;
        ids_end_ = *first + kIdBlock;
      });
    });
  }
  return id;
}

void Scheduler::Claim(const Schedule& seen, absl::Time now, absl::Time next) {
  claiming_.insert(seen.id);
  asio::post(writes_, [this, &io = io_, alive = alive_, store = shared_store_, seen, now, next] {
    absl::StatusOr<bool> claimed = store->ClaimRun(seen.id, seen.runs, now, next);
    asio::post(io, [this, alive, seen, now, next, claimed] {
      if (*alive) Claimed(seen, now, next, claimed);
    });
  });
}

void Scheduler::Claimed(const Schedule& seen, absl::Time now, absl::Time next,
                        const absl::StatusOr<bool>& claimed) {
  claiming_.erase(seen.id);
  if (!claimed.ok()) {
    LOG(WARNING) << "schedules: the run of schedule " << seen.id << " could not be claimed ("
                 << claimed.status() << "); tried again in " << kClaimRetry;
    claims_paused_until_ = clock_() + kClaimRetry;
    Arm();
    return;
  }
  // Claimed here or by another instance, the run is made: the schedule moves on either way
  // (the next refresh brings what the other instance stored), and a re-read begun before the
  // claim, which may still show the run as due, does not undo that.
  changed_ids_.insert(seen.id);
  auto it = schedules_.find(seen.id);
  if (it != schedules_.end() && it->second.runs == seen.runs) {
    if (next == absl::InfiniteFuture()) {
      schedules_.erase(it);
    } else {
      it->second.runs = seen.runs + 1;
      it->second.last_run = now;
      it->second.next = next;
    }
  }
  if (*claimed && fire_) {
    Schedule fired = seen;
    fired.runs = seen.runs + 1;
    fired.last_run = now;
    fire_(fired);
  }
  Arm();
}

void Scheduler::ArmRefresh() {
  refresh_timer_.expires_after(absl::ToChronoMilliseconds(options_.refresh_every));
  refresh_timer_.async_wait([this, alive = alive_](const asio::error_code& error) {
    if (!error && *alive) Refresh();
  });
}

void Scheduler::Refresh() {
  // The writes posted so far come before this load on the strand; what changes from now on
  // comes after it.
  changed_ids_.clear();
  changed_zones_.clear();
  asio::post(writes_, [this, &io = io_, alive = alive_, store = store_] {
    absl::StatusOr<std::vector<Schedule>> loaded = store->LoadAll();
    absl::StatusOr<std::map<std::string, std::string>> zones = store->LoadZones();
    asio::post(io, [this, alive, loaded = std::move(loaded), zones = std::move(zones)]() mutable {
      if (!*alive) return;
      if (!loaded.ok() || !zones.ok()) {
        LOG_EVERY_N(WARNING, 12) << "schedules: cannot re-read the shared schedules: "
                                 << (loaded.ok() ? zones.status() : loaded.status());
      } else {
        Merge(*std::move(loaded), *std::move(zones));
      }
      ArmRefresh();
    });
  });
}

void Scheduler::Merge(std::vector<Schedule> loaded, std::map<std::string, std::string> zones) {
  std::map<int64_t, Schedule> merged;
  for (Schedule& schedule : loaded) {
    if (changed_ids_.contains(schedule.id)) continue;  // cancelled here since: below if kept
    auto it = schedules_.find(schedule.id);
    // What this instance holds of a run it is claiming, or of one no instance has made since
    // (or that it made after the load), is kept: it may have moved a missed run, or be
    // waiting to retry a claim.
    if (it != schedules_.end() &&
        (claiming_.contains(schedule.id) || it->second.runs >= schedule.runs)) {
      merged.emplace(schedule.id, std::move(it->second));
    } else {
      merged.emplace(schedule.id, std::move(schedule));
    }
  }
  // Made here since the load began, or being claimed.
  for (auto& [id, schedule] : schedules_) {
    if ((changed_ids_.contains(id) || claiming_.contains(id)) && !merged.contains(id)) {
      merged.emplace(id, std::move(schedule));
    }
  }
  schedules_ = std::move(merged);
  for (const std::string& jid : changed_zones_) {
    if (auto it = zones_.find(jid); it != zones_.end()) zones[jid] = it->second;
  }
  zones_.clear();
  for (auto& [jid, zone] : zones) zones_.emplace(jid, std::move(zone));
  Arm();
}

}  // namespace herald::schedule
