// control/http/webhooks_out.cc
#include "control/http/webhooks_out.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/base/hex.h"
#include "control/http/webhook_signature.h"
#include "glog/logging.h"
#include "nlohmann/json.hpp"

namespace herald::control::http {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS dead_letters (
  id TEXT PRIMARY KEY,
  target TEXT NOT NULL,
  event_type TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  error TEXT NOT NULL,
  time_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS dead_letters_by_time ON dead_letters (time_us);
)sql";

std::string NewDeliveryId() {
  unsigned char bytes[8];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    const uint64_t now = static_cast<uint64_t>(absl::ToUnixNanos(absl::Now()));
    std::memcpy(bytes, &now, sizeof(bytes));
  }
  return absl::StrCat("d-", base::HexEncode(std::string_view(reinterpret_cast<char*>(bytes), 8)));
}

bool IsSuccess(const absl::StatusOr<providers::HttpResponse>& answer) {
  return answer.ok() && answer->status >= 200 && answer->status <= 299;
}

}  // namespace

std::string WebhookPayload(const events::Event& event, const std::string& id) {
  Json attributes = Json::object();
  for (const auto& [key, value] : event.attributes) attributes[key] = value;
  Json payload = {
      {"id", id},
      {"type", events::EventTypeName(event.type)},
      {"time", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", event.time, absl::UTCTimeZone())},
      {"sequence", event.sequence},
      {"conversation", event.conversation},
      {"jid", event.jid},
      {"run_id", event.run_id},
      {"summary", event.summary},
      {"attributes", std::move(attributes)}};
  return payload.dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::StatusOr<std::unique_ptr<WebhooksOut>> WebhooksOut::Start(
    asio::io_context& io, asio::thread_pool& workers, providers::HttpClient& http,
    events::EventBus& bus, std::vector<WebhookTarget> targets,
    const std::string& dead_letter_path) {
  absl::StatusOr<std::unique_ptr<base::SqliteDatabase>> db = base::OpenPrivateDatabase(
      dead_letter_path, {.what = "webhook dead letters", .schema = kSchema});
  if (!db.ok()) return db.status();
  std::unique_ptr<WebhooksOut> out(new WebhooksOut(io, workers, http, bus, *std::move(db)));
  events::EventTypeSet wanted;
  for (WebhookTarget& target : targets) {
    for (events::EventType type : target.events) wanted.Add(type);
    out->target_names_.push_back(target.name);
    out->targets_.push_back(std::make_unique<Target>(io, std::move(target)));
  }
  WebhooksOut* self = out.get();
  out->subscription_ =
      bus.Subscribe([self](const events::EventPtr& event) { self->OnEvent(event); }, wanted);
  return out;
}

WebhooksOut::WebhooksOut(asio::io_context& io, asio::thread_pool& workers,
                         providers::HttpClient& http, events::EventBus& bus,
                         std::unique_ptr<base::SqliteDatabase> db)
    : io_(io), workers_(workers), http_(http), bus_(bus) {
  base::MutexLock lock(&file_->mu);
  file_->db = std::move(db);
}

WebhooksOut::~WebhooksOut() {
  bus_.Unsubscribe(subscription_);
  *alive_ = false;
  for (const std::unique_ptr<Target>& target : targets_) {
    target->timer.cancel();
    if (target->in_flight.has_value()) http_.Cancel(*target->in_flight);
    for (Delivery& delivery : target->queue) {
      const DeadLetter letter{
          .id = delivery.id,
          .target = target->options.name,
          .event_type = delivery.event_type,
          .payload = std::move(delivery.payload),
          .attempts = delivery.attempts,
          .error = delivery.last_error.empty()
                       ? "not sent before Herald stopped"
                       : absl::StrCat("Herald stopped; last attempt: ", delivery.last_error),
          .time = absl::Now()};
      if (absl::Status stored = Store(*file_, letter); !stored.ok()) {
        LOG(ERROR) << "webhook " << target->options.name << ": delivery " << letter.id
                   << " lost at shutdown: " << stored;
      }
    }
  }
}

void WebhooksOut::OnEvent(const events::EventPtr& event) {
  // The bus calls this only for a type some target wants (Start subscribed with their union).
  asio::post(io_, [this, alive = alive_, event] {
    if (!*alive) return;
    for (const std::unique_ptr<Target>& target : targets_) {
      const auto& types = target->options.events;
      if (std::find(types.begin(), types.end(), event->type) == types.end()) continue;
      Delivery delivery{.id = NewDeliveryId(),
                        .event_type = std::string(events::EventTypeName(event->type))};
      delivery.payload = WebhookPayload(*event, delivery.id);
      Enqueue(*target, std::move(delivery));
    }
  });
}

void WebhooksOut::Enqueue(Target& target, Delivery delivery) {
  if (target.queue.size() >= target.options.max_queue) {
    GiveUp(target, std::move(delivery),
           absl::StrCat("the target's queue was full (", target.options.max_queue, ")"));
    return;
  }
  target.queue.push_back(std::move(delivery));
  if (!target.sending) SendFront(target);
}

void WebhooksOut::SendFront(Target& target) {
  if (target.queue.empty()) {
    target.sending = false;
    return;
  }
  target.sending = true;
  Delivery& delivery = target.queue.front();
  ++delivery.attempts;
  providers::HttpRequest request{.method = "POST", .url = target.options.url};
  request.headers = {
      {"content-type", "application/json"},
      {"user-agent", "Herald webhooks"},
      {"x-herald-event", delivery.event_type},
      {"x-herald-delivery", delivery.id},
      {"x-herald-signature", SignWebhook(target.options.secret, absl::Now(), delivery.payload)}};
  request.body = delivery.payload;
  request.connect_timeout = std::min(absl::Seconds(10), target.options.timeout);
  request.total_timeout = target.options.timeout;
  request.retry.max_retries = 0;  // the retries are this queue's, with its backoff
  request.max_body_bytes = 4096;  // the answer's body is not read for anything
  request.truncate_body = true;
  Target* raw = &target;
  target.in_flight =
      http_.Send(std::move(request),
                 [this, alive = alive_, raw](absl::StatusOr<providers::HttpResponse> answer) {
                   if (!*alive) return;
                   raw->in_flight.reset();
                   OnAnswer(*raw, std::move(answer));
                 });
}

void WebhooksOut::OnAnswer(Target& target, absl::StatusOr<providers::HttpResponse> answer) {
  if (target.queue.empty()) return;
  if (IsSuccess(answer)) {
    ++delivered_;
    target.backoff.Reset();
    target.queue.pop_front();
    SendFront(target);
    return;
  }
  ++failed_attempts_;
  Delivery& delivery = target.queue.front();
  delivery.last_error =
      answer.ok() ? absl::StrCat("HTTP ", answer->status) : std::string(answer.status().message());
  LOG(WARNING) << "webhook " << target.options.name << ": delivery " << delivery.id << " attempt "
               << delivery.attempts << " failed: " << delivery.last_error;
  if (delivery.attempts >= target.options.max_attempts) {
    std::string why = absl::StrCat(target.options.max_attempts,
                                   " attempts failed; the last: ", delivery.last_error);
    Delivery given_up = std::move(delivery);
    target.queue.pop_front();
    target.backoff.Reset();
    GiveUp(target, std::move(given_up), std::move(why));
    SendFront(target);
    return;
  }
  target.timer.expires_after(absl::ToChronoNanoseconds(target.backoff.Next()));
  Target* raw = &target;
  target.timer.async_wait([this, alive = alive_, raw](const asio::error_code& ec) {
    if (ec || !*alive) return;
    SendFront(*raw);
  });
}

void WebhooksOut::GiveUp(Target& target, Delivery delivery, std::string why) {
  ++dead_lettered_;
  LOG(WARNING) << "webhook " << target.options.name << ": delivery " << delivery.id
               << " kept as a dead letter: " << why;
  DeadLetter letter{.id = std::move(delivery.id),
                    .target = target.options.name,
                    .event_type = std::move(delivery.event_type),
                    .payload = std::move(delivery.payload),
                    .attempts = delivery.attempts,
                    .error = std::move(why),
                    .time = absl::Now()};
  asio::post(workers_, [file = file_, letter = std::move(letter)] {
    if (absl::Status stored = Store(*file, letter); !stored.ok()) {
      LOG(ERROR) << "webhook " << letter.target << ": dead letter " << letter.id
                 << " could not be kept: " << stored;
    }
  });
}

absl::Status WebhooksOut::Store(DeadLetterFile& file, const DeadLetter& letter) {
  base::MutexLock lock(&file.mu);
  absl::StatusOr<base::SqliteStatement> insert = file.db->Prepare(
      "INSERT OR REPLACE INTO dead_letters (id, target, event_type, payload, attempts, error, "
      "time_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!insert.ok()) return insert.status();
  insert->BindText(1, letter.id).IgnoreError();
  insert->BindText(2, letter.target).IgnoreError();
  insert->BindText(3, letter.event_type).IgnoreError();
  insert->BindText(4, letter.payload).IgnoreError();
  insert->BindInt64(5, letter.attempts).IgnoreError();
  insert->BindText(6, letter.error).IgnoreError();
  insert->BindInt64(7, absl::ToUnixMicros(letter.time)).IgnoreError();
  return insert->Run();
}

WebhooksOut::Target* WebhooksOut::FindTarget(const std::string& name) {
  for (const std::unique_ptr<Target>& target : targets_) {
    if (target->options.name == name) return target.get();
  }
  return nullptr;
}

void WebhooksOut::ListDeadLetters(size_t limit, ListDone done) {
  asio::post(workers_, [file = file_, limit, done = std::move(done)] {
    base::MutexLock lock(&file->mu);
    absl::StatusOr<base::SqliteStatement> select = file->db->Prepare(
        "SELECT id, target, event_type, payload, attempts, error, time_us FROM dead_letters "
        "ORDER BY time_us DESC, id LIMIT ?1");
    if (!select.ok()) {
      done(select.status());
      return;
    }
    select->BindInt64(1, static_cast<int64_t>(limit)).IgnoreError();
    std::vector<DeadLetter> letters;
    while (true) {
      absl::StatusOr<bool> row = select->Step();
      if (!row.ok()) {
        done(row.status());
        return;
      }
      if (!*row) break;
      letters.push_back({.id = select->ColumnText(0),
                         .target = select->ColumnText(1),
                         .event_type = select->ColumnText(2),
                         .payload = select->ColumnText(3),
                         .attempts = static_cast<int>(select->ColumnInt64(4)),
                         .error = select->ColumnText(5),
                         .time = absl::FromUnixMicros(select->ColumnInt64(6))});
    }
    done(std::move(letters));
  });
}

void WebhooksOut::Replay(const std::string& id, ReplayDone done) {
  // Only the loop's part touches this, after checking `alive` there.
  asio::post(workers_, [this, &io = io_, file = file_, names = target_names_, alive = alive_, id,
                        done = std::move(done)]() mutable {
    std::optional<DeadLetter> letter;
    absl::Status status = absl::OkStatus();
    {
      base::MutexLock lock(&file->mu);
      absl::StatusOr<base::SqliteStatement> select =
          file->db->Prepare("SELECT target, event_type, payload FROM dead_letters WHERE id = ?1");
      if (!select.ok()) {
        status = select.status();
      } else {
        select->BindText(1, id).IgnoreError();
        absl::StatusOr<bool> row = select->Step();
        if (!row.ok()) {
          status = row.status();
        } else if (!*row) {
          status = absl::NotFoundError(absl::StrCat("no dead letter ", id));
        } else {
          letter = DeadLetter{.id = id,
                              .target = select->ColumnText(0),
                              .event_type = select->ColumnText(1),
                              .payload = select->ColumnText(2)};
        }
      }
      if (letter.has_value() &&
          std::find(names.begin(), names.end(), letter->target) == names.end()) {
        status = absl::FailedPreconditionError(absl::StrCat(
            "dead letter ", id, " is for ", letter->target, ", which is no longer configured"));
        letter.reset();
      }
      if (letter.has_value()) {
        absl::StatusOr<base::SqliteStatement> remove =
            file->db->Prepare("DELETE FROM dead_letters WHERE id = ?1");
        if (remove.ok()) {
          remove->BindText(1, id).IgnoreError();
          status = remove->Run();
        } else {
          status = remove.status();
        }
        if (!status.ok()) letter.reset();
      }
    }
    asio::post(
        io, [this, alive, letter = std::move(letter), status, done = std::move(done)]() mutable {
          if (!*alive) return;
          if (letter.has_value()) {
            Enqueue(*FindTarget(letter->target), Delivery{.id = letter->id,
                                                          .event_type = letter->event_type,
                                                          .payload = std::move(letter->payload)});
          }
          done(status);
        });
  });
}

}  // namespace herald::control::http
