#include "skills/external/external_skill.h"

#include <signal.h>
#include <string.h>

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/conversation_ref.h"
#include "glog/logging.h"
#include "skills/credentials/secret_redactor.h"
#include "skills/external/skill_protocol.h"

namespace herald::skills {
namespace {

constexpr size_t kLoggedErrorOutputBytes = 1024;
// What the model reads of a skill's own error.
constexpr size_t kMaxSkillErrorBytes = 4096;

// The streamed output of a run that was given credentials, redacted as one text: a value
// split between two output lines is held back until it is whole (then redacted) or the
// stream ends (Flush), instead of passing in two unredacted halves.
class RedactedStream {
 public:
  RedactedStream(const std::map<std::string, std::string>& secrets,
                 std::function<void(std::string_view)> forward)
      : redactor_(secrets), forward_(std::move(forward)) {}

  void set_parser(const SkillOutputParser* parser) { parser_ = parser; }

  void Text(std::string_view text) {
    std::string out = redactor_.Write(text);
    // The result's output is the last text: nothing is left to wait for.
    if (parser_ != nullptr && parser_->has_result()) out += redactor_.Finish();
    if (!out.empty()) forward_(out);
  }

  void Flush() {
    const std::string out = redactor_.Finish();
    if (!out.empty()) forward_(out);
  }

 private:
  SecretStreamRedactor redactor_;
  std::function<void(std::string_view)> forward_;
  const SkillOutputParser* parser_ = nullptr;  // owns this stream's callback; outlives it
};

std::string SignalName(int signal) {
  const char* abbreviation = ::sigabbrev_np(signal);
  return abbreviation != nullptr ? absl::StrCat("SIG", abbreviation) : absl::StrCat(signal);
}

}  // namespace

std::string DescribeConversation(const base::ConversationRef& conversation) {
  // A call outside any conversation has no address: the skill reads "".
  if (conversation.address.empty()) return "";
  return base::ConversationName(conversation);
}

std::optional<absl::Status> DescribeStoppedRun(std::string_view skill,
                                               const sandbox::SandboxResult& result,
                                               const sandbox::SandboxLimits& limits) {
  const std::string name = absl::StrCat("the skill '", AbslView(skill), "'");
  if (result.cancelled) return absl::CancelledError(absl::StrCat(name, " was cancelled"));
  if (result.timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        name, " was stopped: it ran longer than its time limit of ", limits.timeout_seconds, " s"));
  }
  if (result.output_truncated) {
    return absl::ResourceExhaustedError(absl::StrCat(
        name, " was stopped: its output passed the limit of ", limits.max_output_bytes, " bytes"));
  }
  if (result.signal == 0) return std::nullopt;
  if (result.signal == SIGXCPU ||
      (result.signal == SIGKILL && result.cpu_time >= absl::Seconds(limits.cpu_seconds))) {
    return absl::ResourceExhaustedError(absl::StrCat(name, " was stopped: it used more than its ",
                                                     limits.cpu_seconds, " s of CPU time"));
  }
  if (result.signal == SIGXFSZ) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, " was stopped: it wrote a file larger than its limit of ",
                     limits.max_file_mb, " MB"));
  }
  if (result.signal == SIGSYS) {
    return absl::PermissionDeniedError(
        absl::StrCat(name, " was stopped: it made a system call the sandbox forbids"));
  }
  return absl::InternalError(absl::StrCat(name, " crashed (", SignalName(result.signal), ")"));
}

ExternalSkill::ExternalSkill(SkillManifest manifest, sandbox::SandboxRunner& runner)
    : manifest_(std::move(manifest)),
      runner_(runner),
      spec_{.name = manifest_.name,
            .description = manifest_.description,
            .parameters = manifest_.parameters} {}

void ExternalSkill::Execute(const nlohmann::json& arguments, const SkillContext& context,
                            Done done) {
  Run(arguments, context, RunOptions{}, std::move(done));
}

std::shared_ptr<sandbox::RunHandle> ExternalSkill::Run(const nlohmann::json& arguments,
                                                       const SkillContext& context,
                                                       RunOptions options, Done done) {
  // The credentials in the environment never leave in what the program writes: not in its
  // output, its errors, nor the log lines about it.
  auto secrets = std::make_shared<const std::map<std::string, std::string>>(options.environment);
  std::shared_ptr<RedactedStream> stream;
  if (options.on_output && !secrets->empty()) {
    stream = std::make_shared<RedactedStream>(*secrets, std::move(options.on_output));
    options.on_output = [stream](std::string_view text) { stream->Text(text); };
  }
  sandbox::SandboxRequest request{
      .executable = manifest_.executable,
      .stdin_data =
          EncodeSkillInput(manifest_.name, arguments, DescribeConversation(context.conversation)),
      .environment = std::move(options.environment),
      .policy = manifest_.policy,
  };
  auto parser = std::make_shared<SkillOutputParser>(std::move(options.on_output));
  if (stream != nullptr) stream->set_parser(parser.get());
  const std::string& name = manifest_.name;
  const sandbox::SandboxLimits& limits = manifest_.policy.limits;
  return runner_.Run(
      std::move(request), [parser](std::string_view chunk) { parser->Feed(chunk); },
      [name, limits, parser, secrets, stream, log_id = context.conversation_id,
       outbox = context.files,
       done_unredacted = std::move(done)](absl::StatusOr<sandbox::SandboxResult> result) {
        auto done = [&](absl::StatusOr<std::string> outcome) {
          if (stream != nullptr) stream->Flush();  // what was held back, before the end
          if (secrets->empty()) return done_unredacted(std::move(outcome));
          if (outcome.ok()) return done_unredacted(RedactSecrets(*outcome, *secrets));
          done_unredacted(
              absl::Status(outcome.status().code(),
                           RedactSecrets(std::string(outcome.status().message()), *secrets)));
        };
        if (!result.ok()) {
          LOG(ERROR) << "conversation " << log_id << ": skill " << name
                     << " could not start: " << result.status();
          done(absl::UnavailableError(absl::StrCat("the skill '", name, "' could not be started")));
          return;
        }
        // Redacted before it is cut: a secret straddling the cut would keep its beginning.
        const std::string error_output =
            RedactThenCut(result->error_output, *secrets, kLoggedErrorOutputBytes,
                          result->error_output_truncated);
        VLOG(1) << "conversation " << log_id << ": skill " << name << " exit " << result->exit_code
                << " signal " << result->signal << " cpu " << result->cpu_time << " wall "
                << result->wall_time;
        if (std::optional<absl::Status> stopped = DescribeStoppedRun(name, *result, limits)) {
          LOG(WARNING) << "conversation " << log_id << ": " << stopped->message()
                       << (error_output.empty() ? "" : "; stderr: ") << error_output;
          done(*std::move(stopped));
          return;
        }
        absl::StatusOr<SkillReply> reply = parser->Finish();
        if (!reply.ok()) {
          LOG(WARNING) << "conversation " << log_id << ": skill " << name << " exit "
                       << result->exit_code << ": "
                       << RedactSecrets(std::string(reply.status().message()), *secrets)
                       << (error_output.empty() ? "" : "; stderr: ") << error_output;
          if (result->exit_code != 0 && !parser->has_result()) {
            done(absl::InternalError(absl::StrCat("the skill '", name, "' failed (exit status ",
                                                  result->exit_code, ") without a result")));
          } else {
            done(absl::InternalError(
                absl::StrCat("the skill '", name,
                             "' wrote output Herald could not read: ", reply.status().message())));
          }
          return;
        }
        if (!reply->ok) {
          const std::string error = RedactThenCut(reply->text, *secrets, kMaxSkillErrorBytes);
          LOG(INFO) << "conversation " << log_id << ": skill " << name
                    << " reported an error: " << error;
          done(absl::AbortedError(absl::StrCat("the skill '", name, "' failed: ", error)));
          return;
        }
        // Its files go to the person after the answer; the model reads which did. A run that
        // holds credentials sends none: its bytes cannot be checked for them.
        for (OutgoingFile& file : reply->files) {
          const std::string what =
              absl::StrCat("\n[file ", file.name, ", ", file.bytes->size(), " bytes: ");
          absl::Status kept =
              outbox == nullptr
                  ? absl::FailedPreconditionError("files cannot be sent in this conversation")
              : !secrets->empty()
                  ? absl::FailedPreconditionError("a run that holds credentials sends no files")
                  : outbox->Add(std::move(file));
          absl::StrAppend(&reply->text, what,
                          kept.ok() ? "sent to the user as a file after your answer]"
                                    : absl::StrCat("not sent: ", kept.message(), "]"));
        }
        done(std::move(reply->text));
      });
}

}  // namespace herald::skills
