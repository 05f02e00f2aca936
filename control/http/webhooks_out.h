// control/http/webhooks_out.h
//
// Webhooks out (C9; SPEC §11 `[[webhooks.out]]`): Herald tells other systems what happened —
// a run completed or failed, a run waits for a person, a limit was reached — by POSTing each
// event, as JSON, to the URLs that subscribed to its type:
//
//   [[webhooks.out]]
//   url = "https://ops.example.org/herald"
//   secret = "${OPS_WEBHOOK_SECRET}"
//   events = ["run_completed", "run_failed", "action_required", "limit_reached"]
//
//   POST /herald   X-Herald-Signature: t=...,v1=...   X-Herald-Event: run_completed
//                  X-Herald-Delivery: d-5f0c...
//   {"id": "d-5f0c...", "type": "run_completed", "time": "2026-11-26T21:00:00Z", ...}
//
// Signed as webhooks in are (webhook_signature.h), at each attempt. Each target has its own
// queue, bounded (`max_queue`), delivered in order one at a time; an attempt that fails (no
// connection, a timeout, anything but 2xx) is retried after 1 s, 2 s, 4 s ... (with jitter, at
// most a minute apart) up to `max_attempts`, then kept as a dead letter in SQLite — as is an
// event that finds its target's queue full, and what is still queued when Herald stops. Dead
// letters are listed (`heraldctl webhooks dead-letters`) and sent again on request (`heraldctl
// webhooks replay ID`): a replayed delivery keeps its id, so the receiver can tell it again.
//
// Threads: events arrive on any thread and hop to the I/O loop; sending is the HttpClient's on
// the loop; the dead-letter file is used on the worker pool, under a mutex.
//
//   auto out = WebhooksOut::Start(io, workers, http, bus, targets, "./data/webhooks.db");
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/backoff.h"
#include "component/base/mutex.h"
#include "component/base/sqlite_database.h"
#include "component/events/event_bus.h"
#include "providers/http/http_client.h"

namespace herald::control::http {

struct WebhookTarget {
  std::string name;  // names the target in dead letters and logs
  std::string url;
  std::string secret;
  std::vector<events::EventType> events;
  size_t max_queue = 1000;
  int max_attempts = 5;
  absl::Duration timeout = absl::Seconds(10);  // one attempt
  absl::Duration first_retry = absl::Seconds(1);
};

struct DeadLetter {
  std::string id;      // the delivery's id ("d-" and 16 hex digits)
  std::string target;  // WebhookTarget::name
  std::string event_type;
  std::string payload;  // the JSON body
  int attempts = 0;
  std::string error;  // the last attempt's, or why it was never sent
  absl::Time time;    // when it was given up
};

// The JSON body of `event` as delivery `id`.
std::string WebhookPayload(const events::Event& event, const std::string& id);

class WebhooksOut {
 public:
  // Opens (creating) the dead-letter file and subscribes to `bus`. Everything passed must
  // outlive the WebhooksOut. Blocks on the file: call before the loop runs, or from a worker.
  static absl::StatusOr<std::unique_ptr<WebhooksOut>> Start(asio::io_context& io,
                                                            asio::thread_pool& workers,
                                                            providers::HttpClient& http,
                                                            events::EventBus& bus,
                                                            std::vector<WebhookTarget> targets,
                                                            const std::string& dead_letter_path);
  // Unsubscribes, cancels what is in flight and keeps every delivery not yet made as a dead
  // letter. Call on the loop's thread with the loop stopped or about to be.
  ~WebhooksOut();

  using ListDone = std::function<void(absl::StatusOr<std::vector<DeadLetter>>)>;
  using ReplayDone = std::function<void(absl::Status)>;
  // The newest dead letters first, at most `limit`. `done` runs on the worker pool.
  void ListDeadLetters(size_t limit, ListDone done);
  // Takes dead letter `id` out of the file and queues it again for its target (NotFound for
  // an unknown id, FailedPrecondition when its target is no longer configured). `done` runs on
  // the I/O loop once it is queued, not delivered.
  void Replay(const std::string& id, ReplayDone done);

  // Deliveries made, attempts that failed, letters given up (I/O loop), for /metrics.
  uint64_t delivered() const { return delivered_; }
  uint64_t failed_attempts() const { return failed_attempts_; }
  uint64_t dead_lettered() const { return dead_lettered_; }

 private:
  struct Delivery {
    std::string id;
    std::string event_type;
    std::string payload;
    int attempts = 0;
    std::string last_error;
  };
  struct Target {
    Target(asio::io_context& io, WebhookTarget options)
        : options(std::move(options)),
          backoff(this->options.first_retry, absl::Minutes(1)),
          timer(io) {}
    WebhookTarget options;
    std::deque<Delivery> queue;
    bool sending = false;
    std::optional<providers::HttpClient::RequestId> in_flight;
    base::Backoff backoff;
    asio::steady_timer timer;
  };

  WebhooksOut(asio::io_context& io, asio::thread_pool& workers, providers::HttpClient& http,
              events::EventBus& bus, std::unique_ptr<base::SqliteDatabase> db);

  void OnEvent(const events::EventPtr& event);  // any thread
  void Enqueue(Target& target, Delivery delivery);
  void SendFront(Target& target);
  void OnAnswer(Target& target, absl::StatusOr<providers::HttpResponse> answer);
  void GiveUp(Target& target, Delivery delivery, std::string why);
  Target* FindTarget(const std::string& name);

  asio::io_context& io_;
  asio::thread_pool& workers_;
  providers::HttpClient& http_;
  events::EventBus& bus_;
  // The dead-letter file: used on the worker pool, and by the destructor; shared with the
  // jobs on the pool, which may outlive this.
  struct DeadLetterFile {
    base::Mutex mu;
    std::unique_ptr<base::SqliteDatabase> db ABSL_GUARDED_BY(mu);
  };
  static absl::Status Store(DeadLetterFile& file, const DeadLetter& letter);
  std::shared_ptr<DeadLetterFile> file_ = std::make_shared<DeadLetterFile>();
  std::vector<std::string> target_names_;  // as configured; never changes
  std::vector<std::unique_ptr<Target>> targets_;
  uint64_t subscription_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  uint64_t delivered_ = 0;
  uint64_t failed_attempts_ = 0;
  uint64_t dead_lettered_ = 0;
};

}  // namespace herald::control::http
