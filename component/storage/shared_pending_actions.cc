#include "component/storage/shared_pending_actions.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "component/base/absl_string_view.h"
#include "component/storage/instance_registry.h"
#include "component/storage/stores.h"
#include "glog/logging.h"
#include "nlohmann/json.hpp"

namespace herald::storage {
namespace {

using base::PostgresResult;
using base::SqlParams;
using skills::ActionResolution;
using skills::PendingAction;
using Json = nlohmann::json;

// Version i + 1 of these tables is made by kMigrations[i] (base::ApplySchema).
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE pending_actions (
  id text PRIMARY KEY,         -- the action's id, as people type it
  instance text NOT NULL,      -- the instance whose run waits (herald_instances.id)
  action text NOT NULL,        -- the action as JSON (no secret is ever part of one)
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE pending_answers (
  id bigserial PRIMARY KEY,
  action_id text NOT NULL,
  instance text NOT NULL,      -- the holder, which takes it
  answer text NOT NULL,        -- outcome, by, reason, plan, step edits, credential names
  result_code integer,         -- the holder's verdict (absl::StatusCode), once it has one
  result_message text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pending_answers_waiting ON pending_answers (instance) WHERE result_code IS NULL;
)sql",
};

// Seen within InstanceRegistry::kAliveFor: the instance lives, its actions can be answered.
constexpr char kElsewhere[] = R"sql(
SELECT p.id, p.instance, p.action FROM pending_actions p
JOIN herald_instances i ON i.id = p.instance
WHERE p.instance <> $1 AND i.last_seen > now() - make_interval(secs => $2)
)sql";

constexpr char kPut[] = R"sql(
INSERT INTO pending_actions (id, instance, action) VALUES ($1, $2, $3)
ON CONFLICT (id) DO UPDATE SET instance = excluded.instance, action = excluded.action
)sql";

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string EncodeAction(const PendingAction& action) {
  Json credentials = Json::array();
  for (const skills::CredentialRequirement& c : action.credentials) {
    credentials.push_back(
        {{"name", c.name}, {"description", c.description}, {"where_to_get", c.where_to_get}});
  }
  return Dump({{"kind", static_cast<int>(action.kind)},
               {"conversation", action.conversation},
               {"chat_owner", action.chat_owner},
               {"credential_owner", action.credential_owner},
               {"run_id", action.run_id},
               {"skill", action.skill},
               {"arguments_json", action.arguments_json},
               {"plan_count", action.plan_count},
               {"description", action.description},
               {"credentials", std::move(credentials)},
               {"created", absl::ToUnixMicros(action.created)},
               {"expires", absl::ToUnixMicros(action.expires)}});
}

std::string Text(const Json& json, const char* key) {
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Number(const Json& json, const char* key) {
  auto it = json.find(key);
  return it != json.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// An action another instance wrote; nullopt for one that does not read as an action.
std::optional<PendingAction> DecodeAction(std::string_view id, std::string_view text) {
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  const int64_t kind = Number(json, "kind");
  if (kind < 0 || kind > static_cast<int>(PendingAction::Kind::kPlanChoice)) return std::nullopt;
  PendingAction action{.id = std::string(id),
                       .kind = static_cast<PendingAction::Kind>(kind),
                       .conversation = Text(json, "conversation"),
                       .chat_owner = Text(json, "chat_owner"),
                       .credential_owner = Text(json, "credential_owner"),
                       .run_id = Text(json, "run_id"),
                       .skill = Text(json, "skill"),
                       .arguments_json = Text(json, "arguments_json"),
                       .plan_count = static_cast<int>(Number(json, "plan_count")),
                       .description = Text(json, "description"),
                       .created = absl::FromUnixMicros(Number(json, "created")),
                       .expires = absl::FromUnixMicros(Number(json, "expires"))};
  if (auto it = json.find("credentials"); it != json.end() && it->is_array()) {
    for (const Json& c : *it) {
      if (!c.is_object()) continue;
      action.credentials.push_back({.name = Text(c, "name"),
                                    .description = Text(c, "description"),
                                    .where_to_get = Text(c, "where_to_get")});
    }
  }
  return action;
}

std::string EncodeAnswer(const ActionResolution& resolution) {
  Json edits = Json::object();
  for (const auto& [step, text] : resolution.step_edits) edits[absl::StrCat(step)] = text;
  Json names = Json::array();
  for (const auto& [name, value] : resolution.credentials) names.push_back(name);
  return Dump({{"outcome", static_cast<int>(resolution.outcome)},
               {"by", resolution.by},
               {"reason", resolution.reason},
               {"plan", resolution.plan},
               {"step_edits", std::move(edits)},
               {"credentials", std::move(names)}});
}

// An answer as another instance relayed it: only the outcomes an answer can have.
std::optional<std::pair<ActionResolution, std::vector<std::string>>> DecodeAnswer(
    std::string_view text) {
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  using Outcome = ActionResolution::Outcome;
  const auto outcome = static_cast<Outcome>(Number(json, "outcome"));
  if (outcome != Outcome::kApproved && outcome != Outcome::kDenied &&
      outcome != Outcome::kProvided && outcome != Outcome::kChosen) {
    return std::nullopt;
  }
  ActionResolution resolution{.outcome = outcome,
                              .by = Text(json, "by"),
                              .reason = Text(json, "reason"),
                              .plan = static_cast<int>(Number(json, "plan"))};
  if (auto it = json.find("step_edits"); it != json.end() && it->is_object()) {
    for (const auto& [step, text] : it->items()) {
      int number = 0;
      if (absl::SimpleAtoi(step, &number) && text.is_string()) {
        resolution.step_edits[number] = text.get<std::string>();
      }
    }
  }
  std::vector<std::string> names;
  if (auto it = json.find("credentials"); it != json.end() && it->is_array()) {
    for (const Json& name : *it) {
      if (name.is_string()) names.push_back(name.get<std::string>());
    }
  }
  return std::make_pair(std::move(resolution), std::move(names));
}

}  // namespace

SharedPendingActions::SharedPendingActions(asio::io_context& io, asio::thread_pool& workers,
                                           std::shared_ptr<base::PostgresDatabase> db,
                                           std::string instance, skills::PendingActions& pending,
                                           skills::CredentialStore* credentials, Options options)
    : io_(io),
      workers_(workers),
      writes_(asio::make_strand(workers.get_executor())),
      db_(std::move(db)),
      instance_(std::move(instance)),
      pending_(pending),
      credentials_(credentials),
      options_(options),
      poll_timer_(io) {}

SharedPendingActions::~SharedPendingActions() {
  pending_.SetObserver({});
  poll_timer_.cancel();
}

absl::StatusOr<std::unique_ptr<SharedPendingActions>> SharedPendingActions::Open(
    asio::io_context& io, asio::thread_pool& workers, std::shared_ptr<base::PostgresDatabase> db,
    std::string instance, skills::PendingActions& pending, skills::CredentialStore* credentials,
    Options options) {
  if (absl::Status s = base::ApplySchema(*db, "pending_actions", kMigrations); !s.ok()) return s;
  std::unique_ptr<SharedPendingActions> shared(new SharedPendingActions(
      io, workers, std::move(db), std::move(instance), pending, credentials, options));
  SharedPendingActions* self = shared.get();
  pending.SetObserver({.opened = [self](const PendingAction& action) { self->Opened(action); },
                       .finished = [self](const std::string& id) { self->Finished(id); }});
  asio::post(io, [self] { self->ArmPoll(); });
  return shared;
}

void SharedPendingActions::Opened(const PendingAction& action) {
  asio::post(writes_, [this, id = action.id, json = EncodeAction(action)] {
    absl::StatusOr<PostgresResult> put =
        db_->Exec(kPut, SqlParams().Text(id).Text(instance_).Text(json));
    if (!put.ok()) {
      LOG(WARNING) << "pending action " << id
                   << " is not shown to other instances: " << put.status().message();
    }
  });
}

void SharedPendingActions::Resync() {
  // Posted on the writes' strand after every write observed so far, and before any later one.
  Json ids = Json::array();
  std::vector<std::pair<std::string, std::string>> actions;
  for (const PendingAction& action : pending_.List()) {
    ids.push_back(action.id);
    actions.emplace_back(action.id, EncodeAction(action));
  }
  asio::post(writes_, [this, ids = Dump(ids), actions = std::move(actions)] {
    absl::StatusOr<PostgresResult> done = db_->Exec(
        "DELETE FROM pending_actions WHERE instance = $1 AND "
        "id NOT IN (SELECT jsonb_array_elements_text($2::jsonb))",
        SqlParams().Text(instance_).Text(ids));
    for (const auto& [id, json] : actions) {
      if (!done.ok()) break;
      done = db_->Exec(kPut, SqlParams().Text(id).Text(instance_).Text(json));
    }
    if (!done.ok()) LOG(WARNING) << "pending actions: resyncing: " << done.status().message();
  });
}

void SharedPendingActions::Finished(const std::string& id) {
  asio::post(writes_, [this, id] {
    absl::StatusOr<PostgresResult> gone =
        db_->Exec("DELETE FROM pending_actions WHERE id = $1 AND instance = $2",
                  SqlParams().Text(id).Text(instance_));
    if (!gone.ok()) {
      LOG(WARNING) << "pending action " << id
                   << " is still shown to other instances: " << gone.status().message();
    }
  });
}

absl::StatusOr<std::vector<SharedPendingActions::Held>> SharedPendingActions::Elsewhere() const {
  return HeldElsewhere(" ORDER BY p.created_at, p.id", std::nullopt);
}

absl::StatusOr<std::optional<SharedPendingActions::Held>> SharedPendingActions::FindElsewhere(
    std::string_view id) const {
  absl::StatusOr<std::vector<Held>> held = HeldElsewhere(" AND p.id = $3", id);
  if (!held.ok()) return held.status();
  if (held->empty()) return std::nullopt;
  return std::move(held->front());
}

absl::StatusOr<std::vector<SharedPendingActions::Held>> SharedPendingActions::HeldElsewhere(
    std::string_view condition, std::optional<std::string_view> id) const {
  SqlParams params;
  params.Text(instance_).Double(absl::ToDoubleSeconds(InstanceRegistry::kAliveFor));
  if (id.has_value()) params.Text(*id);
  absl::StatusOr<PostgresResult> rows =
      db_->Exec(absl::StrCat(kElsewhere, AbslView(condition)), params);
  if (!rows.ok()) return rows.status();
  std::vector<Held> held;
  for (int i = 0; i < rows->rows(); ++i) {
    std::optional<PendingAction> action = DecodeAction(rows->Text(i, 0), rows->Text(i, 2));
    if (action.has_value()) {
      held.push_back({.instance = std::string(rows->Text(i, 1)), .action = *std::move(action)});
    }
  }
  return held;
}

void SharedPendingActions::ArmPoll() {
  poll_timer_.expires_after(absl::ToChronoNanoseconds(options_.poll));
  poll_timer_.async_wait([this](const asio::error_code& error) {
    if (!error) Poll();
  });
}

void SharedPendingActions::Poll() {
  if (polling_) return;
  polling_ = true;
  const bool tidy = polls_++ % 20 == 0;
  if (tidy) Resync();
  asio::post(workers_, [this, tidy] {
    if (tidy) {
      // The actions of instances gone for good, and verdicts nobody collected.
      absl::StatusOr<PostgresResult> gone = db_->Exec(
          "DELETE FROM pending_actions p WHERE NOT EXISTS (SELECT 1 FROM herald_instances i "
          "WHERE i.id = p.instance AND i.last_seen > now() - make_interval(secs => $1))",
          SqlParams().Double(absl::ToDoubleSeconds(InstanceRegistry::kGoneFor)));
      if (gone.ok()) {
        gone = db_->Exec(
            "DELETE FROM pending_answers WHERE created_at < now() - interval '5 minutes'");
      }
      if (!gone.ok()) LOG(WARNING) << "pending actions: tidying: " << gone.status().message();
    }
    absl::StatusOr<PostgresResult> rows = db_->Exec(
        "SELECT id, action_id, answer FROM pending_answers "
        "WHERE instance = $1 AND result_code IS NULL ORDER BY id",
        SqlParams().Text(instance_));
    std::vector<Answer> answers;
    std::vector<int64_t> unreadable;
    if (rows.ok()) {
      for (int i = 0; i < rows->rows(); ++i) {
        auto decoded = DecodeAnswer(rows->Text(i, 2));
        if (!decoded.has_value()) {
          unreadable.push_back(rows->Int64(i, 0));
          continue;
        }
        answers.push_back({.id = rows->Int64(i, 0),
                           .action_id = std::string(rows->Text(i, 1)),
                           .resolution = std::move(decoded->first),
                           .credential_names = std::move(decoded->second)});
      }
    } else {
      LOG_EVERY_N(WARNING, 20) << "pending actions: reading answers: " << rows.status().message();
    }
    asio::post(io_, [this, answers = std::move(answers), unreadable]() mutable {
      for (int64_t id : unreadable) {
        Settle(id, absl::InvalidArgumentError("the answer could not be read"));
      }
      for (Answer& answer : answers) {
        if (taking_.insert(answer.id).second) Take(std::move(answer));
      }
      polling_ = false;
      ArmPoll();
    });
  });
}

void SharedPendingActions::Take(Answer answer) {
  const PendingAction* action = pending_.Find(answer.action_id);
  if (action == nullptr || answer.resolution.outcome != ActionResolution::Outcome::kProvided) {
    const int64_t id = answer.id;
    Settle(id, pending_.Resolve(answer.action_id, std::move(answer.resolution)));
    return;
  }
  // The values: from the shared store, where the relaying instance put them. The owner is
  // this instance's own record of the run's, not anything the answer says.
  if (credentials_ == nullptr) {
    Settle(answer.id, absl::FailedPreconditionError(
                          "the instance holding the run has no credential store to read from"));
    return;
  }
  asio::post(
      workers_, [this, owner = action->credential_owner, answer = std::move(answer)]() mutable {
        absl::StatusOr<std::map<std::string, std::string>> values =
            credentials_->Get(owner, answer.credential_names);
        asio::post(io_, [this, values = std::move(values), answer = std::move(answer)]() mutable {
          if (!values.ok()) {
            Settle(answer.id, values.status());
            return;
          }
          if (values->size() != answer.credential_names.size()) {
            Settle(answer.id,
                   absl::FailedPreconditionError("the credentials were not in the shared store"));
            return;
          }
          answer.resolution.credentials = *std::move(values);
          Settle(answer.id, pending_.Resolve(answer.action_id, std::move(answer.resolution)));
        });
      });
}

void SharedPendingActions::Settle(int64_t answer_id, const absl::Status& verdict) {
  asio::post(workers_, [this, answer_id, verdict] {
    absl::StatusOr<PostgresResult> written =
        db_->Exec("UPDATE pending_answers SET result_code = $2, result_message = $3 WHERE id = $1",
                  SqlParams()
                      .Int64(answer_id)
                      .Int64(static_cast<int64_t>(verdict.code()))
                      .Text(std::string(verdict.message())));
    if (!written.ok()) {
      LOG(WARNING) << "pending actions: the verdict on answer " << answer_id
                   << " was not written: " << written.status().message();
    }
    asio::post(io_, [this, answer_id] { taking_.erase(answer_id); });
  });
}

void SharedPendingActions::Relay(const Held& held, const ActionResolution& resolution,
                                 std::function<void(absl::Status)> done) {
  asio::post(workers_, [this, action_id = held.action.id, holder = held.instance,
                        answer = EncodeAnswer(resolution), done = std::move(done)]() mutable {
    absl::StatusOr<PostgresResult> row = db_->Exec(
        "INSERT INTO pending_answers (action_id, instance, answer) VALUES ($1, $2, $3) "
        "RETURNING id",
        SqlParams().Text(action_id).Text(holder).Text(answer));
    asio::post(io_, [this, row = std::move(row), holder = std::move(holder),
                     done = std::move(done)]() mutable {
      if (!row.ok()) {
        done(row.status());
        return;
      }
      AwaitVerdict(row->Int64(0, 0), absl::Now() + options_.answer_wait, std::move(holder),
                   std::move(done));
    });
  });
}

void SharedPendingActions::AwaitVerdict(int64_t answer_id, absl::Time deadline, std::string holder,
                                        std::function<void(absl::Status)> done) {
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(50));
  timer->async_wait([this, timer, answer_id, deadline, holder = std::move(holder),
                     done = std::move(done)](const asio::error_code& error) mutable {
    if (error) return;
    asio::post(workers_, [this, answer_id, deadline, holder = std::move(holder),
                          done = std::move(done)]() mutable {
      const bool late = absl::Now() >= deadline;
      if (late) {
        // Withdrawn unless the holder took it meanwhile (then its verdict is read below).
        absl::StatusOr<PostgresResult> withdrawn =
            db_->Exec("DELETE FROM pending_answers WHERE id = $1 AND result_code IS NULL",
                      SqlParams().Int64(answer_id));
        if (withdrawn.ok() && withdrawn->affected() > 0) {
          asio::post(io_, [holder, done = std::move(done)] {
            done(absl::UnavailableError(absl::StrCat(
                "instance ", holder, " holds the run and did not take the answer in time")));
          });
          return;
        }
      }
      absl::StatusOr<PostgresResult> row =
          db_->Exec("SELECT result_code, result_message FROM pending_answers WHERE id = $1",
                    SqlParams().Int64(answer_id));
      std::optional<absl::Status> verdict;
      if (!row.ok()) {
        verdict = row.status();
      } else if (row->rows() == 0) {
        verdict = absl::UnavailableError("the answer was withdrawn before it was taken");
      } else if (!row->IsNull(0, 0)) {
        verdict = absl::Status(static_cast<absl::StatusCode>(row->Int64(0, 0)),
                               AbslView(row->Text(0, 1)));
        db_->Exec("DELETE FROM pending_answers WHERE id = $1", SqlParams().Int64(answer_id))
            .IgnoreError();
      }
      asio::post(io_, [this, answer_id, deadline, holder = std::move(holder), verdict,
                       done = std::move(done)]() mutable {
        if (verdict.has_value()) {
          done(*verdict);
        } else {
          AwaitVerdict(answer_id, deadline, std::move(holder), std::move(done));
        }
      });
    });
  });
}

absl::StatusOr<std::unique_ptr<SharedPendingActions>> SharePendingActions(
    asio::io_context& io, asio::thread_pool& workers, Stores& stores,
    skills::PendingActions& pending, skills::CredentialStore* credentials) {
  if (stores.postgres == nullptr || stores.instances == nullptr) return nullptr;
  return SharedPendingActions::Open(io, workers, stores.postgres, stores.instances->id(), pending,
                                    credentials, {});
}

}  // namespace herald::storage
