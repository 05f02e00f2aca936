// Conversation's pre_turn hook step (docs/hooks.md): before a turn reads anything, the hooks
// programs attached may rewrite or refuse the message, or add notes for the model.

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/agent/conversation.h"
#include "component/base/conversation_ref.h"

namespace herald::agent {

using base::ConversationRef;

asio::awaitable<bool> Conversation::PassPreTurnHooks(IncomingMessage& message) {
  if (services_.hooks == nullptr || !services_.hooks->Any(HookPoint::kPreTurn)) co_return true;
  // Named, not a temporary: GCC 12 mishandles class temporaries passed to a coroutine.
  HookCall call{.conversation = base::ConversationName(ref_),
                .jid = ref_.kind == ConversationRef::Kind::kApi ? std::string() : ref_.address,
                .author = message.author,
                .text = message.body,
                .run_id = message.run_id};
  HookOutcome outcome = co_await services_.hooks->Run(HookPoint::kPreTurn, std::move(call));
  if (!outcome.refused) {
    message.body = std::move(outcome.text);
    message.hook_context = std::move(outcome.context);
    co_return true;
  }
  Publish(events::EventType::kRunFailed, message.run_id,
          absl::StrCat("a message was refused by the hook '", outcome.refused_by, "'"),
          {{"hook", outcome.refused_by}});
  if (message.sink) {
    message.sink(RunEvent{.kind = RunEvent::Kind::kFailed,
                          .time = services_.clock(),
                          .run_id = message.run_id,
                          .text = outcome.reason,
                          .failure = RunEvent::Failure::kRefused});
  } else {
    Reply(message, std::move(outcome.reason), /*active=*/false);
  }
  co_return false;
}

}  // namespace herald::agent
