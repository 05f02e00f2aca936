#include "control/session_service.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/jid.h"
#include "control/event_messages.h"
#include "control/paging.h"

namespace herald::control {
namespace {

using Kind = base::ConversationRef::Kind;

// The longest ListSessionsRequest.query.
constexpr size_t kMaxSessionQueryBytes = 256;
// The content ExportMemory puts in one page: well under gRPC's 4 MiB message limit.
constexpr size_t kExportPageBytes = 1 << 20;

v1::ConversationKind KindMessage(Kind kind) {
  switch (kind) {
    case Kind::kDirect:
      return v1::CONVERSATION_KIND_DIRECT;
    case Kind::kRoom:
      return v1::CONVERSATION_KIND_ROOM;
    case Kind::kApi:
      return v1::CONVERSATION_KIND_API;
  }
  return v1::CONVERSATION_KIND_UNSPECIFIED;
}

// The order ListSessions promises: kind (direct, room, api), then address, then thread.
using SortKey = std::tuple<int, std::string, std::string>;

SortKey KeyOf(const base::ConversationRef& ref) {
  return {static_cast<int>(ref.kind), ref.address, ref.thread};
}

std::string CursorOf(const SortKey& key) {
  return absl::StrCat(std::get<0>(key), "\n", std::get<1>(key), "\n", std::get<2>(key));
}

std::optional<SortKey> ParseCursor(const std::string& cursor) {
  std::vector<std::string> parts = absl::StrSplit(cursor, '\n');
  int kind = 0;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &kind)) return std::nullopt;
  return SortKey{kind, parts[1], parts[2]};
}

struct SessionRow {
  base::ConversationRef ref;
  bool loaded = false;
  bool busy = false;
  int32_t queued = 0;
  std::string instance;  // the instance answering it, with several on one database
};

// Runs `work` where the conversation's files may be touched: its actor's strand when it has
// one (so it never interleaves with a turn's writes), else the worker pool. On the I/O loop.
template <typename Work>
void OnConversationFiles(ControlContext& control, const base::ConversationRef& ref, Work work) {
  if (agent::Conversation* conversation = control.services().agent.FindConversation(ref)) {
    asio::post(conversation->files(), std::move(work));
  } else {
    control.OnWorkers(std::move(work));
  }
}

// Folds a text delta into the text delta queued before it, so that a slow reader of a long
// answer holds one growing message instead of thousands.
std::shared_ptr<const v1::RunEvent> MergeTextDeltas(const v1::RunEvent& last,
                                                    const v1::RunEvent& next) {
  if (!last.has_text_delta() || !next.has_text_delta() || last.run_id() != next.run_id()) {
    return nullptr;
  }
  auto merged = std::make_shared<v1::RunEvent>(last);
  merged->mutable_text_delta()->mutable_text()->append(next.text_delta().text());
  return merged;
}

}  // namespace

absl::StatusOr<base::ConversationRef> ConversationRefFromKey(const v1::ConversationKey& key,
                                                             std::string_view field) {
  base::ConversationRef ref;
  ref.thread = key.thread();
  if (ref.thread.size() > 1023 || std::any_of(ref.thread.begin(), ref.thread.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20;
      })) {
    return absl::InvalidArgumentError(absl::StrCat(
        AbslView(field), ".thread must be at most 1023 bytes without control characters"));
  }
  switch (key.kind()) {
    case v1::CONVERSATION_KIND_DIRECT:
    case v1::CONVERSATION_KIND_ROOM: {
      ref.kind = key.kind() == v1::CONVERSATION_KIND_DIRECT ? Kind::kDirect : Kind::kRoom;
      absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(key.address());
      if (!jid.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(AbslView(field), ".address: ", jid.status().message()));
      }
      if (ref.kind == Kind::kRoom && !jid->IsBare()) {
        return absl::InvalidArgumentError(
            absl::StrCat(AbslView(field), ".address must be the room's bare JID"));
      }
      ref.address = jid->BareString();
      return ref;
    }
    case v1::CONVERSATION_KIND_API:
      ref.kind = Kind::kApi;
      if (!base::IsApiConversationName(key.address())) {
        return absl::InvalidArgumentError(
            absl::StrCat(AbslView(field),
                         ".address must be an API conversation name: 1-64 of A-Z a-z 0-9 . _ - "
                         "(not starting with '.')"));
      }
      ref.address = key.address();
      return ref;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(AbslView(field), ".kind must be CONVERSATION_KIND_DIRECT, _ROOM or _API"));
  }
}

void SetConversationKey(const base::ConversationRef& ref, v1::ConversationKey* key) {
  key->set_kind(KindMessage(ref.kind));
  key->set_address(ref.address);
  key->set_thread(ref.thread);
}

grpc::ServerUnaryReactor* SessionService::ListSessions(grpc::CallbackServerContext* context,
                                                       const v1::ListSessionsRequest* request,
                                                       v1::ListSessionsResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListSessions);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<int> page_size = PageSize(request->page_size());
  if (!page_size.ok()) return call->Finish(page_size.status());
  absl::StatusOr<std::string> cursor = DecodePageToken("sessions", request->page_token());
  if (!cursor.ok()) return call->Finish(cursor.status());
  std::optional<SortKey> after;
  if (!cursor->empty()) {
    after = ParseCursor(*cursor);
    if (!after.has_value()) return call->Finish(InvalidArgument("page_token is malformed"));
  }
  const v1::ConversationKind kind = request->kind();
  if (!v1::ConversationKind_IsValid(kind)) {
    return call->Finish(InvalidArgument("kind is not a conversation kind"));
  }
  if (request->query().size() > kMaxSessionQueryBytes) {
    return call->Finish(
        InvalidArgument(absl::StrCat("query must be at most ", kMaxSessionQueryBytes, " bytes")));
  }
  // What the listing shows: the kind asked for, and the query in the address or thread.
  auto matches = [kind, query = absl::AsciiStrToLower(request->query())](const SessionRow& row) {
    if (kind != v1::CONVERSATION_KIND_UNSPECIFIED && KindMessage(row.ref.kind) != kind) {
      return false;
    }
    return query.empty() || absl::StrContains(absl::AsciiStrToLower(row.ref.address), query) ||
           absl::StrContains(absl::AsciiStrToLower(row.ref.thread), query);
  };

  control_.OnLoop([this, call, response, matches, after, size = *page_size] {
    // The live actors first (I/O loop), then the folders and their files (worker pool).
    std::vector<agent::Agent::LoadedConversation> loaded =
        control_.services().agent.LoadedConversations();
    control_.OnWorkers([this, call, response, matches, after, size, loaded = std::move(loaded)] {
      memory::MemoryStore& memory = control_.services().memory;
      absl::StatusOr<std::vector<base::ConversationRef>> stored = memory.ListConversations();
      if (!stored.ok()) {
        call->Finish(absl::Status(stored.status().code(),
                                  absl::StrCat("memory: ", stored.status().message())));
        return;
      }
      std::map<SortKey, SessionRow> rows;
      for (base::ConversationRef& ref : *stored) {
        SortKey key = KeyOf(ref);
        rows[key].ref = std::move(ref);
      }
      // With several instances, every instance's 1:1 conversations, and who answers each.
      if (const auto& leases = control_.services().leases; leases) {
        absl::StatusOr<std::vector<storage::ConversationInbox::Lease>> held = leases();
        if (!held.ok()) {
          call->Finish(absl::Status(held.status().code(),
                                    absl::StrCat("leases: ", held.status().message())));
          return;
        }
        std::map<std::string, std::string> holders;  // bare JID → instance
        for (storage::ConversationInbox::Lease& lease : *held) {
          base::ConversationRef ref{.kind = base::ConversationRef::Kind::kDirect,
                                    .address = lease.conversation};
          rows[KeyOf(ref)].ref = std::move(ref);  // known here or not
          holders[std::move(lease.conversation)] = std::move(lease.owner);
        }
        for (auto& [key, row] : rows) {  // a person's threads too
          if (row.ref.kind != base::ConversationRef::Kind::kDirect) continue;
          if (auto holder = holders.find(row.ref.address); holder != holders.end()) {
            row.instance = holder->second;
          }
        }
      }
      for (const agent::Agent::LoadedConversation& live : loaded) {
        SessionRow& row = rows[KeyOf(live.ref)];
        row.ref = live.ref;
        row.loaded = true;
        row.busy = live.busy;
        row.queued = static_cast<int32_t>(live.queued);
      }
      auto it = after.has_value() ? rows.upper_bound(*after) : rows.begin();
      int taken = 0;
      for (; it != rows.end() && taken < size; ++it) {
        const SessionRow& row = it->second;
        if (!matches(row)) continue;
        v1::Conversation* conversation = response->add_conversations();
        SetConversationKey(row.ref, conversation->mutable_key());
        conversation->set_loaded(row.loaded);
        conversation->set_busy(row.busy);
        conversation->set_queued(row.queued);
        absl::StatusOr<std::optional<absl::Time>> last = memory.LastActivity(row.ref);
        if (last.ok() && last->has_value()) {
          SetTimestamp(**last, conversation->mutable_last_activity());
        }
        absl::StatusOr<std::vector<std::string>> sessions = memory.ListSessions(row.ref);
        if (sessions.ok())
          conversation->set_archived_sessions(static_cast<int32_t>(sessions->size()));
        conversation->set_instance(row.instance);
        ++taken;
        if (taken == size) {
          // Another page only when a matching conversation follows.
          auto rest = std::next(it);
          while (rest != rows.end() && !matches(rest->second)) ++rest;
          if (rest != rows.end()) {
            response->set_next_page_token(EncodePageToken("sessions", CursorOf(it->first)));
          }
        }
      }
      call->Finish(grpc::Status::OK);
    });
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* SessionService::GetHistory(grpc::CallbackServerContext* context,
                                                     const v1::GetHistoryRequest* request,
                                                     v1::GetHistoryResponse* response) {
  auto call = control_.BeginUnary(context, methods::kGetHistory);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<base::ConversationRef> ref = ConversationRefFromKey(request->key(), "key");
  if (!ref.ok()) return call->Finish(ref.status());
  call->set_target(base::ConversationName(*ref));
  absl::StatusOr<int> page_size = PageSize(request->page_size());
  if (!page_size.ok()) return call->Finish(page_size.status());
  absl::StatusOr<std::string> cursor = DecodePageToken("history", request->page_token());
  if (!cursor.ok()) return call->Finish(cursor.status());
  size_t skip = 0;  // entries already returned, counted from the newest
  if (!cursor->empty() && !absl::SimpleAtoi(*cursor, &skip)) {
    return call->Finish(InvalidArgument("page_token is malformed"));
  }

  control_.OnWorkers([this, call, response, ref = *ref, skip, size = *page_size] {
    // One more than needed tells whether older entries remain.
    absl::StatusOr<std::vector<memory::MemoryEntry>> entries =
        control_.services().memory.History(ref, skip + size + 1);
    if (!entries.ok()) {
      call->Finish(absl::Status(entries.status().code(),
                                absl::StrCat("memory: ", entries.status().message())));
      return;
    }
    const size_t total = entries->size();
    if (total > skip) {
      const size_t end = total - skip;
      const size_t begin = end > static_cast<size_t>(size) ? end - size : 0;
      for (size_t i = begin; i < end; ++i) {
        const memory::MemoryEntry& entry = (*entries)[i];
        v1::HistoryEntry* out = response->add_entries();
        SetTimestamp(entry.time, out->mutable_time());
        out->set_role(entry.role);
        out->set_author(entry.author);
        out->set_text(entry.text);
      }
      if (begin > 0) {
        response->set_next_page_token(EncodePageToken("history", absl::StrCat(skip + size)));
      }
    }
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* SessionService::ResetSession(grpc::CallbackServerContext* context,
                                                       const v1::ResetSessionRequest* request,
                                                       v1::ResetSessionResponse* response) {
  auto call = control_.BeginUnary(context, methods::kResetSession);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<base::ConversationRef> ref = ConversationRefFromKey(request->key(), "key");
  if (!ref.ok()) return call->Finish(ref.status());
  call->set_target(base::ConversationName(*ref));
  control_.OnLoop([this, call, response, ref = *ref] {
    OnConversationFiles(control_, ref, [this, call, response, ref] {
      absl::StatusOr<std::string> archived =
          control_.services().memory.ArchiveSession(ref, absl::Now());
      if (!archived.ok()) {
        call->Finish(absl::Status(archived.status().code(),
                                  absl::StrCat("memory: ", archived.status().message())));
        return;
      }
      response->set_archived_as(*archived);
      call->Finish(grpc::Status::OK);
    });
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* SessionService::ForgetConversation(
    grpc::CallbackServerContext* context, const v1::ForgetConversationRequest* request,
    v1::ForgetConversationResponse* response) {
  auto call = control_.BeginUnary(context, methods::kForgetConversation);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<base::ConversationRef> ref = ConversationRefFromKey(request->key(), "key");
  if (!ref.ok()) return call->Finish(ref.status());
  call->set_target(base::ConversationName(*ref));
  control_.OnLoop([this, call, ref = *ref] {
    agent::Agent& agent = control_.services().agent;
    auto forget = [this, call, ref] {
      absl::Status status = control_.services().memory.Forget(ref);
      if (!status.ok()) {
        call->Finish(absl::Status(status.code(), absl::StrCat("memory: ", status.message())));
        return;
      }
      call->Finish(grpc::Status::OK);
    };
    // The actor goes first, so that no turn writes after the folder is gone; the deletion
    // runs on its strand, after whatever file work it had queued.
    if (agent::Conversation* conversation = agent.FindConversation(ref)) {
      auto files = conversation->files();
      agent.Unload(ref);
      asio::post(files, std::move(forget));
    } else {
      control_.OnWorkers(std::move(forget));
    }
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* SessionService::SendMessage(grpc::CallbackServerContext* context,
                                                      const v1::SendMessageRequest* request,
                                                      v1::SendMessageResponse* response) {
  auto call = control_.BeginUnary(context, methods::kSendMessage);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<xmpp::Jid> to = xmpp::Jid::Parse(request->to());
  if (!to.ok()) return call->Finish(InvalidArgument(absl::StrCat("to: ", to.status().message())));
  call->set_target(to->BareString());
  if (request->body().empty()) return call->Finish(InvalidArgument("body is empty"));
  control_.OnLoop([this, call, to = *to, body = request->body()]() mutable {
    const xmpp::Jid own = control_.services().own_jid();
    if (own.empty()) {
      call->Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                "Herald has no XMPP address yet: it has not been online"));
      return;
    }
    control_.services().agent.SendAsAgent(to, own, std::move(body));
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerWriteReactor<v1::RunEvent>* SessionService::Converse(
    grpc::CallbackServerContext* context, const v1::ConverseRequest* request) {
  const std::string target = absl::StrCat("api:", request->conversation());
  absl::StatusOr<Caller> caller = control_.Authorize(context, methods::kConverse);
  const std::string actor = caller.ok() ? caller->name : control_.ActorOf(context);
  auto audit = [this, actor, target](const grpc::Status& status) {
    control_.Audit(actor, methods::kConverse, target, status);
  };
  if (!caller.ok()) return RefusedStream<v1::RunEvent>(ToGrpcStatus(caller.status()), audit);
  if (!base::IsApiConversationName(request->conversation())) {
    return RefusedStream<v1::RunEvent>(
        InvalidArgument("conversation must be 1-64 of A-Z a-z 0-9 . _ - (not starting with '.')"),
        audit);
  }
  if (request->text().empty()) {
    return RefusedStream<v1::RunEvent>(InvalidArgument("text is empty"), audit);
  }
  absl::StatusOr<ControlContext::Delegated> delegated = control_.DelegationOf(context);
  if (!delegated.ok()) {
    return RefusedStream<v1::RunEvent>(ToGrpcStatus(delegated.status()), audit);
  }

  // Whether the caller went away before or after the turn started, and whether it ended.
  struct RunState {
    std::atomic<bool> cancelled{false};
    std::atomic<bool> ended{false};
  };
  auto state = std::make_shared<RunState>();
  const base::ConversationRef ref{.kind = base::ConversationRef::Kind::kApi,
                                  .address = request->conversation()};
  auto [writer, reactor] =
      StreamWriter<v1::RunEvent>::Create({.on_cancel =
                                              [this, state, ref] {
                                                state->cancelled = true;
                                                control_.OnLoop([this, state, ref] {
                                                  if (!state->ended)
                                                    control_.services().agent.Cancel(ref);
                                                });
                                              },
                                          .on_done = audit});

  control_.OnLoop([this, state, writer = writer, name = request->conversation(),
                   text = request->text(), target, delegated = *delegated]() mutable {
    if (state->cancelled) return;  // the caller left before the turn could start
    agent::RunSink sink = [writer, state, target](const agent::RunEvent& event) {
      auto message = std::make_shared<v1::RunEvent>(RunEventMessage(event, target));
      const bool last = event.kind == agent::RunEvent::Kind::kCompleted ||
                        event.kind == agent::RunEvent::Kind::kFailed;
      if (event.kind == agent::RunEvent::Kind::kTextDelta) {
        writer->PushOrMerge(std::move(message), MergeTextDeltas);
      } else {
        writer->Push(std::move(message));
      }
      if (last) {
        state->ended = true;
        writer->Finish(grpc::Status::OK);
      }
    };
    absl::StatusOr<std::string> run = control_.services().agent.Converse(
        name, std::move(text), std::move(sink), delegated.hops, delegated.deadline);
    if (!run.ok()) writer->Finish(ToGrpcStatus(run.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* SessionService::Cancel(grpc::CallbackServerContext* context,
                                                 const v1::CancelRequest* request,
                                                 v1::CancelResponse* response) {
  auto call = control_.BeginUnary(context, methods::kCancel);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<base::ConversationRef> ref = ConversationRefFromKey(request->key(), "key");
  if (!ref.ok()) return call->Finish(ref.status());
  call->set_target(base::ConversationName(*ref));
  control_.OnLoop([this, call, response, ref = *ref] {
    response->set_cancelled(control_.services().agent.Cancel(ref));
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* SessionService::ExportMemory(grpc::CallbackServerContext* context,
                                                       const v1::ExportMemoryRequest* request,
                                                       v1::ExportMemoryResponse* response) {
  auto call = control_.BeginUnary(context, methods::kExportMemory);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<base::ConversationRef> ref = ConversationRefFromKey(request->key(), "key");
  if (!ref.ok()) return call->Finish(ref.status());
  call->set_target(base::ConversationName(*ref));
  // The cursor: where the next page starts, as "OFFSET PATH".
  absl::StatusOr<std::string> cursor = DecodePageToken("memory", request->page_token());
  if (!cursor.ok()) return call->Finish(cursor.status());
  std::string from;
  uint64_t offset = 0;
  if (!cursor->empty()) {
    std::vector<std::string> parts = absl::StrSplit(*cursor, absl::MaxSplits(' ', 1));
    if (parts.size() != 2 || parts[1].empty() || !absl::SimpleAtoi(parts[0], &offset)) {
      return call->Finish(InvalidArgument("page_token is malformed"));
    }
    from = parts[1];
  }

  control_.OnWorkers([this, call, response, ref = *ref, from, offset]() mutable {
    const memory::MemoryStore& memory = control_.services().memory;
    absl::StatusOr<std::vector<std::string>> files = memory.ListFiles(ref);
    if (!files.ok()) {
      call->Finish(
          absl::Status(files.status().code(), absl::StrCat("memory: ", files.status().message())));
      return;
    }
    size_t budget = kExportPageBytes;
    auto file = std::lower_bound(files->begin(), files->end(), from);
    if (file == files->end() || *file != from) offset = 0;  // gone since the last page
    for (; file != files->end(); ++file, offset = 0) {
      if (budget == 0) {
        response->set_next_page_token(EncodePageToken("memory", absl::StrCat(offset, " ", *file)));
        break;
      }
      absl::StatusOr<memory::MemoryFilePart> part = memory.ReadFilePart(ref, *file, offset, budget);
      if (absl::IsNotFound(part.status())) continue;  // removed since it was listed
      if (!part.ok()) {
        call->Finish(
            absl::Status(part.status().code(), absl::StrCat("memory: ", part.status().message())));
        return;
      }
      v1::MemoryFilePart* out = response->add_parts();
      out->set_path(*file);
      out->set_offset(static_cast<int64_t>(offset));
      out->set_size(static_cast<int64_t>(part->size));
      budget -= part->content.size();
      const uint64_t end = offset + part->content.size();
      *out->mutable_content() = std::move(part->content);
      if (end < part->size) {  // the rest of this file on the next page
        response->set_next_page_token(EncodePageToken("memory", absl::StrCat(end, " ", *file)));
        break;
      }
    }
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

}  // namespace herald::control
