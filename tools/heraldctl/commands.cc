#include "tools/heraldctl/commands.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "component/base/version.h"
#include "tools/heraldctl/conversation_argument.h"
#include "tools/heraldctl/enum_names.h"
#include "tools/heraldctl/help_text.h"
#include "tools/heraldctl/output.h"
#include "tools/heraldctl/secret_input.h"
#include "tools/heraldctl/table.h"

namespace herald::heraldctl {
namespace {

constexpr int kMaxPageSize = 1000;
// Shorter tokens are not redacted from output: they would mangle ordinary words, and no
// server issues them.
constexpr size_t kMinRedactedTokenBytes = 8;
// Likewise for credential values: shorter ones are no secret worth mangling the output for.
constexpr size_t kMinRedactedSecretBytes = 4;

int PageSize(int64_t limit, int64_t collected) {
  if (limit == 0) return kMaxPageSize;
  return static_cast<int>(std::min<int64_t>(limit - collected, kMaxPageSize));
}

// A server that hands back the token it was given would make us loop forever.
grpc::Status RepeatedPageToken() {
  return grpc::Status(grpc::StatusCode::INTERNAL,
                      "the server returned the same page token twice; stopped paging");
}

// Moves a page's items to `all` until `all` holds `limit` of them (0: no limit).
template <typename Item>
void KeepUpTo(int64_t limit, google::protobuf::RepeatedPtrField<Item>* page,
              google::protobuf::RepeatedPtrField<Item>* all) {
  for (Item& item : *page) {
    if (limit > 0 && all->size() >= limit) break;
    *all->Add() = std::move(item);
  }
}

}  // namespace

CommandRunner::CommandRunner(std::shared_ptr<grpc::Channel> channel, const GlobalOptions& options,
                             int input, std::ostream& out, std::ostream& err, Interrupt* interrupt)
    : channel_(std::move(channel)),
      options_(options),
      input_(input),
      out_(out),
      err_(err),
      interrupt_(interrupt) {
  if (channel_ != nullptr) {
    sessions_ = v1::SessionService::NewStub(channel_);
    quota_ = v1::QuotaService::NewStub(channel_);
    skills_ = v1::SkillService::NewStub(channel_);
    admin_ = v1::AdminService::NewStub(channel_);
  }
}

ExitCode CommandRunner::Run(const Command& command) {
  return std::visit([this](const auto& alternative) { return Execute(alternative); }, command);
}

// --- Plumbing ------------------------------------------------------------------------------

std::unique_ptr<grpc::ClientContext> CommandRunner::NewContext(bool unary) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (unary) {
    context->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(options_.timeout));
  }
  if (!options_.connection.token.empty()) {
    context->AddMetadata("authorization", "Bearer " + options_.connection.token);
  }
  return context;
}

grpc::Status CommandRunner::Call(const std::function<grpc::Status(grpc::ClientContext*)>& call) {
  std::unique_ptr<grpc::ClientContext> context = NewContext(/*unary=*/true);
  Interrupt::Registration registration(interrupt_, context.get());
  return call(context.get());
}

template <typename Page, typename Request, typename Fetch, typename Take>
grpc::Status CommandRunner::FetchPages(Request request, int64_t limit, const Fetch& fetch,
                                       const Take& take) {
  int64_t kept = 0;
  std::string page_token;
  do {
    request.set_page_size(PageSize(limit, kept));
    request.set_page_token(page_token);
    Page page;
    grpc::Status status =
        Call([&](grpc::ClientContext* context) { return fetch(context, request, &page); });
    if (!status.ok()) return status;
    if (!page.next_page_token().empty() && page.next_page_token() == page_token) {
      return RepeatedPageToken();
    }
    page_token = page.next_page_token();
    kept = take(page);
  } while (!page_token.empty() && (limit == 0 || kept < limit));
  return grpc::Status::OK;
}

grpc::Status CommandRunner::AwaitConnection() {
  auto deadline = std::chrono::system_clock::now() + absl::ToChronoMilliseconds(options_.timeout);
  grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY && state != GRPC_CHANNEL_TRANSIENT_FAILURE &&
         state != GRPC_CHANNEL_SHUTDOWN) {
    if (!channel_->WaitForStateChange(state, deadline)) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "cannot connect within --timeout");
    }
    state = channel_->GetState(/*try_to_connect=*/true);
  }
  // On a failure the call itself reports the reason.
  return grpc::Status::OK;
}

ExitCode CommandRunner::Fail(const grpc::Status& status) {
  if (interrupt_ != nullptr && interrupt_->triggered() &&
      status.error_code() == grpc::StatusCode::CANCELLED) {
    Warn("heraldctl: interrupted\n");
    return ExitCode::kInterrupted;
  }
  std::string message = CleanForTerminal(status.error_message(), /*keep_line_breaks=*/false);
  Warn(absl::StrCat("heraldctl: ", GrpcStatusCodeName(status.error_code()), ": ",
                    message.empty() ? "(no message)" : message, "\n"));
  ExitCode code = ExitCodeForGrpcStatus(status.error_code());
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    Warn(absl::StrCat("heraldctl: is Herald running and listening on ",
                      CleanForTerminal(options_.connection.target, false),
                      "? (--target or HERALD_TARGET)\n"));
  } else if (code == ExitCode::kDenied && options_.connection.token.empty()) {
    Warn("heraldctl: no token was sent: use --token-file, HERALD_TOKEN or --token\n");
  }
  return code;
}

ExitCode CommandRunner::Succeed(const google::protobuf::Message& response,
                                const std::string& human) {
  Print(options_.json ? JsonLine(response) : human);
  return ExitCode::kOk;
}

std::string CommandRunner::Redacted(std::string_view text) const {
  std::vector<std::pair<absl::string_view, absl::string_view>> replacements;
  const std::string& token = options_.connection.token;
  if (token.size() >= kMinRedactedTokenBytes) replacements.emplace_back(token, "[token]");
  for (const std::string& secret : secrets_) {
    if (secret.size() >= kMinRedactedSecretBytes) replacements.emplace_back(secret, "[secret]");
  }
  if (replacements.empty()) return std::string(text);
  return absl::StrReplaceAll(AbslView(text), replacements);
}

void CommandRunner::Print(std::string_view text) {
  out_ << Redacted(text);
  out_.flush();
}

void CommandRunner::PrintStreamed(const std::string& text, bool* at_line_start) {
  std::string clean = CleanForTerminal(text, /*keep_line_breaks=*/true);
  if (clean.empty()) return;
  Print(clean);
  *at_line_start = clean.back() == '\n';
}

void CommandRunner::Warn(std::string_view text) {
  err_ << Redacted(text);
  err_.flush();
}

// --- Commands without a server -------------------------------------------------------------

ExitCode CommandRunner::Execute(const HelpCommand& command) {
  absl::StatusOr<std::string> text = HelpFor(command.topic);
  if (!text.ok()) {
    Warn(absl::StrCat("heraldctl: ", text.status().message(), "\n"));
    return ExitCode::kUsage;
  }
  Print(*text);
  return ExitCode::kOk;
}

ExitCode CommandRunner::Execute(const VersionCommand&) {
  Print(absl::StrCat("heraldctl ", kVersion, "\n"));
  return ExitCode::kOk;
}

// --- SessionService ------------------------------------------------------------------------

ExitCode CommandRunner::Execute(const SessionsListCommand& command) {
  v1::ListSessionsRequest request;
  request.set_kind(command.kind);
  request.set_query(command.query);
  v1::ListSessionsResponse all;
  grpc::Status status = FetchPages<v1::ListSessionsResponse>(
      request, command.limit,
      [&](grpc::ClientContext* context, const v1::ListSessionsRequest& page_request,
          v1::ListSessionsResponse* page) {
        return sessions_->ListSessions(context, page_request, page);
      },
      [&](v1::ListSessionsResponse& page) {
        KeepUpTo(command.limit, page.mutable_conversations(), all.mutable_conversations());
        return all.conversations_size();
      });
  if (!status.ok()) return Fail(status);
  return Succeed(all, RenderSessions(all));
}

ExitCode CommandRunner::Execute(const SessionsHistoryCommand& command) {
  // Pages go back in time from the newest entry, each oldest first.
  v1::GetHistoryRequest request;
  *request.mutable_key() = command.conversation;
  std::vector<v1::GetHistoryResponse> pages;
  int64_t collected = 0;
  grpc::Status status = FetchPages<v1::GetHistoryResponse>(
      request, command.limit,
      [&](grpc::ClientContext* context, const v1::GetHistoryRequest& page_request,
          v1::GetHistoryResponse* page) {
        return sessions_->GetHistory(context, page_request, page);
      },
      [&](v1::GetHistoryResponse& page) {
        collected += page.entries_size();
        pages.push_back(std::move(page));
        return collected;
      });
  if (!status.ok()) return Fail(status);

  v1::GetHistoryResponse history;
  for (auto page = pages.rbegin(); page != pages.rend(); ++page) {
    for (v1::HistoryEntry& entry : *page->mutable_entries()) {
      *history.add_entries() = std::move(entry);
    }
  }
  if (command.limit > 0 && history.entries_size() > command.limit) {
    history.mutable_entries()->DeleteSubrange(0, history.entries_size() - command.limit);
  }
  return Succeed(history, RenderHistory(history));
}

ExitCode CommandRunner::Execute(const SessionsResetCommand& command) {
  v1::ResetSessionRequest request;
  *request.mutable_key() = command.conversation;
  v1::ResetSessionResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return sessions_->ResetSession(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderSessionReset(command.conversation, response));
}

ExitCode CommandRunner::Execute(const SessionsForgetCommand& command) {
  v1::ForgetConversationRequest request;
  *request.mutable_key() = command.conversation;
  v1::ForgetConversationResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return sessions_->ForgetConversation(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response,
                 absl::StrCat(CleanForTerminal(ConversationLabel(command.conversation), false),
                              ": forgotten\n"));
}

ExitCode CommandRunner::Execute(const SendCommand& command) {
  v1::SendMessageRequest request;
  request.set_to(command.to);
  request.set_body(command.text);
  v1::SendMessageResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return sessions_->SendMessage(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, absl::StrCat("sent to ", CleanForTerminal(command.to, false), "\n"));
}

ExitCode CommandRunner::Execute(const CancelCommand& command) {
  v1::CancelRequest request;
  *request.mutable_key() = command.conversation;
  v1::CancelResponse response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return sessions_->Cancel(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderCancel(command.conversation, response));
}

ExitCode CommandRunner::Execute(const ConverseCommand& command) {
  v1::ConverseRequest request;
  request.set_conversation(command.conversation);
  request.set_text(command.text);
  if (grpc::Status connected = AwaitConnection(); !connected.ok()) return Fail(connected);
  std::unique_ptr<grpc::ClientContext> context = NewContext(/*unary=*/false);
  Interrupt::Registration registration(interrupt_, context.get());
  std::unique_ptr<grpc::ClientReader<v1::RunEvent>> reader =
      sessions_->Converse(context.get(), request);

  bool streamed_text = false;
  bool at_line_start = true;  // nothing printed, or the last text ended a line
  std::optional<v1::RunCompleted> completed;
  std::optional<v1::RunFailed> failed;
  v1::RunEvent event;
  while (reader->Read(&event)) {
    if (event.has_completed()) completed = event.completed();
    if (event.has_failed()) failed = event.failed();
    if (options_.json) {
      Print(JsonLine(event));
      continue;
    }
    if (event.has_text_delta()) {
      PrintStreamed(event.text_delta().text(), &at_line_start);
      streamed_text = true;
    } else if (event.has_completed() && !streamed_text) {
      PrintStreamed(event.completed().text(), &at_line_start);
    } else if (std::string notice = RenderRunNotice(event); !notice.empty()) {
      // stdout carries the answer alone; a notice mid-line starts its own line on stderr.
      Warn(at_line_start ? notice : "\n" + notice);
    }
  }
  grpc::Status status = reader->Finish();
  if (!options_.json && !at_line_start) Print("\n");

  if (failed) {
    if (!options_.json) {
      Warn(absl::StrCat("heraldctl: run failed (", RunFailureKindWord(failed->kind()),
                        "): ", CleanForTerminal(failed->message(), false), "\n"));
    }
    return ExitCode::kNegativeResult;
  }
  if (!status.ok()) return Fail(status);
  if (!completed) {
    Warn("heraldctl: the run's stream ended without a result\n");
    return ExitCode::kServerError;
  }
  return ExitCode::kOk;
}

// --- AdminService, paged ------------------------------------------------------------------

ExitCode CommandRunner::Execute(const AuditLogCommand& command) {
  // Pages go back in time from the newest entry, each newest first: they join in order.
  v1::ListAuditEntriesRequest request;
  v1::ListAuditEntriesResponse all;
  grpc::Status status = FetchPages<v1::ListAuditEntriesResponse>(
      request, command.limit,
      [&](grpc::ClientContext* context, const v1::ListAuditEntriesRequest& page_request,
          v1::ListAuditEntriesResponse* page) {
        return admin_->ListAuditEntries(context, page_request, page);
      },
      [&](v1::ListAuditEntriesResponse& page) {
        KeepUpTo(command.limit, page.mutable_entries(), all.mutable_entries());
        return all.entries_size();
      });
  if (!status.ok()) return Fail(status);
  return Succeed(all, RenderAuditEntries(all));
}

// --- QuotaService --------------------------------------------------------------------------

ExitCode CommandRunner::Execute(const UsageCommand& command) {
  v1::GetUsageRequest request;
  request.set_jid(command.jid);
  request.set_model(command.model);
  request.set_window(command.window);
  v1::GetUsageResponse all;
  bool first = true;
  grpc::Status status = FetchPages<v1::GetUsageResponse>(
      request, command.limit,
      [&](grpc::ClientContext* context, const v1::GetUsageRequest& page_request,
          v1::GetUsageResponse* page) { return quota_->GetUsage(context, page_request, page); },
      [&](v1::GetUsageResponse& page) {
        if (first) {
          // Every page names the same window; keep the first's bounds.
          *all.mutable_window_start() = page.window_start();
          if (page.has_window_end()) *all.mutable_window_end() = page.window_end();
          first = false;
        }
        KeepUpTo(command.limit, page.mutable_rows(), all.mutable_rows());
        return all.rows_size();
      });
  if (!status.ok()) return Fail(status);
  return Succeed(all, RenderUsage(all, command.window));
}

ExitCode CommandRunner::Execute(const LimitsListCommand& command) {
  v1::ListLimitsRequest request;
  request.set_jid(command.jid);
  v1::ListLimitsResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return quota_->ListLimits(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderLimits(response));
}

ExitCode CommandRunner::Execute(const LimitsSetCommand& command) {
  v1::SetLimitRequest request;
  *request.mutable_limit() = command.limit;
  v1::SetLimitResponse response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return quota_->SetLimit(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderLimitSet(response.has_limit() ? response.limit() : command.limit));
}

ExitCode CommandRunner::Execute(const LimitsRemoveCommand& command) {
  v1::RemoveLimitRequest request;
  request.set_jid(command.jid);
  request.set_model(command.model);
  request.set_window(command.window);
  v1::RemoveLimitResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return quota_->RemoveLimit(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, "limit removed\n");
}

// --- SkillService --------------------------------------------------------------------------

ExitCode CommandRunner::Execute(const SkillsListCommand& command) {
  v1::ListSkillsRequest request;
  request.set_query(command.query);
  v1::ListSkillsResponse all;
  grpc::Status status = FetchPages<v1::ListSkillsResponse>(
      request, command.limit,
      [&](grpc::ClientContext* context, const v1::ListSkillsRequest& page_request,
          v1::ListSkillsResponse* page) {
        return skills_->ListSkills(context, page_request, page);
      },
      [&](v1::ListSkillsResponse& page) {
        KeepUpTo(command.limit, page.mutable_skills(), all.mutable_skills());
        return all.skills_size();
      });
  if (!status.ok()) return Fail(status);
  return Succeed(all, RenderSkills(all));
}

ExitCode CommandRunner::Execute(const SkillsRunCommand& command) {
  v1::ExecuteSkillRequest request;
  request.set_name(command.name);
  request.set_arguments_json(command.arguments_json);
  request.set_conversation(command.conversation);
  if (grpc::Status connected = AwaitConnection(); !connected.ok()) return Fail(connected);
  std::unique_ptr<grpc::ClientContext> context = NewContext(/*unary=*/false);
  Interrupt::Registration registration(interrupt_, context.get());
  std::unique_ptr<grpc::ClientReader<v1::ExecuteSkillEvent>> reader =
      skills_->ExecuteSkill(context.get(), request);

  bool at_line_start = true;
  std::optional<v1::SkillFinished> finished;
  v1::ExecuteSkillEvent event;
  while (reader->Read(&event)) {
    if (event.has_finished()) finished = event.finished();
    if (options_.json) {
      Print(JsonLine(event));
    } else if (event.has_output()) {
      PrintStreamed(event.output().text(), &at_line_start);
    }
  }
  grpc::Status status = reader->Finish();
  if (!options_.json && !at_line_start) Print("\n");
  if (finished && !finished->ok()) {
    if (!options_.json) {
      Warn(absl::StrCat("heraldctl: skill failed: ", CleanForTerminal(finished->error(), false),
                        "\n"));
    }
    return ExitCode::kNegativeResult;
  }
  if (!status.ok()) return Fail(status);
  if (!finished) {
    Warn("heraldctl: the skill's stream ended without a result\n");
    return ExitCode::kServerError;
  }
  return ExitCode::kOk;
}

ExitCode CommandRunner::Execute(const SkillsPendingCommand&) {
  v1::ListPendingActionsRequest request;
  v1::ListPendingActionsResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return skills_->ListPendingActions(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderPendingActions(response, absl::Now()));
}

ExitCode CommandRunner::Execute(const SkillsApproveCommand& command) {
  v1::ApproveRequest request;
  request.set_action_id(command.action_id);
  v1::ApproveResponse response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return skills_->Approve(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response,
                 absl::StrCat("approved ", CleanForTerminal(command.action_id, false), "\n"));
}

ExitCode CommandRunner::Execute(const SkillsChooseCommand& command) {
  v1::ChoosePlanRequest request;
  request.set_action_id(command.action_id);
  request.set_plan(command.plan);
  for (const auto& [step, text] : command.step_edits) (*request.mutable_step_edits())[step] = text;
  v1::ChoosePlanResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return skills_->ChoosePlan(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, absl::StrCat("chose plan ", command.plan, " of ",
                                        CleanForTerminal(command.action_id, false), "\n"));
}

ExitCode CommandRunner::Execute(const SkillsDenyCommand& command) {
  v1::DenyRequest request;
  request.set_action_id(command.action_id);
  request.set_reason(command.reason);
  v1::DenyResponse response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return skills_->Deny(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response,
                 absl::StrCat("denied ", CleanForTerminal(command.action_id, false), "\n"));
}

ExitCode CommandRunner::Execute(const SkillsCredentialsCommand& command) {
  v1::ProvideCredentialsRequest request;
  request.set_action_id(command.action_id);
  request.set_owner(command.owner);
  // Every copy of a value is wiped on the way out, whichever way that is.
  auto wipe = [&] {
    for (auto& [name, value] : *request.mutable_credentials()) WipeSecret(value);
    for (std::string& secret : secrets_) WipeSecret(secret);
    secrets_.clear();
  };
  SecretInput input(input_, err_, interrupt_);
  for (const std::string& name : command.names) {
    absl::StatusOr<std::string> value = input.Read(name);
    if (!value.ok()) {
      wipe();
      if (value.status().code() == absl::StatusCode::kCancelled) {
        Warn("heraldctl: interrupted\n");
        return ExitCode::kInterrupted;
      }
      Warn(absl::StrCat("heraldctl: ", value.status().message(), "\n"));
      return ExitCode::kUsage;
    }
    secrets_.push_back(*value);
    (*request.mutable_credentials())[name] = *value;
    WipeSecret(*value);
  }
  v1::ProvideCredentialsResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return skills_->ProvideCredentials(context, request, &response);
  });
  ExitCode code =
      status.ok()
          ? Succeed(response, RenderCredentialsProvided(command.action_id, command.owner, response))
          : Fail(status);
  wipe();
  return code;
}

}  // namespace herald::heraldctl
