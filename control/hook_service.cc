#include "control/hook_service.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "control/auth.h"
#include "glog/logging.h"

namespace herald::control {
namespace {

constexpr uint32_t kDefaultTimeoutMs = 2000;
constexpr uint32_t kMinTimeoutMs = 50;
constexpr uint32_t kMaxTimeoutMs = 30000;

bool IsHookName(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// The registration as TurnHooks takes it, or why it cannot be.
absl::StatusOr<agent::HookOptions> OptionsFrom(const v1::HookRegistration& registration) {
  if (!IsHookName(registration.name())) {
    return absl::InvalidArgumentError("registration.name: 1 to 64 of A-Z a-z 0-9 . _ -");
  }
  agent::HookOptions options{.name = registration.name(),
                             .fail_closed = registration.fail_closed()};
  for (int point : registration.points()) {
    agent::HookPoint parsed;
    if (point == v1::HOOK_POINT_PRE_TURN) {
      parsed = agent::HookPoint::kPreTurn;
    } else if (point == v1::HOOK_POINT_REPLY) {
      parsed = agent::HookPoint::kReply;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("registration.points: ", point,
                                                     " is not HOOK_POINT_PRE_TURN or "
                                                     "HOOK_POINT_REPLY"));
    }
    if (std::find(options.points.begin(), options.points.end(), parsed) == options.points.end()) {
      options.points.push_back(parsed);
    }
  }
  if (options.points.empty()) {
    return absl::InvalidArgumentError("registration.points: name at least one point");
  }
  const uint32_t timeout_ms =
      registration.timeout_ms() == 0 ? kDefaultTimeoutMs : registration.timeout_ms();
  if (timeout_ms < kMinTimeoutMs || timeout_ms > kMaxTimeoutMs) {
    return absl::InvalidArgumentError(absl::StrCat("registration.timeout_ms: ", kMinTimeoutMs,
                                                   " to ", kMaxTimeoutMs,
                                                   " (0 = ", kDefaultTimeoutMs, ")"));
  }
  options.timeout = absl::Milliseconds(timeout_ms);
  return options;
}

agent::HookAnswer AnswerFrom(const v1::HookResult& result) {
  agent::HookAnswer answer{
      .text = result.text(), .context = result.context(), .reason = result.reason()};
  switch (result.verdict()) {
    case v1::HookResult::REWRITE:
      answer.verdict = agent::HookAnswer::Verdict::kRewrite;
      break;
    case v1::HookResult::REFUSE:
      answer.verdict = agent::HookAnswer::Verdict::kRefuse;
      break;
    default:
      answer.verdict = agent::HookAnswer::Verdict::kContinue;
      break;
  }
  return answer;
}

}  // namespace

// One program's stream. Reads are this reactor's own; writes go through the shared writer,
// which the hook's send function (on the I/O loop) and this reactor (on gRPC threads) use.
class HookService::Stream : public grpc::ServerBidiReactor<v1::HookMessage, v1::HookEvent> {
 public:
  Stream(HookService& service, std::string actor) : service_(service), actor_(std::move(actor)) {
    // Audited once, when gRPC is done with the call, with the status it ended with.
    writer_ = Writer::CreateFor(
        this, {.on_cancel = nullptr, .on_done = [this](const grpc::Status& status) {
                 service_.control_.Audit(actor_, methods::kAttachHooks, name_, status);
               }});
    id_ = service_.Remember(writer_);
    // What TurnHooks knows of this stream: its handle, set and read on the I/O loop only.
    link_ = std::make_shared<Link>();
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The program closed its side (or went away): the hook ends here.
      writer_->Finish(grpc::Status::OK);
      return;
    }
    if (!registered_) {
      if (!in_.has_registration()) {
        return FinishWith(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                       "the first message must be a registration"));
      }
      absl::StatusOr<agent::HookOptions> options = OptionsFrom(in_.registration());
      if (!options.ok()) {
        return FinishWith(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                       std::string(options.status().message())));
      }
      registered_ = true;
      name_ = options->name;
      std::weak_ptr<Writer> weak = writer_;
      auto send = [weak](const agent::HookCall& call) {
        std::shared_ptr<Writer> writer = weak.lock();
        if (writer == nullptr) return false;
        auto event = std::make_shared<v1::HookEvent>();
        v1::HookCall* out = event->mutable_call();
        out->set_call_id(call.id);
        out->set_point(call.point == agent::HookPoint::kPreTurn ? v1::HOOK_POINT_PRE_TURN
                                                                : v1::HOOK_POINT_REPLY);
        out->set_conversation(call.conversation);
        out->set_jid(call.jid);
        out->set_author(call.author);
        out->set_text(call.text);
        out->set_run_id(call.run_id);
        return writer->Push(std::move(event), kMaxQueued) == Writer::PushResult::kQueued;
      };
      service_.control_.OnLoop([hooks = &service_.hooks_, link = link_, writer = writer_,
                                options = *std::move(options), send = std::move(send)]() mutable {
        if (link->over) return;  // the stream ended before it could attach
        auto registered = std::make_shared<v1::HookEvent>();
        registered->mutable_registered()->set_name(options.name);
        link->handle = hooks->Attach(std::move(options), std::move(send));
        writer->Push(std::move(registered));
      });
    } else if (in_.has_result()) {
      service_.control_.OnLoop([hooks = &service_.hooks_, link = link_,
                                call_id = in_.result().call_id(),
                                answer = AnswerFrom(in_.result())]() mutable {
        if (link->handle != 0) hooks->Answer(link->handle, call_id, std::move(answer));
      });
    } else {
      return FinishWith(
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "after the registration, only results"));
    }
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override { writer_->OnWriteDone(ok); }
  void OnCancel() override { writer_->OnCancel(); }
  void OnDone() override {
    writer_->OnDone();
    service_.Forget(id_);
    service_.control_.OnLoop([hooks = &service_.hooks_, link = link_] {
      link->over = true;
      if (link->handle != 0) hooks->Detach(link->handle);
    });
    delete this;
  }

 private:
  struct Link {
    uint64_t handle = 0;
    bool over = false;
  };

  void FinishWith(grpc::Status status) { writer_->Finish(std::move(status)); }

  HookService& service_;
  const std::string actor_;
  std::shared_ptr<Writer> writer_;
  uint64_t id_ = 0;
  std::shared_ptr<Link> link_;
  v1::HookMessage in_;  // reads: one at a time, on gRPC threads
  bool registered_ = false;
  std::string name_;  // written before the hook attaches, read when the call is over
};

grpc::ServerBidiReactor<v1::HookMessage, v1::HookEvent>* HookService::Attach(
    grpc::CallbackServerContext* context) {
  absl::StatusOr<Caller> caller = control_.Authorize(context, methods::kAttachHooks);
  if (!caller.ok()) {
    // Refused before it started: finished at once, audited with its status.
    class Refused : public grpc::ServerBidiReactor<v1::HookMessage, v1::HookEvent> {
     public:
      explicit Refused(grpc::Status status) { Finish(std::move(status)); }
      void OnDone() override { delete this; }
    };
    const grpc::Status status = ToGrpcStatus(caller.status());
    control_.Audit(control_.ActorOf(context), methods::kAttachHooks, "", status);
    return new Refused(status);
  }
  return new Stream(*this, caller->name);
}

uint64_t HookService::Remember(std::weak_ptr<Writer> writer) {
  base::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  streams_[id] = std::move(writer);
  return id;
}

void HookService::Forget(uint64_t id) {
  base::MutexLock lock(&mu_);
  streams_.erase(id);
}

size_t HookService::attached() const {
  base::MutexLock lock(&mu_);
  return streams_.size();
}

void HookService::FinishAll(const grpc::Status& status) {
  std::vector<std::shared_ptr<Writer>> writers;
  {
    base::MutexLock lock(&mu_);
    for (auto& [id, weak] : streams_) {
      if (std::shared_ptr<Writer> writer = weak.lock()) writers.push_back(std::move(writer));
    }
  }
  for (const std::shared_ptr<Writer>& writer : writers) writer->Finish(status);
}

}  // namespace herald::control
