// tests/tools/heraldctl/fake_herald.h
//
// FakeHerald serves Herald's four control-plane services in process with canned answers, and
// records what each call received (the request and its `authorization` metadata), so that a
// heraldctl test can assert both what was sent and what was printed. It listens on a unix
// socket in a fresh directory under /tmp (short enough for sun_path), or on 127.0.0.1 with
// TLS; the destructor stops it and removes the directory.
//
//   FakeHerald herald;
//   v1::GetStatusResponse status;
//   status.set_version("9.9.9");
//   herald.Answer("GetStatus", status);
//   ...run heraldctl --target herald.target() status...
//   EXPECT_EQ(herald.Received("GetStatus").authorization, "Bearer secret");
//
// Method names are the RPC names ("ListSessions", "Converse"). A unary method answers its
// canned responses in order (the last one again when they run out); a streaming method writes
// all of them, then ends with the method's status — or, with HoldOpen, waits until the caller
// cancels.
//
// SkillService's pending actions are a small in-memory list instead: AddPending puts an action
// on it, ListPendingActions lists it, and Approve, Deny and ProvideCredentials resolve (and
// remove) an action as Herald does — NOT_FOUND when it is not pending, FAILED_PRECONDITION
// when its kind does not fit, INVALID_ARGUMENT for a bad request — unless Fail scripted a
// status. ProvideCredentials answers the names it stored; Received() has the values sent.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "component/base/mutex.h"
#include "google/protobuf/message.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/sync_stream.h"
#include "proto/herald/v1/skill.pb.h"

namespace herald::heraldctl::testing {

class FakeHerald {
 public:
  struct ReceivedCall {
    std::string method;
    std::string request;  // serialized; Request<T>() parses it
    std::optional<std::string> authorization;
    int authorization_count = 0;

    template <typename Message>
    Message As() const {
      Message message;
      message.ParseFromString(request);
      return message;
    }
  };

  // A plaintext server on a unix socket.
  FakeHerald();
  // A TLS server on 127.0.0.1 at a port picked by the kernel.
  explicit FakeHerald(const grpc::SslServerCredentialsOptions& tls);
  ~FakeHerald();

  FakeHerald(const FakeHerald&) = delete;
  FakeHerald& operator=(const FakeHerald&) = delete;

  // "unix:/tmp/heraldctl-XXXXXX/control.sock" or "127.0.0.1:PORT".
  const std::string& target() const { return target_; }
  // The temporary directory (for files a test writes, like a token file).
  const std::string& directory() const { return directory_; }

  // Adds a canned response (unary) or event (stream) for `method`.
  void Answer(const std::string& method, const google::protobuf::Message& message);
  // The status `method` ends with (after its stream events, if any).
  void Fail(const std::string& method, grpc::Status status);
  // A stream method: after its events, wait until the caller cancels. A unary method: answer
  // nothing until the caller gives up (its deadline passes).
  void HoldOpen(const std::string& method);
  // Blocks until a held method is holding.
  void AwaitHolding(const std::string& method);

  // The pending actions (see above).
  void AddPending(const v1::PendingAction& action);
  std::vector<v1::PendingAction> pending() const;

  std::vector<ReceivedCall> calls() const;
  // The index-th call of `method`; fails the test (and returns an empty call) if there is none.
  ReceivedCall Received(const std::string& method, size_t index = 0) const;
  size_t CallCount(const std::string& method) const;
  // Whether a held call of `method` saw its caller cancel, waiting up to 30 s for it (the
  // server notices a cancellation shortly after the client has moved on).
  bool SawCancellation(const std::string& method);

  // Used by the service implementations.
  grpc::Status Unary(const std::string& method, grpc::ServerContext* context,
                     const google::protobuf::Message& request, google::protobuf::Message* response);
  grpc::Status ListPending(grpc::ServerContext* context,
                           const v1::ListPendingActionsRequest& request,
                           v1::ListPendingActionsResponse* response);
  // Approve (`approve`) or Deny.
  grpc::Status Answer(const std::string& method, grpc::ServerContext* context,
                      const google::protobuf::Message& request, const std::string& action_id,
                      bool approve);
  grpc::Status Provide(grpc::ServerContext* context, const v1::ProvideCredentialsRequest& request,
                       v1::ProvideCredentialsResponse* response);
  template <typename Event>
  grpc::Status Stream(const std::string& method, grpc::ServerContext* context,
                      const google::protobuf::Message& request, grpc::ServerWriter<Event>* writer);

 private:
  struct Script {
    std::vector<std::unique_ptr<google::protobuf::Message>> answers;
    size_t next = 0;
    grpc::Status status;
    bool hold_open = false;
    bool holding = false;
    bool saw_cancellation = false;
  };

  void Start(std::shared_ptr<grpc::ServerCredentials> credentials, const std::string& address);
  void Record(const std::string& method, grpc::ServerContext* context,
              const google::protobuf::Message& request);
  // Waits until `context` is cancelled, marking the script as holding meanwhile.
  void Hold(const std::string& method, grpc::ServerContext* context);

  std::string directory_;
  std::string target_;
  class Services;
  std::unique_ptr<Services> services_;
  std::unique_ptr<grpc::Server> server_;

  // The test's thread scripts and reads; gRPC's threads serve the calls.
  mutable base::Mutex mu_;
  std::map<std::string, Script> scripts_ ABSL_GUARDED_BY(mu_);
  std::vector<ReceivedCall> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::PendingAction> pending_ ABSL_GUARDED_BY(mu_);
};

template <typename Event>
grpc::Status FakeHerald::Stream(const std::string& method, grpc::ServerContext* context,
                                const google::protobuf::Message& request,
                                grpc::ServerWriter<Event>* writer) {
  Record(method, context, request);
  std::vector<Event> events;
  grpc::Status status;
  bool hold_open = false;
  {
    base::MutexLock lock(&mu_);
    Script& script = scripts_[method];
    for (const auto& answer : script.answers) {
      Event event;
      event.CopyFrom(*answer);
      events.push_back(std::move(event));
    }
    status = script.status;
    hold_open = script.hold_open;
  }
  for (const Event& event : events) {
    if (!writer->Write(event)) return grpc::Status(grpc::StatusCode::CANCELLED, "reader gone");
  }
  if (hold_open) {
    Hold(method, context);
    return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the caller");
  }
  return status;
}

}  // namespace herald::heraldctl::testing
