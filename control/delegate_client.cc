#include "control/delegate_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "control/pem_file.h"

namespace herald::control {
namespace {

// More output than this from another agent is cut (the model could not read it anyway).
constexpr size_t kMaxOutputBytes = 256 * 1024;

void Append(std::string& output, const std::string& text) {
  if (output.size() >= kMaxOutputBytes) return;
  output.append(text, 0, kMaxOutputBytes - output.size());
}

// Reads one server-streamed call to its end and reports what it gathered on the I/O loop. It
// deletes itself when the call is done.
template <typename Request, typename Event>
class StreamReader : public grpc::ClientReadReactor<Event> {
 public:
  using Read =
      std::function<void(const Event& event, agent::DelegateResult& result, bool& finished)>;

  StreamReader(asio::io_context& io, Read read, agent::DelegateTransport::Done done)
      : io_(io), read_(std::move(read)), done_(std::move(done)) {}

  grpc::ClientContext& context() { return context_; }
  // Kept until the call is done, as gRPC asks of a request.
  Request& request() { return request_; }

  void Start() {
    this->StartRead(&event_);
    this->StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone follows
    read_(event_, result_, finished_);
    event_.Clear();
    this->StartRead(&event_);
  }

  void OnDone(const grpc::Status& status) override {
    absl::StatusOr<agent::DelegateResult> outcome = std::move(result_);
    if (!status.ok()) {
      outcome =
          absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
    } else if (!finished_) {
      outcome = absl::UnavailableError("the call ended before the run did");
    }
    asio::post(io_, [done = std::move(done_), outcome = std::move(outcome)]() mutable {
      done(std::move(outcome));
    });
    delete this;
  }

 private:
  asio::io_context& io_;
  Read read_;
  agent::DelegateTransport::Done done_;
  grpc::ClientContext context_;
  Request request_;
  Event event_;
  agent::DelegateResult result_;
  bool finished_ = false;
};

void Prepare(grpc::ClientContext& context, const agent::DelegateTarget& target,
             const agent::DelegateRequest& request) {
  context.AddMetadata("authorization", absl::StrCat("Bearer ", target.token));
  context.AddMetadata(kHopsMetadata, absl::StrCat(request.hops));
  context.set_deadline(absl::ToChronoTime(absl::Now() + request.timeout));
}

}  // namespace

absl::StatusOr<std::unique_ptr<DelegateClient>> DelegateClient::Create(
    asio::io_context& io, const std::vector<agent::DelegateTarget>& targets) {
  std::unique_ptr<DelegateClient> client(new DelegateClient(io));
  for (const agent::DelegateTarget& target : targets) {
    if (target.grpc.empty()) continue;
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
    if (!target.tls_ca_file.empty()) {
      absl::StatusOr<std::string> roots = ReadPemFile(
          target.tls_ca_file, absl::StrCat("[[delegate.agent]] ", target.name, ": tls_ca_file"));
      if (!roots.ok()) return roots.status();
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = *std::move(roots);
      credentials = grpc::SslCredentials(ssl);
    }
    std::shared_ptr<grpc::Channel> channel = grpc::CreateChannel(target.grpc, credentials);
    client->channels_[target.name] = Stubs{.skills = v1::SkillService::NewStub(channel),
                                           .sessions = v1::SessionService::NewStub(channel)};
  }
  return client;
}

void DelegateClient::Call(const agent::DelegateTarget& target, agent::DelegateRequest request,
                          Done done) {
  auto channel = channels_.find(target.name);
  if (channel == channels_.end()) {
    done(absl::InvalidArgumentError(absl::StrCat("agent '", target.name, "' has no gRPC address")));
    return;
  }
  if (!request.skill.empty()) {
    auto* reader = new StreamReader<v1::ExecuteSkillRequest, v1::ExecuteSkillEvent>(
        io_,
        [](const v1::ExecuteSkillEvent& event, agent::DelegateResult& result, bool& finished) {
          if (event.has_output()) Append(result.output, event.output().text());
          if (event.has_finished()) {
            finished = true;
            result.ok = event.finished().ok();
            result.failure = event.finished().error();
          }
        },
        std::move(done));
    Prepare(reader->context(), target, request);
    reader->request().set_name(request.skill);
    reader->request().set_arguments_json(request.arguments_json);
    channel->second.skills->async()->ExecuteSkill(&reader->context(), &reader->request(), reader);
    reader->Start();
    return;
  }
  auto* reader = new StreamReader<v1::ConverseRequest, v1::RunEvent>(
      io_,
      [](const v1::RunEvent& event, agent::DelegateResult& result, bool& finished) {
        if (event.has_completed()) {
          finished = true;
          result.ok = true;
          result.output.clear();
          Append(result.output, event.completed().text());
          result.model = event.completed().model();
          result.input_tokens = event.completed().input_tokens();
          result.output_tokens = event.completed().output_tokens();
        } else if (event.has_failed()) {
          finished = true;
          result.ok = false;
          result.failure = event.failed().message();
        }
      },
      std::move(done));
  Prepare(reader->context(), target, request);
  reader->request().set_conversation(request.conversation);
  reader->request().set_text(request.question);
  channel->second.sessions->async()->Converse(&reader->context(), &reader->request(), reader);
  reader->Start();
}

}  // namespace herald::control
