#include "component/agent/conversation.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "component/agent/attachments.h"
#include "component/agent/pending_answers.h"
#include "component/agent/plan_turn.h"
#include "component/agent/quota_gate.h"
#include "component/agent/registry_tools.h"
#include "component/agent/system_prompt.h"
#include "component/agent/tool_call.h"
#include "component/agent/turn_media.h"
#include "component/agent/turn_memory.h"
#include "component/agent/voice.h"
#include "glog/logging.h"
#include "skills/approvals/pending_actions.h"

namespace herald::agent {
namespace {

using base::ConversationRef;
using memory::MemoryEntry;
using providers::LlmMessage;
using providers::LlmRequest;
using providers::LlmResponse;

constexpr char kApology[] =
    "Sorry, I could not answer that just now. Please try again in a moment.";
// What a streamed answer that was cancelled ends with.
constexpr char kStoppedNote[] = "[stopped]";
// XEP-0444 marks on a room message Herald works on (👀), and on one it could not do (⚠️).
constexpr char kWorkingOnIt[] = "\xF0\x9F\x91\x80";
constexpr char kCouldNotDoIt[] = "\xE2\x9A\xA0\xEF\xB8\x8F";

// The session as the model's messages: user and assistant turns alternate, starting with
// the user (several providers require both). Tool and note entries stay in the files only.
std::vector<LlmMessage> ToMessages(const std::vector<MemoryEntry>& history, bool in_room) {
  std::vector<LlmMessage> messages;
  for (const MemoryEntry& entry : history) {
    LlmMessage::Role role;
    if (entry.role == "user") {
      role = LlmMessage::Role::kUser;
    } else if (entry.role == "assistant") {
      role = LlmMessage::Role::kAssistant;
    } else {
      continue;
    }
    std::string text = in_room && role == LlmMessage::Role::kUser
                           ? absl::StrCat(entry.author, ": ", entry.text)
                           : entry.text;
    if (messages.empty() && role != LlmMessage::Role::kUser) continue;
    if (!messages.empty() && messages.back().role == role) {
      absl::StrAppend(&messages.back().text, "\n\n", text);
    } else {
      messages.push_back(LlmMessage{.role = role, .text = std::move(text)});
    }
  }
  return messages;
}

void AppendUser(std::vector<LlmMessage>& messages, std::string text) {
  if (!messages.empty() && messages.back().role == LlmMessage::Role::kUser) {
    absl::StrAppend(&messages.back().text, "\n\n", text);
  } else {
    messages.push_back(LlmMessage{.role = LlmMessage::Role::kUser, .text = std::move(text)});
  }
}

std::string Abbreviate(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  return absl::StrCat(text.substr(0, limit), "…");
}

// A plan turn (plan_turn.h) for `task`, in a coroutine of its own so that its PlanTurn is not
// kept in every turn's frame (turn_memory.h says why).
asio::awaitable<PlanOutcome> RunPlan(
    RuntimeServices& services, const ToolCallTurn& tool_turn, RegistryTools& registry_tools,
    const std::vector<providers::ToolSpec>& tools, const std::string& task, const LlmRequest& base,
    const CallModel& call_model, const std::function<void(std::string)>& say,
    const providers::LlmProvider::OnText& on_text, int max_rounds) {
  PlanTurn plan{.services = services,
                .tool_turn = tool_turn,
                .registry_tools = registry_tools,
                .tools = registry_tools.Offered(tools),
                .task = task,
                .base = base,
                .call_model = call_model,
                .say = say,
                .on_answer_text = on_text,
                .max_tool_rounds = max_rounds};
  co_return co_await RunPlanTurn(plan);
}

// The answer as the reply hooks left it; withheld, the hook's reason in its place (TurnHooks
// logs which hook). A coroutine of its own, like RunPlan.
asio::awaitable<std::string> PassReplyHooks(TurnHooks& hooks, const std::string& conversation,
                                            const ConversationRef& ref, const std::string& author,
                                            std::string answer, const std::string& run_id) {
  HookCall call{.conversation = conversation,
                .jid = ref.kind == ConversationRef::Kind::kApi ? std::string() : ref.address,
                .author = author,
                .text = std::move(answer),
                .run_id = run_id};
  HookOutcome checked = co_await hooks.Run(HookPoint::kReply, std::move(call));
  co_return checked.refused ? std::move(checked.reason) : std::move(checked.text);
}

// The model's request for a turn: the system prompt, the session, then the message with what
// its attachments give the model (their pictures are moved out of `attached`). It takes the
// turn's memory, which the request replaces: the session is not kept twice while the model
// answers.
LlmRequest TurnRequest(TurnMemory memory, const PromptOptions& prompt_options,
                       const IncomingMessage& message, ReadAttachments& attached) {
  const bool room = prompt_options.in_room;
  LlmRequest request;
  request.system = BuildSystemPrompt(memory.prompt, prompt_options);
  // Notes the operator's pre_turn hooks added (turn_hooks.h): the operator's, so trusted.
  if (!message.hook_context.empty()) {
    absl::StrAppend(&request.system, "\n\nNotes from the operator's systems for this message:\n",
                    message.hook_context);
  }
  request.messages = ToMessages(memory.history, room);
  const std::string said = WithAttachments(message.body, attached.for_model);
  AppendUser(request.messages, room ? absl::StrCat(message.author, ": ", said) : said);
  request.messages.back().images = std::move(attached.images);
  // Carried-over context was written from past messages (in a room, anyone's): it reaches
  // the model as quoted notes ahead of the conversation, never as instructions.
  if (!memory.prompt.context.empty()) {
    request.messages.front().text = absl::StrCat(CarriedOverNotes(memory.prompt.context), "\n\n",
                                                 request.messages.front().text);
  }
  return request;
}

RunEvent Failed(RunEvent::Failure failure, std::string text) {
  return RunEvent{.kind = RunEvent::Kind::kFailed, .text = std::move(text), .failure = failure};
}

}  // namespace

Conversation::Conversation(RuntimeServices& services, ConversationRef ref, std::string id)
    : services_(services),
      ref_(std::move(ref)),
      id_(std::move(id)),
      files_(asio::make_strand(services.workers.get_executor())) {}

bool Conversation::Enqueue(IncomingMessage&& message) {
  const size_t limit = static_cast<size_t>(std::max(1, services_.options.mailbox_limit));
  if (mailbox_.size() >= limit) return false;
  mailbox_.push_back(std::move(message));
  if (!running_) {
    running_ = true;
    asio::co_spawn(services_.io, Drain(), asio::detached);
  }
  return true;
}

bool Conversation::Cancel() {
  const bool anything = running_ || !mailbox_.empty();
  ++generation_;
  // A person who saw the answer being written sees that it stopped; a room, that Herald no
  // longer works on the message it marked.
  if (answer_ != nullptr) answer_->Stop(kStoppedNote);
  if (room_mark_.has_value()) {
    room_mark_->reactions.clear();
    services_.act(*std::move(room_mark_));
    room_mark_.reset();
  }
  if (running_) {
    Publish(events::EventType::kRunFailed, running_run_id_,
            absl::StrCat("turn ", running_run_id_, " cancelled"), {{"error", "cancelled"}});
  }
  // Whoever follows a cancelled run hears it ended; the turn itself stays silent from now on.
  if (running_sink_) {
    RunSink sink = std::move(running_sink_);
    running_sink_ = nullptr;
    RunEvent event = Failed(RunEvent::Failure::kCancelled, "cancelled");
    event.run_id = running_run_id_;
    event.time = services_.clock();
    sink(event);
  }
  for (IncomingMessage& queued : mailbox_) {
    if (!queued.sink) continue;
    RunEvent event = Failed(RunEvent::Failure::kCancelled, "cancelled");
    event.run_id = queued.run_id;
    event.time = services_.clock();
    queued.sink(event);
  }
  mailbox_.clear();
  // A turn waiting for an approval or credentials stops waiting.
  if (services_.pending_actions != nullptr) {
    services_.pending_actions->CancelConversation(base::ConversationName(ref_), "cancel");
  }
  return anything;
}

asio::awaitable<void> Conversation::Drain() {
  while (!mailbox_.empty()) {
    IncomingMessage message = std::move(mailbox_.front());
    mailbox_.pop_front();
    const uint64_t generation = generation_;
    const bool go_on = co_await PassPreTurnHooks(message);
    if (go_on && generation == generation_) co_await RunTurn(message, generation);
    running_sink_ = nullptr;
    answer_ = nullptr;
  }
  running_ = false;
}

void Conversation::Publish(events::EventType type, const std::string& run_id, std::string summary,
                           std::vector<std::pair<std::string, std::string>> attributes) {
  if (services_.events == nullptr) return;
  services_.events->Publish(
      events::Event{.type = type,
                    .time = services_.clock(),
                    .conversation = base::ConversationName(ref_),
                    .jid = ref_.kind == ConversationRef::Kind::kApi ? std::string() : ref_.address,
                    .run_id = run_id,
                    .summary = std::move(summary),
                    .attributes = std::move(attributes)});
}

asio::awaitable<void> Conversation::RunTurn(const IncomingMessage& message, uint64_t generation) {
  const std::string turn_id = absl::StrCat(id_, "/", ++next_turn_);
  const std::string run_id = message.run_id.empty() ? turn_id : message.run_id;
  const AgentOptions& options = services_.options;
  const absl::Time started = services_.clock();
  ConversationRef ref = ref_;
  ref.thread = message.thread;
  const bool room = in_room();
  // Chat states only where a person reads the answer in a 1:1 chat.
  const bool chat_states = !room && !message.sink;
  const std::string payer = PayerOf(ref_);
  const std::string conversation_name = base::ConversationName(ref_);
  auto cancelled = [&] { return generation != generation_; };
  running_sink_ = message.sink;
  running_run_id_ = run_id;
  // Sends an event to the program following this turn, unless the turn was cancelled.
  auto emit = [&](RunEvent event) {
    if (cancelled() || !running_sink_) return;
    event.run_id = run_id;
    event.time = services_.clock();
    running_sink_(event);
  };
  // In a room, the message Herald works on is marked (XEP-0444): 👀 while it works, ⚠️ when
  // it could not answer, nothing once it has.
  auto mark = [&](std::vector<std::string> reactions) {
    if (!room || message.sink || message.id.empty() || !options.room_reactions) return;
    xmpp::SendReactions marked{.to = message.reply_to,
                               .id = message.id,
                               .reactions = std::move(reactions),
                               .type = "groupchat",
                               .from = message.own};
    if (marked.reactions == std::vector<std::string>{kWorkingOnIt}) {
      room_mark_ = marked;
    } else {
      room_mark_.reset();
    }
    services_.act(std::move(marked));
  };
  // The run's trace; a turn cancelled midway ends it as cancelled when the frame goes.
  trace::Span traced = trace::Span::Root(services_.tracer, run_id, conversation_name, "turn");
  auto fail = [&](const absl::Status& status, RunEvent::Failure failure) {
    LOG(WARNING) << "conversation " << turn_id << ": " << status;
    traced.End(status);
    if (cancelled()) return;
    mark({kCouldNotDoIt});
    Publish(events::EventType::kRunFailed, run_id, absl::StrCat("turn ", turn_id, " failed"),
            {{"error", std::string(status.message())}});
    emit(Failed(failure, absl::StrCat(kApology, " (reference ", turn_id, ")")));
    if (chat_states) {
      services_.act(
          xmpp::SendChatState{.to = message.reply_to, .state = "paused", .from = message.own});
    }
    const std::string apology = absl::StrCat(kApology, " (reference ", turn_id, ")");
    // A half-written answer says where it broke off.
    if (answer_ != nullptr && answer_->started()) {
      answer_->Stop(apology);
    } else {
      Reply(message, apology, /*active=*/false);
    }
  };
  Publish(events::EventType::kRunStarted, run_id, absl::StrCat("turn ", turn_id, " started"), {});
  emit(RunEvent{.kind = RunEvent::Kind::kStarted});
  mark({kWorkingOnIt});

  if (chat_states) {
    services_.act(
        xmpp::SendChatState{.to = message.reply_to, .state = "composing", .from = message.own});
  }

  // The files the message links (attachments.h), read before the message is recorded.
  ReadAttachments attached;
  if (!message.attachments.empty()) {
    attached = co_await ReadMessageAttachments(services_, files_, ref, message.attachments,
                                               message.received, turn_id);
    if (cancelled()) co_return;
    for (const std::string& problem : attached.problems) SayTo(services_, message, problem);
  }
  const MemoryEntry user_entry{.time = message.received,
                               .role = "user",
                               .author = message.author,
                               .text = WithAttachments(message.body, attached.for_memory)};
  const std::string agent_name = options.name;
  // Memory: close an idle session, read the session and the prompt's parts, record the message.
  absl::StatusOr<TurnMemory> memory =
      co_await ReadTurnMemory(services_, files_, ref, user_entry, agent_name, run_id);
  if (!memory.ok()) {
    fail(memory.status(), RunEvent::Failure::kInternal);
    co_return;
  }
  // The message is on disk (fsynced): the sender may now be told it arrived, and, unless the
  // turn was cancelled meanwhile, that Herald is reading it.
  if (chat_states && message.receipt_requested) {
    Acknowledge(message, xmpp::AcknowledgeMessage::Kind::kReceived);
  }
  if (cancelled()) co_return;
  if (chat_states && message.markable) {
    Acknowledge(message, xmpp::AcknowledgeMessage::Kind::kDisplayed);
  }

  // A session closed for idleness leaves a summary in context.md (light tier), if wanted.
  if (!memory->archived.empty()) {
    co_await SummarizeArchived(services_, files_, ref, payer, turn_id, *memory);
  }

  // Pictures go to the vision tier (when there is none, none were attached).
  const providers::Tier tier = attached.images.empty() ? message.tier : providers::Tier::kVision;
  LlmRequest request = TurnRequest(*std::move(memory),
                                   PromptOptions{.agent_name = agent_name,
                                                 .in_room = room,
                                                 .room = ref.address,
                                                 .flagged_injection = message.flagged_injection,
                                                 .now = services_.clock()},
                                   message, attached);
  request.max_tokens = services_.turn.max_tokens;
  request.stream = services_.turn.stream;

  const std::vector<providers::ToolSpec> tools = services_.skills.EnabledTools();
  // Tools a tool_search found (and the pinned ones) join the enabled ones for the run.
  RegistryTools registry_tools(services_);
  const std::string tools_owner = CredentialOwnerOf(ref_);
  co_await registry_tools.Start(tools_owner);
  if (cancelled()) co_return;
  const int max_rounds = std::max(0, options.max_tool_rounds);
  providers::Usage usage;
  std::string answer;
  std::string model;
  int rounds = 0;
  std::vector<MemoryEntry> tool_entries;
  // Files the run's tools make for the person (turn_media.h), sent after the answer.
  std::shared_ptr<skills::FileOutbox> outbox;
  if (services_.file_sender != nullptr && services_.attachments != nullptr && !message.sink) {
    const AttachmentOptions& limits = services_.attachments->options();
    outbox = std::make_shared<skills::FileOutbox>(limits.send_max_files, limits.send_max_bytes);
  }
  const ToolCallTurn tool_turn{
      .services = services_,
      .ref = ref_,
      .chat_user = ref_.kind == ConversationRef::Kind::kDirect && !message.sink ? ref_.address
                                                                                : std::string(),
      .run_id = run_id,
      .turn_id = turn_id,
      .skill_context = {.conversation_id = turn_id,
                        .conversation = ref,
                        .answering = skills::AnsweredMessage{.time = message.received,
                                                             .author = message.author,
                                                             .text = message.body},
                        .may_write_shared_memory = message.shared_memory_writer,
                        .hops = message.hops,
                        .deadline = message.deadline,
                        .files = outbox},
      .emit = emit,
      .say =
          [this, &message](std::string text) {
            if (message.sink) return;
            // A question the person may answer with 👍 or 👎 (XEP-0444) on it.
            xmpp::SendMessage question = ReplyTo(message, text, /*active=*/false);
            question.id = FreshMessageId();
            RememberSent(question.id, std::move(text), /*question=*/true);
            services_.act(std::move(question));
          },
      .publish =
          [this, &run_id](events::EventType type, std::string summary,
                          std::vector<std::pair<std::string, std::string>> attributes) {
            Publish(type, run_id, std::move(summary), std::move(attributes));
          },
      .cancelled = cancelled};

  // A program following the turn sees the answer as the model writes it; so does a person,
  // in a message corrected as it grows (XEP-0308), where the client can show it.
  bool streamed = false;
  providers::LlmProvider::OnText on_text;
  StreamedAnswer* writing = nullptr;  // this round's message to a person
  // With a reply hook attached nothing of the answer goes out before the hooks passed it: no
  // streaming, and text beside tool calls is held and goes out with the answer.
  const bool hooked_reply = services_.hooks != nullptr && services_.hooks->Any(HookPoint::kReply);
  std::string held;
  if (message.sink) {
    if (!hooked_reply) {
      on_text = [&emit, &streamed](std::string_view delta) {
        streamed = true;
        emit(RunEvent{.kind = RunEvent::Kind::kTextDelta, .text = std::string(delta)});
      };
    }
  } else {
    writing = &StartAnswer(message);
    if (options.stream_answers != "off" && !hooked_reply) {
      on_text = [this, &cancelled](std::string_view delta) {
        if (!cancelled() && answer_ != nullptr) answer_->Append(delta);
      };
    }
  }
  // The last word of a turn that ends early: it finishes a message that went out.
  auto say_last = [&](std::string text) {
    if (writing != nullptr && writing->started()) {
      writing->Finish(std::move(text), /*ends_turn=*/false);
    } else {
      Reply(message, std::move(text), /*active=*/false);
    }
  };

  // Every model call of the turn: admitted by the limits (or refused with LimitStatus), then
  // recorded.
  const CallModel call_model = [this, payer, conversation_name, run_id, tier](
                                   LlmRequest call_request, providers::LlmProvider::OnText text) {
    return CallWithinLimits(services_, payer, conversation_name, std::move(call_request),
                            std::move(text), tier, run_id);
  };
  // A block-mode limit ends the turn with the limit's message.
  auto stop_for_limit = [&](const std::string& limit_message) {
    Publish(events::EventType::kRunFailed, run_id,
            absl::StrCat("turn ", turn_id, " stopped by a limit"), {{"error", "limit"}});
    traced.End(absl::ResourceExhaustedError(limit_message));
    emit(Failed(RunEvent::Failure::kLimit, limit_message));
    if (chat_states) {
      services_.act(
          xmpp::SendChatState{.to = message.reply_to, .state = "paused", .from = message.own});
    }
    mark({kCouldNotDoIt});
    say_last(limit_message);
  };
  // A plan turn: "/plan <task>", or the model's own choice (propose_plans) below.
  std::optional<std::string> plan_task;
  if (message.plan) plan_task = message.body;
  const bool may_propose_plans =
      options.planning == "auto" && !room && !message.plan && services_.pending_actions != nullptr;
  while (!plan_task.has_value()) {
    // After max_rounds rounds with tools, one last call without them forces an answer.
    request.tools =
        rounds < max_rounds ? registry_tools.Offered(tools) : std::vector<providers::ToolSpec>{};
    registry_tools.CountShown(request.tools.size());
    if (may_propose_plans && rounds < max_rounds) request.tools.push_back(ProposePlansTool());
    streamed = false;
    absl::StatusOr<LlmResponse> response = co_await call_model(request, on_text);
    if (cancelled()) co_return;
    if (IsLimitStatus(response.status())) {
      stop_for_limit(std::string(response.status().message()));
      co_return;
    }
    if (!response.ok()) {
      fail(response.status(), RunEvent::Failure::kProvider);
      co_return;
    }
    usage.input_tokens += response->usage.input_tokens;
    usage.output_tokens += response->usage.output_tokens;
    model = absl::StrCat(response->provider, ":", response->model);
    if (response->tool_calls.empty() || request.tools.empty()) {
      answer = response->text;
      break;
    }
    if (may_propose_plans) {
      for (const providers::ToolCall& tool_call : response->tool_calls) {
        if (tool_call.name != kProposePlansTool) continue;
        const auto task = tool_call.arguments.find("task");
        plan_task = task != tool_call.arguments.end() && task->is_string() &&
                            !task->get<std::string>().empty()
                        ? task->get<std::string>().substr(0, 2000)
                        : message.body;
        LOG(INFO) << "conversation " << turn_id << ": the model chose to propose plans";
      }
      if (plan_task.has_value()) break;
    }
    ++rounds;
    // Partial progress: text the model wrote beside its tool calls reaches the user now, and
    // what comes after the tools is a new message.
    if (!response->text.empty() && hooked_reply) {
      absl::StrAppend(&held, response->text, "\n\n");
    } else if (!response->text.empty()) {
      if (writing != nullptr) {
        writing->Finish(response->text, /*ends_turn=*/false);
        RememberSent(writing->message_id(), response->text, /*question=*/false);
        writing = &StartAnswer(message);
      }
      if (!streamed) emit(RunEvent{.kind = RunEvent::Kind::kTextDelta, .text = response->text});
    }

    LlmMessage call{.role = LlmMessage::Role::kAssistant,
                    .text = response->text,
                    .tool_calls = response->tool_calls};
    LlmMessage results{.role = LlmMessage::Role::kTool};
    for (const providers::ToolCall& tool_call : response->tool_calls) {
      const std::string arguments_json = tool_call.arguments.dump();
      emit(RunEvent{.kind = RunEvent::Kind::kToolStarted,
                    .call_id = tool_call.id,
                    .tool = tool_call.name,
                    .arguments_json = arguments_json});
      if (writing != nullptr)
        writing->ShowProgress(absl::StrCat("(running ", tool_call.name, "…)"));
      Publish(events::EventType::kToolStarted, run_id, absl::StrCat("tool ", tool_call.name),
              {{"tool", tool_call.name}, {"call_id", tool_call.id}});
      providers::ToolResult result = co_await registry_tools.Run(tool_turn, tool_call);
      if (cancelled()) co_return;
      if (result.is_error) {
        LOG(INFO) << "conversation " << turn_id << ": tool " << tool_call.name
                  << " failed: " << result.content;
      }
      emit(RunEvent{
          .kind = result.is_error ? RunEvent::Kind::kToolFailed : RunEvent::Kind::kToolCompleted,
          .text = result.content,
          .call_id = tool_call.id,
          .tool = tool_call.name});
      Publish(result.is_error ? events::EventType::kToolFailed : events::EventType::kToolCompleted,
              run_id, absl::StrCat("tool ", tool_call.name, result.is_error ? " failed" : " done"),
              {{"tool", tool_call.name}, {"call_id", tool_call.id}});
      tool_entries.push_back(MemoryEntry{
          .time = services_.clock(),
          .role = "tool",
          .author = tool_call.name,
          .text = absl::StrCat(tool_call.arguments.dump(), result.is_error ? " → error: " : " → ",
                               Abbreviate(result.content, 2000))});
      results.tool_results.push_back(std::move(result));
    }
    request.messages.push_back(std::move(call));
    request.messages.push_back(std::move(results));
  }

  // Plans proposed, one chosen and run; its answer ends the turn like any other.
  if (plan_task.has_value()) {
    PlanOutcome planned = co_await RunPlan(
        services_, tool_turn, registry_tools, tools, *plan_task, request, call_model,
        [this, &message](std::string text) {
          if (!message.sink) Reply(message, std::move(text), /*active=*/false);
        },
        on_text, max_rounds);
    if (cancelled()) co_return;
    if (IsLimitStatus(planned.status)) {
      stop_for_limit(std::string(planned.status.message()));
      co_return;
    }
    if (!planned.status.ok()) {
      fail(planned.status, RunEvent::Failure::kProvider);
      co_return;
    }
    usage.input_tokens += planned.usage.input_tokens;
    usage.output_tokens += planned.usage.output_tokens;
    model = planned.model;
    rounds += planned.tool_rounds;
    answer = std::move(planned.answer);
    tool_entries = std::move(planned.notes);
  }

  if (answer.empty()) answer = "(The model returned no text.)";
  if (hooked_reply) {
    answer = co_await PassReplyHooks(*services_.hooks, conversation_name, ref_, agent_name,
                                     absl::StrCat(held, answer), run_id);
    if (cancelled()) co_return;
  }
  if (writing != nullptr) {
    writing->Finish(answer);
    RememberSent(writing->message_id(), answer, /*question=*/false);
    const bool speak =
        services_.voice != nullptr && services_.voice->speaks() &&
        (voice || (attached.voice_note && services_.voice->options().answer_voice_notes));
    SendTurnMedia(services_, payer, ReplyTo(message, "", /*active=*/false),
                  {.files = outbox ? outbox->Take() : std::vector<skills::OutgoingFile>{},
                   .spoken = speak ? answer : ""},
                  turn_id);
  }
  mark({});  // the answer says it all now
  if (!streamed) emit(RunEvent{.kind = RunEvent::Kind::kTextDelta, .text = answer});
  emit(RunEvent{.kind = RunEvent::Kind::kCompleted,
                .text = answer,
                .model = model,
                .input_tokens = usage.input_tokens,
                .output_tokens = usage.output_tokens,
                .tool_rounds = rounds});
  running_sink_ = nullptr;
  traced.Set("gen_ai.usage.input_tokens", absl::StrCat(usage.input_tokens));
  traced.Set("gen_ai.usage.output_tokens", absl::StrCat(usage.output_tokens));
  Publish(events::EventType::kRunCompleted, run_id, absl::StrCat("turn ", turn_id, " answered"),
          {{"model", model},
           {"input_tokens", absl::StrCat(usage.input_tokens)},
           {"output_tokens", absl::StrCat(usage.output_tokens)},
           {"tool_rounds", absl::StrCat(rounds)},
           {"tool_definitions", absl::StrCat(registry_tools.definitions_shown())}});
  if (debug) {
    Reply(message,
          absl::StrFormat("[debug] %s, %d tool round(s), %d tokens in / %d out, %d ms", model,
                          rounds, usage.input_tokens, usage.output_tokens,
                          absl::ToInt64Milliseconds(services_.clock() - started)),
          /*active=*/false);
  }

  std::vector<MemoryEntry> entries = std::move(tool_entries);
  entries.push_back(MemoryEntry{
      .time = services_.clock(), .role = "assistant", .author = agent_name, .text = answer});
  const absl::Status saved =
      co_await SaveEntries(services_, files_, ref, std::move(entries), run_id);
  traced.End(saved);
  if (!saved.ok()) LOG(ERROR) << "conversation " << turn_id << ": answer not saved: " << saved;
}

}  // namespace herald::agent
