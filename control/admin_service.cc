#include "control/admin_service.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "component/base/conversation_ref.h"
#include "component/base/mutex.h"
#include "component/base/time_zone.h"
#include "component/ledger/audit_reader.h"
#include "component/schedule/schedule.h"
#include "component/schedule/scheduler.h"
#include "component/xmpp/jid.h"
#include "control/config_reload.h"
#include "control/event_messages.h"
#include "control/paging.h"
#include "control/runtime_changes.h"
#include "control/runtime_editor.h"
#include "control/runtime_state.h"

namespace herald::control {
namespace {

v1::ConnectionState ConnectionStateMessage(xmpp::ConnectionState state) {
  switch (state) {
    case xmpp::ConnectionState::kConnecting:
    case xmpp::ConnectionState::kDisconnected:
      return v1::CONNECTION_STATE_CONNECTING;
    case xmpp::ConnectionState::kOnline:
      return v1::CONNECTION_STATE_ONLINE;
    case xmpp::ConnectionState::kStopped:
      return v1::CONNECTION_STATE_STOPPED;
  }
  return v1::CONNECTION_STATE_UNSPECIFIED;
}

void SetAllowlist(const agent::AgentOptions& agent, v1::Allowlist* out) {
  out->clear_jids();
  out->clear_domains();
  out->clear_admin_jids();
  for (const std::string& jid : agent.allowed_jids) out->add_jids(jid);
  for (const std::string& domain : agent.allowed_domains) out->add_domains(domain);
  for (const std::string& admin : agent.admin_jids) out->add_admin_jids(admin);
}

}  // namespace

grpc::ServerUnaryReactor* AdminService::GetStatus(grpc::CallbackServerContext* context,
                                                  const v1::GetStatusRequest* request,
                                                  v1::GetStatusResponse* response) {
  auto call = control_.BeginUnary(context, methods::kGetStatus);
  if (!call->authorized()) return call->reactor();
  control_.OnLoop([this, call, response] {
    ControlServices& services = control_.services();
    const absl::Time now = absl::Now();
    response->set_version(services.version);
    SetTimestamp(services.runtime.started, response->mutable_started_at());
    const absl::Duration uptime = now - services.runtime.started;
    response->mutable_uptime()->set_seconds(absl::ToInt64Seconds(uptime));
    response->mutable_uptime()->set_nanos(
        static_cast<int32_t>(absl::ToInt64Nanoseconds(uptime % absl::Seconds(1))));
    if (services.connection_state) {
      response->set_connection_state(ConnectionStateMessage(services.connection_state()));
    }
    response->set_connection(services.runtime.connection);
    response->set_server(
        absl::StrCat(services.config.server.host, ":", services.config.server.port));
    response->set_default_model(services.config.llm.default_model);
    int busy = 0;
    const std::vector<agent::Agent::LoadedConversation> loaded =
        services.agent.LoadedConversations();
    for (const auto& conversation : loaded) busy += conversation.busy ? 1 : 0;
    response->set_conversations_loaded(static_cast<int32_t>(loaded.size()));
    response->set_conversations_busy(busy);
    int joined = 0;
    for (const xmpp::Jid& room : services.rooms.Rooms()) joined += services.rooms.IsJoined(room);
    response->set_rooms_joined(joined);
    response->set_rooms_configured(static_cast<int32_t>(services.config.rooms.size()));
    response->set_subscribers(static_cast<int32_t>(control_.subscriber_count()));
    response->set_messages_received(services.runtime.counters.messages_received);
    response->set_llm_calls(services.runtime.counters.llm_calls);
    response->set_feedback_positive(services.runtime.counters.feedback_positive);
    response->set_feedback_negative(services.runtime.counters.feedback_negative);
    if (services.instances) {
      for (const storage::InstanceInfo& known : services.instances()) {
        v1::Instance* instance = response->add_instances();
        instance->set_id(known.id);
        instance->set_host(known.host);
        instance->set_pid(known.pid);
        SetTimestamp(known.started_at, instance->mutable_started_at());
        SetTimestamp(known.last_seen, instance->mutable_last_seen());
        instance->set_this_instance(known.this_instance);
        instance->set_conversations(known.conversations);
        instance->set_rooms(known.rooms);
      }
    }
    if (services.config.llm.default_model.empty()) {
      response->add_notices("no [llm] default model is configured");
    }
    for (const std::string& notice : services.notices) response->add_notices(notice);
    if (services.pending_actions != nullptr && services.pending_actions->size() > 0) {
      response->add_notices(absl::StrCat(services.pending_actions->size(),
                                         " run(s) wait for an approval or credentials "
                                         "(SkillService.ListPendingActions)"));
    }
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::GetMetrics(grpc::CallbackServerContext* context,
                                                   const v1::GetMetricsRequest* request,
                                                   v1::GetMetricsResponse* response) {
  (void)request;
  auto call = control_.BeginUnary(context, methods::kGetMetrics);
  if (!call->authorized()) return call->reactor();
  // The collector reads the runtime's counters, which live on the I/O loop.
  control_.OnLoop([this, call, response] {
    ControlServices& services = control_.services();
    if (!services.metrics_text) {
      call->Finish(
          grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "this Herald gathers no metrics"));
      return;
    }
    response->set_collected_unix_ms(absl::ToUnixMillis(services.runtime.clock()));
    response->set_text(services.metrics_text());
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::ReloadConfig(grpc::CallbackServerContext* context,
                                                     const v1::ReloadConfigRequest* request,
                                                     v1::ReloadConfigResponse* response) {
  auto call = control_.BeginUnary(context, methods::kReloadConfig);
  if (!call->authorized()) return call->reactor();
  call->set_target(control_.services().config_path);
  control_.editor().Reload([call, response](absl::StatusOr<ReloadReport> report) {
    if (!report.ok()) {
      call->Finish(report.status());
      return;
    }
    for (const std::string& name : report->applied) response->add_applied(name);
    for (const std::string& name : report->requires_restart) response->add_requires_restart(name);
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::GetAllowlist(grpc::CallbackServerContext* context,
                                                     const v1::GetAllowlistRequest* request,
                                                     v1::Allowlist* response) {
  auto call = control_.BeginUnary(context, methods::kGetAllowlist);
  if (!call->authorized()) return call->reactor();
  control_.OnLoop([this, call, response] {
    SetAllowlist(control_.services().config.agent, response);
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::UpdateAllowlist(grpc::CallbackServerContext* context,
                                                        const v1::UpdateAllowlistRequest* request,
                                                        v1::Allowlist* response) {
  auto call = control_.BeginUnary(context, methods::kUpdateAllowlist);
  if (!call->authorized()) return call->reactor();
  // This request's changes alone, validated and normalised.
  RuntimeState change;
  auto collect = [](const auto& entries, const char* field, auto normalise,
                    std::vector<std::string>& out) -> absl::Status {
    for (int i = 0; i < entries.size(); ++i) {
      absl::StatusOr<std::string> entry = normalise(entries[i], absl::StrCat(field, "[", i, "]"));
      if (!entry.ok()) return entry.status();
      out.push_back(*entry);
    }
    return absl::OkStatus();
  };
  for (absl::Status status :
       {collect(request->add_jids(), "add_jids", AllowlistJid, change.add_jids),
        collect(request->remove_jids(), "remove_jids", AllowlistJid, change.remove_jids),
        collect(request->add_domains(), "add_domains", AllowlistDomain, change.add_domains),
        collect(request->remove_domains(), "remove_domains", AllowlistDomain,
                change.remove_domains)}) {
    if (!status.ok()) return call->Finish(status);
  }
  for (const std::string& jid : change.add_jids) {
    if (std::find(change.remove_jids.begin(), change.remove_jids.end(), jid) !=
        change.remove_jids.end()) {
      return call->Finish(
          InvalidArgument(absl::StrCat("'", jid, "' is in both add_jids and remove_jids")));
    }
  }
  for (const std::string& domain : change.add_domains) {
    if (std::find(change.remove_domains.begin(), change.remove_domains.end(), domain) !=
        change.remove_domains.end()) {
      return call->Finish(InvalidArgument(
          absl::StrCat("'", domain, "' is in both add_domains and remove_domains")));
    }
  }
  std::vector<std::string> targets = change.add_jids;
  targets.insert(targets.end(), change.remove_jids.begin(), change.remove_jids.end());
  targets.insert(targets.end(), change.add_domains.begin(), change.add_domains.end());
  targets.insert(targets.end(), change.remove_domains.begin(), change.remove_domains.end());
  call->set_target(absl::StrJoin(targets, ","));

  control_.editor().Change(std::move(change), /*leave_unlisted=*/{},
                           [this, call, response](absl::StatusOr<ConfigChange> done) {
                             if (!done.ok()) {
                               call->Finish(InvalidArgument(std::string(done.status().message())));
                               return;
                             }
                             SetAllowlist(control_.services().config.agent, response);
                             call->Finish(grpc::Status::OK);
                           });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::ListRooms(grpc::CallbackServerContext* context,
                                                  const v1::ListRoomsRequest* request,
                                                  v1::ListRoomsResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListRooms);
  if (!call->authorized()) return call->reactor();
  control_.OnLoop([this, call, response] {
    for (const agent::RoomStatus& room : control_.editor().Rooms()) {
      v1::Room* out = response->add_rooms();
      out->set_jid(room.jid);
      out->set_nick(room.nick);
      out->set_activation(room.activation);
      out->set_joined(room.joined);
    }
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::JoinRoom(grpc::CallbackServerContext* context,
                                                 const v1::JoinRoomRequest* request,
                                                 v1::JoinRoomResponse* response) {
  auto call = control_.BeginUnary(context, methods::kJoinRoom);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<xmpp::Jid> jid = RoomJid(request->room().jid(), "room.jid");
  if (!jid.ok()) return call->Finish(jid.status());
  call->set_target(jid->BareString());
  agent::RoomSettings room;
  room.jid = jid->BareString();
  if (!request->room().nick().empty()) room.nick = request->room().nick();
  if (room.nick.size() > 1023 || std::any_of(room.nick.begin(), room.nick.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20;
      })) {
    return call->Finish(
        InvalidArgument("room.nick must be at most 1023 bytes without control characters"));
  }
  if (!request->room().activation().empty()) room.activation = request->room().activation();
  if (room.activation != "mention" && room.activation != "all") {
    return call->Finish(InvalidArgument("room.activation must be \"mention\" or \"all\""));
  }
  control_.editor().JoinRoom(std::move(room),
                             [call](absl::Status joined) { call->Finish(joined); });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::LeaveRoom(grpc::CallbackServerContext* context,
                                                  const v1::LeaveRoomRequest* request,
                                                  v1::LeaveRoomResponse* response) {
  auto call = control_.BeginUnary(context, methods::kLeaveRoom);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<xmpp::Jid> jid = RoomJid(request->jid(), "jid");
  if (!jid.ok()) return call->Finish(jid.status());
  call->set_target(jid->BareString());
  control_.editor().LeaveRoom(*std::move(jid), [call](absl::Status left) { call->Finish(left); });
  return call->reactor();
}

grpc::ServerWriteReactor<v1::Event>* AdminService::Subscribe(grpc::CallbackServerContext* context,
                                                             const v1::SubscribeRequest* request) {
  absl::StatusOr<Caller> caller = control_.Authorize(context, methods::kSubscribe);
  const std::string actor = caller.ok() ? caller->name : control_.ActorOf(context);
  const std::string target =
      !request->conversation().empty() ? request->conversation() : request->jid();
  auto audit = [this, actor, target](const grpc::Status& status) {
    control_.Audit(actor, methods::kSubscribe, target, status);
  };
  if (!caller.ok()) return RefusedStream<v1::Event>(ToGrpcStatus(caller.status()), audit);
  absl::StatusOr<EventFilter> filter = EventFilter::Create(*request);
  if (!filter.ok()) return RefusedStream<v1::Event>(ToGrpcStatus(filter.status()), audit);

  // The stream's two registrations, undone when it ends (possibly before they were made).
  struct Subscription {
    base::Mutex mu;
    bool over ABSL_GUARDED_BY(mu) = false;
    uint64_t bus_id ABSL_GUARDED_BY(mu) = 0;  // 0 until registered (the bus counts from 1)
    uint64_t registry_id ABSL_GUARDED_BY(mu) = 0;
  };
  auto subscription = std::make_shared<Subscription>();
  auto unsubscribe = [this](uint64_t bus_id, uint64_t registry_id) {
    control_.services().events.Unsubscribe(bus_id);
    control_.RemoveSubscriber(registry_id);
  };
  auto [writer, reactor] = StreamWriter<v1::Event>::Create(
      {.on_cancel = nullptr,
       .on_done = [subscription, unsubscribe, audit](const grpc::Status& status) {
         uint64_t bus_id;
         uint64_t registry_id;
         {
           base::MutexLock lock(&subscription->mu);
           subscription->over = true;
           bus_id = subscription->bus_id;
           registry_id = subscription->registry_id;
         }
         if (bus_id != 0) unsubscribe(bus_id, registry_id);
         audit(status);
       }});

  const size_t limit = static_cast<size_t>(std::max(1, control_.config().subscriber_queue_limit));
  std::weak_ptr<StreamWriter<v1::Event>> weak = writer;
  const events::EventTypeSet types = filter->types();
  auto listener = [weak, filter = *std::move(filter), limit](const events::EventPtr& event) {
    if (!filter.Matches(*event)) return;
    std::shared_ptr<StreamWriter<v1::Event>> writer = weak.lock();
    if (writer == nullptr) return;
    if (writer->Push(SharedEventMessage(event), limit) ==
        StreamWriter<v1::Event>::PushResult::kFull) {
      auto dropped = std::make_shared<v1::Event>();
      dropped->set_type(v1::EVENT_TYPE_SUBSCRIBER_DROPPED);
      SetTimestamp(absl::Now(), dropped->mutable_time());
      dropped->set_sequence(event->sequence);
      dropped->set_summary(absl::StrCat("this subscriber fell ", limit,
                                        " events behind and was dropped; subscribe again"));
      (*dropped->mutable_attributes())["queue_limit"] = absl::StrCat(limit);
      writer->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                  absl::StrCat("the subscriber fell more than ", limit,
                                               " events behind ([control] "
                                               "subscriber_queue_limit) and was dropped")),
                     std::move(dropped), /*drop_queued=*/true);
    }
  };
  const uint64_t bus_id = control_.services().events.Subscribe(std::move(listener), types);
  const uint64_t registry_id = control_.AddSubscriber(writer);
  bool over;
  {
    base::MutexLock lock(&subscription->mu);
    subscription->bus_id = bus_id;
    subscription->registry_id = registry_id;
    over = subscription->over;
  }
  if (over) unsubscribe(bus_id, registry_id);
  if (control_.shutting_down()) {
    writer->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "Herald is shutting down"));
  }
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::VerifyAudit(grpc::CallbackServerContext* context,
                                                    const v1::VerifyAuditRequest* request,
                                                    v1::VerifyAuditResponse* response) {
  auto call = control_.BeginUnary(context, methods::kVerifyAudit);
  if (!call->authorized()) return call->reactor();
  call->set_target(control_.services().audit.location());
  control_.OnWorkers([this, call, response] {
    absl::StatusOr<ledger::AuditVerifyReport> report = control_.services().audit.Verify();
    if (!report.ok()) {
      call->Finish(report.status());
      return;
    }
    response->set_entries(report->entries);
    response->set_ok(report->ok);
    response->set_first_bad_entry(report->first_bad_entry);
    response->set_problem(report->problem);
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::ListAuditEntries(grpc::CallbackServerContext* context,
                                                         const v1::ListAuditEntriesRequest* request,
                                                         v1::ListAuditEntriesResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListAuditEntries);
  if (!call->authorized()) return call->reactor();
  call->set_target(control_.services().audit.location());
  absl::StatusOr<int> page_size = PageSize(request->page_size());
  if (!page_size.ok()) return call->Finish(page_size.status());
  // The cursor: the byte offset where the oldest entry of the last page starts.
  absl::StatusOr<std::string> cursor = DecodePageToken("audit", request->page_token());
  if (!cursor.ok()) return call->Finish(cursor.status());
  std::optional<uint64_t> before;  // nullopt: from the newest entry
  if (!cursor->empty()) {
    uint64_t offset = 0;
    if (!absl::SimpleAtoi(*cursor, &offset)) {
      return call->Finish(InvalidArgument("page_token is malformed"));
    }
    before = offset;
  }
  control_.OnWorkers([this, call, response, before, size = *page_size] {
    ledger::AuditLog& audit = control_.services().audit;
    // The first page shows every call audited before this one. A log that cannot be written
    // just now is no reason to hide what it holds: the listing goes on without the flush.
    if (!before.has_value()) (void)audit.Flush();
    absl::StatusOr<ledger::AuditPage> page = audit.ReadNewest(before, static_cast<size_t>(size));
    if (!page.ok()) {
      call->Finish(page.status().code() == absl::StatusCode::kInvalidArgument
                       ? InvalidArgument(absl::StrCat("page_token does not point into this audit "
                                                      "log (",
                                                      page.status().message(), ")"))
                       : ToGrpcStatus(page.status()));
      return;
    }
    for (const ledger::ParsedAuditLine& line : page->entries) {
      v1::AuditEntry* out = response->add_entries();
      out->set_seq(line.seq);
      SetTimestamp(line.entry.time, out->mutable_time());
      out->set_actor(line.entry.actor);
      out->set_action(line.entry.action);
      out->set_target(line.entry.target);
      out->set_outcome(line.entry.outcome);
      out->set_detail(line.entry.detail);
      out->set_hash(line.hash);
    }
    if (page->older > 0) {
      response->set_next_page_token(EncodePageToken("audit", absl::StrCat(page->older)));
    }
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

namespace {

constexpr char kNoWebhooksOut[] = "no [[webhooks.out]] is configured";

}  // namespace

grpc::ServerUnaryReactor* AdminService::ListDeadLetters(grpc::CallbackServerContext* context,
                                                        const v1::ListDeadLettersRequest* request,
                                                        v1::ListDeadLettersResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListDeadLetters);
  if (!call->authorized()) return call->reactor();
  http::WebhooksOut* out = control_.services().webhooks_out;
  if (out == nullptr) {
    return call->Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, kNoWebhooksOut));
  }
  if (request->limit() < 0) return call->Finish(InvalidArgument("limit must not be negative"));
  const size_t limit =
      request->limit() == 0 ? 100 : static_cast<size_t>(std::min(request->limit(), 1000));
  out->ListDeadLetters(limit,
                       [call, response](absl::StatusOr<std::vector<http::DeadLetter>> letters) {
                         if (!letters.ok()) {
                           call->Finish(letters.status());
                           return;
                         }
                         for (const http::DeadLetter& letter : *letters) {
                           v1::DeadLetter* out_letter = response->add_letters();
                           out_letter->set_id(letter.id);
                           out_letter->set_target(letter.target);
                           out_letter->set_event_type(letter.event_type);
                           out_letter->set_payload(letter.payload);
                           out_letter->set_attempts(letter.attempts);
                           out_letter->set_error(letter.error);
                           SetTimestamp(letter.time, out_letter->mutable_time());
                         }
                         call->Finish(grpc::Status::OK);
                       });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::ReplayDeadLetter(grpc::CallbackServerContext* context,
                                                         const v1::ReplayDeadLetterRequest* request,
                                                         v1::ReplayDeadLetterResponse* response) {
  (void)response;
  auto call = control_.BeginUnary(context, methods::kReplayDeadLetter);
  if (!call->authorized()) return call->reactor();
  call->set_target(request->id());
  http::WebhooksOut* out = control_.services().webhooks_out;
  if (out == nullptr) {
    return call->Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, kNoWebhooksOut));
  }
  if (request->id().empty() || request->id().size() > 64) {
    return call->Finish(InvalidArgument("id must be a dead letter's id"));
  }
  out->Replay(request->id(), [call](absl::Status status) { call->Finish(status); });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::CreatePairingCode(
    grpc::CallbackServerContext* context, const v1::CreatePairingCodeRequest* request,
    v1::CreatePairingCodeResponse* response) {
  (void)request;
  auto call = control_.BeginUnary(context, methods::kCreatePairingCode);
  if (!call->authorized()) return call->reactor();
  control_.OnLoop([this, call, response] {
    agent::RuntimeServices& runtime = control_.services().runtime;
    const absl::Time now = runtime.clock();
    const std::string code = runtime.pairing.Create(now);
    if (code.empty()) {
      call->Finish(grpc::Status(grpc::StatusCode::INTERNAL, "no randomness for a code"));
      return;
    }
    response->set_code(code);
    SetTimestamp(now + absl::Minutes(10), response->mutable_expires_at());
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

namespace {

constexpr char kNoSchedules[] = "schedules are off ([schedules] enabled = false)";

void SetSchedule(const schedule::Schedule& schedule, v1::Schedule* out) {
  absl::StatusOr<absl::TimeZone> zone = base::LoadNamedTimeZone(schedule.zone);
  out->set_id(schedule.id);
  out->set_conversation(base::ConversationName(schedule.owner));
  out->set_author(schedule.author);
  out->set_name(schedule.name);
  out->set_prompt(schedule.prompt);
  out->set_recurrence(schedule.recurrence.Describe(zone.ok() ? *zone : absl::UTCTimeZone()));
  out->set_timezone(schedule.zone);
  SetTimestamp(schedule.next, out->mutable_next_run());
  if (schedule.last_run != absl::InfinitePast()) {
    SetTimestamp(schedule.last_run, out->mutable_last_run());
  }
  out->set_runs(schedule.runs);
}

// The chat or room `name` ("direct:JID", "room:JID") names, its JID normalised as the
// scheduler keeps owners; nullopt for anything else (an API conversation has no schedules).
std::optional<base::ConversationRef> ScheduleOwner(const std::string& name) {
  std::optional<base::ConversationRef> ref = base::ParseConversationName(name);
  if (!ref.has_value() || ref->kind == base::ConversationRef::Kind::kApi) return std::nullopt;
  absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(ref->address);
  if (!jid.ok()) return std::nullopt;
  ref->address = jid->BareString();
  return ref;
}

}  // namespace

grpc::ServerUnaryReactor* AdminService::ListSchedules(grpc::CallbackServerContext* context,
                                                      const v1::ListSchedulesRequest* request,
                                                      v1::ListSchedulesResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListSchedules);
  if (!call->authorized()) return call->reactor();
  call->set_target(request->conversation());
  schedule::Scheduler* scheduler = control_.services().scheduler;
  if (scheduler == nullptr) {
    return call->Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, kNoSchedules));
  }
  std::optional<base::ConversationRef> owner;
  if (!request->conversation().empty()) {
    owner = ScheduleOwner(request->conversation());
    if (!owner.has_value()) {
      return call->Finish(InvalidArgument("conversation: expected direct:JID or room:JID"));
    }
  }
  control_.OnLoop([scheduler, call, response, owner = std::move(owner)] {
    for (const schedule::Schedule& schedule :
         scheduler->List(owner.has_value() ? &*owner : nullptr)) {
      SetSchedule(schedule, response->add_schedules());
    }
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::CancelSchedule(grpc::CallbackServerContext* context,
                                                       const v1::CancelScheduleRequest* request,
                                                       v1::CancelScheduleResponse* response) {
  (void)response;
  auto call = control_.BeginUnary(context, methods::kCancelSchedule);
  if (!call->authorized()) return call->reactor();
  const int64_t id = request->id();
  call->set_target(absl::StrCat("schedule:", id));
  schedule::Scheduler* scheduler = control_.services().scheduler;
  if (scheduler == nullptr) {
    return call->Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, kNoSchedules));
  }
  if (id <= 0) return call->Finish(InvalidArgument("id must be a schedule's id (1 or more)"));
  // The operator may cancel any schedule, an operator's ([[schedules.task]]) too.
  control_.OnLoop(
      [scheduler, call, id] { call->Finish(scheduler->Cancel(id, /*owner=*/nullptr)); });
  return call->reactor();
}

}  // namespace herald::control
