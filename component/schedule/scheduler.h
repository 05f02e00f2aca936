// component/schedule/scheduler.h
//
// The Scheduler keeps every schedule in memory, persists each change to the ScheduleStore
// on one strand of the worker pool (in order, off the I/O loop), and runs a single timer on
// the I/O loop for the earliest next run. When a schedule is due it calls `fire` with it,
// then moves it to its next run (a one-off one is removed).
//
// People's schedules are bounded: at most `max_per_owner` per conversation, and a recurring
// one may not run more often than every `min_interval`. A run missed while Herald was down
// runs once at start (missed = run_once) or is skipped to the next time (skip).
//
// Operators' schedules ([[schedules.task]]) are stored under their name: a schedule the
// config still names, unchanged, keeps its next run across restarts; a changed one starts
// anew; one the config no longer names is removed. People cannot cancel them.
//
// With a shared store (options.postgres: several instances of one domain), every instance
// holds every schedule and re-reads them every `refresh_every`; ids come in blocks from the
// database; and a due run is claimed in the database (schedule_store.h, ClaimRun) before it
// fires, so one instance makes it. A room's schedules run only on the instance that is in the
// room (Start's `in_room`). A run that could not be claimed (the database out of reach) is tried
// again every few seconds, never fired unclaimed.
//
// Everything but Open runs on the I/O loop.
//
//   auto scheduler = Scheduler::Open(io, workers, options, configured, absl::Now);
//   (*scheduler)->Start([&](const Schedule& due) { agent.RunScheduled(due); });
//   absl::StatusOr<Schedule> made = (*scheduler)->Add(owner, "alice@example.org", prompt,
//                                                      "every 1d");
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/postgres_database.h"
#include "component/schedule/postgres_schedule_store.h"
#include "component/schedule/schedule.h"
#include "component/schedule/schedule_store.h"

namespace herald::schedule {

struct SchedulerOptions {
  std::string path;  // the SQLite file
  // Set ([storage] backend = "postgresql"): the schedules are in this database, shared by
  // every instance, and `path` is not used.
  std::shared_ptr<base::PostgresDatabase> postgres;
  absl::Duration refresh_every = absl::Seconds(5);  // with `postgres`
  int max_per_owner = 20;
  absl::Duration min_interval = absl::Minutes(5);
  bool run_missed = true;  // missed = "run_once" (true) or "skip"
  int max_prompt_bytes = 2000;
};

// An operator's schedule as the config names it.
struct ConfiguredSchedule {
  std::string name;
  base::ConversationRef owner;
  std::string prompt;
  std::string when;  // as ParseRecurrence reads it: "every 1d", "cron 0 9 * * MON"
  std::string zone = "UTC";
};

class Scheduler {
 public:
  using Fire = std::function<void(const Schedule&)>;
  using Clock = std::function<absl::Time()>;

  // Opens the store and loads it (before the loop runs: this blocks on the file), applies the
  // missed-run rule and the operator's schedules. InvalidArgument for a configured schedule
  // that does not parse (naming it).
  static absl::StatusOr<std::unique_ptr<Scheduler>> Open(
      asio::io_context& io, asio::thread_pool& workers, SchedulerOptions options,
      const std::vector<ConfiguredSchedule>& configured, Clock clock);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler();

  // Arms the timer; due schedules go to `fire` from now on.
  // With `postgres`: whether this instance is in `room` (a bare JID) now; asked each time a
  // room's schedule is looked at, so it may change. Unset: every room's schedules run here.
  using InRoom = std::function<bool(const std::string& room)>;
  void Start(Fire fire, InRoom in_room = nullptr);

  // Makes a schedule of `owner` (a chat or a room) by `author`, `when` read in the zone of
  // `zone_of` (a bare JID's /timezone; UTC when unset). InvalidArgument for a bad `when` or
  // prompt, or a recurring one more often than min_interval; ResourceExhausted past
  // max_per_owner.
  absl::StatusOr<Schedule> Add(const base::ConversationRef& owner, std::string author,
                               std::string prompt, std::string_view when, std::string_view zone_of);

  // The schedules of `owner` (all of them when null), soonest first.
  std::vector<Schedule> List(const base::ConversationRef* owner) const;
  // Removes schedule `id`; when `owner` is given it must be the schedule's. NotFound (also
  // for another's), FailedPrecondition for an operator's schedule unless `owner` is null.
  absl::Status Cancel(int64_t id, const base::ConversationRef* owner);

  // A person's time zone (/timezone): the IANA name, "UTC" when unset.
  std::string TimeZoneName(std::string_view jid) const;
  // Sets it (persisted); InvalidArgument for an unknown name. Returns the name kept.
  absl::StatusOr<std::string> SetTimeZone(const std::string& jid, std::string_view name);

  // Runs what is due now (the timer calls it; tests may too). With a shared store a run
  // fires once its claim is answered, later on the loop.
  void RunDue();

 private:
  Scheduler(asio::io_context& io, asio::thread_pool& workers, SchedulerOptions options,
            std::shared_ptr<ScheduleStore> store,
            std::shared_ptr<PostgresScheduleStore> shared_store, Clock clock);
  void Arm();
  void Persist(const Schedule& schedule);
  void Forget(int64_t id);
  absl::Status CheckInterval(const Recurrence& recurrence, const absl::TimeZone& zone) const;
  // With a shared store: whether this instance may make the schedule's runs.
  bool RunsHere(const Schedule& schedule) const;
  // The next id; Unavailable when a shared store's block is used up. Asks for the next block
  // when this one runs low.
  absl::StatusOr<int64_t> TakeId();
  // Claims the run after `seen`'s runs (made at `now`, next at `next`), and fires it if won.
  void Claim(const Schedule& seen, absl::Time now, absl::Time next);
  void Claimed(const Schedule& seen, absl::Time now, absl::Time next,
               const absl::StatusOr<bool>& claimed);
  // Re-reads a shared store every refresh_every and takes what other instances changed.
  void ArmRefresh();
  void Refresh();
  void Merge(std::vector<Schedule> loaded, std::map<std::string, std::string> zones);

  asio::io_context& io_;
  SchedulerOptions options_;
  std::shared_ptr<ScheduleStore> store_;
  // The same store when it is shared by several instances (ids in blocks, claimed runs); null
  // for this host's file.
  std::shared_ptr<PostgresScheduleStore> shared_store_;
  asio::strand<asio::thread_pool::executor_type> writes_;
  Clock clock_;
  Fire fire_;
  InRoom in_room_;
  asio::system_timer timer_;
  asio::system_timer refresh_timer_;       // a shared store's
  std::map<int64_t, Schedule> schedules_;  // by id
  std::map<std::string, std::string, std::less<>> zones_;
  int64_t next_id_ = 1;
  int64_t ids_end_ = INT64_MAX;  // a shared store's block is [next_id_, ids_end_)
  bool reserving_ids_ = false;
  // A shared store's: the runs being claimed (not due again until answered), when claims may
  // be tried again after the store failed, and the schedules and zones changed here since the
  // re-read in flight began (it does not hold those changes, so Merge keeps this instance's).
  std::set<int64_t> claiming_;
  absl::Time claims_paused_until_ = absl::InfinitePast();
  std::set<int64_t> changed_ids_;
  std::set<std::string, std::less<>> changed_zones_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace herald::schedule
