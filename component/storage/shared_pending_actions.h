// component/storage/shared_pending_actions.h
//
// SharedPendingActions lets every instance of a domain ([storage] backend = "postgresql",
// docs/scale-out.md) see the runs that wait for an answer on any of them, and carries an
// operator's answer given through one instance to the instance where the run waits:
//
//   - each action this instance's PendingActions opens is written to the table
//     pending_actions (what ListPendingActions shows; an action holds no secret), and removed
//     when it is finished; the rows of an instance gone for 20 s are removed by the others
//     (and written again by it, should it come back);
//   - Elsewhere lists the actions other live instances hold; Relay writes an answer to one of
//     them into pending_answers and reports the holder's verdict;
//   - the holder reads the answers meant for it every `poll`, resolves each through its
//     PendingActions exactly as an answer given to it directly, and writes the result back.
//
// Credential values never travel through these tables: ProvideCredentials stores them in the
// shared credential store (sealed) first, the answer names them, and the holder reads them
// from that store for the run.
//
// The pending-actions side and Relay's callback run on the I/O loop, database calls on the
// worker pool (the table's writes in order, on a strand); Elsewhere and FindElsewhere block
// (call them from a worker thread). Construct it after the EventLoop whose loop and pool it
// uses, and let the pool be joined before it ends.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "asio.hpp"
#include "component/base/postgres_database.h"
#include "skills/approvals/pending_actions.h"
#include "skills/credentials/credential_store.h"

namespace herald::storage {

class SharedPendingActions {
 public:
  struct Options {
    absl::Duration poll = absl::Milliseconds(500);  // how often the holder reads answers
    absl::Duration answer_wait = absl::Seconds(5);  // how long Relay waits for the holder
  };

  // An action another instance holds.
  struct Held {
    std::string instance;
    skills::PendingAction action;
  };

  // Applies the schema and starts mirroring `pending` (it sets its observer) and polling for
  // answers. `credentials` may be null (no key: nobody can provide credentials).
  static absl::StatusOr<std::unique_ptr<SharedPendingActions>> Open(
      asio::io_context& io, asio::thread_pool& workers, std::shared_ptr<base::PostgresDatabase> db,
      std::string instance, skills::PendingActions& pending, skills::CredentialStore* credentials,
      Options options);
  SharedPendingActions(const SharedPendingActions&) = delete;
  SharedPendingActions& operator=(const SharedPendingActions&) = delete;
  ~SharedPendingActions();

  // The actions other live instances hold, oldest first. Blocks.
  absl::StatusOr<std::vector<Held>> Elsewhere() const;
  // One of them, or nullopt. Blocks.
  absl::StatusOr<std::optional<Held>> FindElsewhere(std::string_view id) const;

  // Hands `resolution` (with credentials: their names only; the values are in the store) to
  // the instance holding `held` and calls `done` on the loop with its verdict, as its
  // PendingActions::Resolve gave it; Unavailable when it did not take the answer within
  // `answer_wait` (the answer is withdrawn then). On the loop.
  void Relay(const Held& held, const skills::ActionResolution& resolution,
             std::function<void(absl::Status)> done);

 private:
  struct Answer {
    int64_t id = 0;
    std::string action_id;
    skills::ActionResolution resolution;
    std::vector<std::string> credential_names;
  };

  SharedPendingActions(asio::io_context& io, asio::thread_pool& workers,
                       std::shared_ptr<base::PostgresDatabase> db, std::string instance,
                       skills::PendingActions& pending, skills::CredentialStore* credentials,
                       Options options);

  // The live others' actions, the query's `condition` appended ($3: `id`, when set).
  absl::StatusOr<std::vector<Held>> HeldElsewhere(std::string_view condition,
                                                  std::optional<std::string_view> id) const;
  void Opened(const skills::PendingAction& action);
  void Finished(const std::string& id);
  // Writes this instance's actions again (and removes any others of its): the others may have
  // taken it for gone while it could not reach the database. Every 20th poll.
  void Resync();
  void ArmPoll();
  void Poll();
  // Resolves one answer meant for this instance, then writes the verdict back.
  void Take(Answer answer);
  void Settle(int64_t answer_id, const absl::Status& verdict);
  void AwaitVerdict(int64_t answer_id, absl::Time deadline, std::string holder,
                    std::function<void(absl::Status)> done);

  asio::io_context& io_;
  asio::thread_pool& workers_;
  asio::strand<asio::thread_pool::executor_type> writes_;
  const std::shared_ptr<base::PostgresDatabase> db_;
  const std::string instance_;
  skills::PendingActions& pending_;
  skills::CredentialStore* const credentials_;
  const Options options_;
  asio::steady_timer poll_timer_;
  // I/O loop only.
  bool polling_ = false;
  int polls_ = 0;
  absl::flat_hash_set<int64_t> taking_;  // answers being resolved: a poll does not take them again
};

// Shares `pending` through the PostgreSQL of `stores` (see above); null when the stores have
// none (backend "sqlite"). Everything must outlive the result.
struct Stores;
absl::StatusOr<std::unique_ptr<SharedPendingActions>> SharePendingActions(
    asio::io_context& io, asio::thread_pool& workers, Stores& stores,
    skills::PendingActions& pending, skills::CredentialStore* credentials);

}  // namespace herald::storage
