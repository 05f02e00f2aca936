// The keys of [agent] (who Herald talks to, how conversations run) and [[rooms]].
//
// Declared as key_declarations.h says; docs/configuration.md's key tables are made from
// these (`bazel run //tools/config:config_reference`).

#include <vector>

#include "component/config/key_declarations.h"

namespace herald::config::declare {

void DeclareAgentKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("agent", K::kTable),
      Applies(
          "agent.name", K::kString, [](auto& c) -> auto& { return c.agent.name; })
          .Doc("`\"Herald\"`", "the agent's display name"),
      Applies(
          "agent.allowed_jids", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.allowed_jids; })
          .Doc("`[]`",
               "bare JIDs that may talk to Herald, whatever their domain; `\"*\"` = anyone from an "
               "allowed domain. Empty: nobody is served. See [who may talk to "
               "Herald](operators.md#who-may-talk-to-herald)."),
      Applies(
          "agent.allowed_domains", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.allowed_domains; })
          .Doc("the server's own domain",
               "domains whose users may be served; `[\"*\"]` = any domain (federation). The "
               "default is the parent of `component_domain` in component mode (`agent.localhost` → "
               "`localhost`; a single-label domain is used as it is), the domain of `jid` in "
               "client mode."),
      Applies(
          "agent.admin_jids", K::kStringArray, [](auto& c) -> auto& { return c.agent.admin_jids; })
          .Doc("`[]`",
               "bare JIDs that may use admin commands (`/usage <jid>`, ...); `\"*\"` is refused"),
      Restart(
          "agent.dev_command_jids", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.dev_command_jids; })
          .Doc("`[]`",
               "bare JIDs that may use `/debug`, `/raw`, ...; empty = those commands are off; "
               "`\"*\"` is refused"),
      Applies(
          "agent.unallowed", K::kString, [](auto& c) -> auto& { return c.agent.unallowed; })
          .Doc("`\"silent\"`",
               "what a sender outside the allowlists gets: `\"silent\"` (nothing) or `\"reply\"` "
               "(one short refusal, at most once an hour per sender). Either way nothing reaches "
               "the agent and the attempt is logged."),
      Applies(
          "agent.max_tool_rounds", K::kInteger,
          [](auto& c) -> auto& { return c.agent.max_tool_rounds; })
          .Range(1, 50)
          .Doc("`6`",
               "LLM rounds with tools per message; after the last one Herald makes one final call "
               "without tools, so a model that keeps calling tools still has to answer"),
      Applies(
          "agent.mailbox_limit", K::kInteger,
          [](auto& c) -> auto& { return c.agent.mailbox_limit; })
          .Range(1, 1000)
          .Doc("`8`",
               "messages waiting in one conversation (one JID or room); beyond it the sender gets "
               "a short \"busy\" reply instead"),
      Restart(
          "agent.rate_limit_per_minute", K::kInteger,
          [](auto& c) -> auto& { return c.agent.rate_limit_per_minute; })
          .Range(0, 10'000)
          .Doc("`20`", "messages per sender per minute that reach the agent; `0` = unlimited"),
      Applies(
          "agent.session_idle_minutes", K::kInteger,  // at most a year
          [](auto& c) -> auto& { return c.agent.session_idle_minutes; })
          .Range(0, 525'600)
          .Doc("`240`",
               "after this much silence the next message starts a new session (the old one is "
               "archived); `0` = never"),
      Applies(
          "agent.history_messages", K::kInteger,
          [](auto& c) -> auto& { return c.agent.history_messages; })
          .Range(0, 1000)
          .Doc("`40`",
               "how many past messages of the session are sent to the model with each turn"),
      Applies(
          "agent.carry_over_summary", K::kBoolean,
          [](auto& c) -> auto& { return c.agent.carry_over_summary; })
          .Doc("`false`",
               "when a session ends, summarise it into the JID's `context.md` with the `light` "
               "tier"),
      Applies(
          "agent.stream_answers", K::kString,
          [](auto& c) -> auto& { return c.agent.stream_answers; })
          .Doc("`\"announced\"`",
               "streamed answers (XEP-0308): the first part of an answer goes out as soon as "
               "there is a sentence, and the message is corrected as the model writes. "
               "`\"announced\"`: to clients whose disco#info lists corrections, and in rooms; "
               "`\"always\"`: to every client (one that cannot show corrections shows each as a "
               "new message); `\"off\"`: one message once the answer is whole. See "
               "[streamed answers](xmpp.md#streamed-answers-xep-0308)."),
      Applies(
          "agent.planning", K::kString, [](auto& c) -> auto& { return c.agent.planning; })
          .Doc("`\"on_request\"`",
               "plans ([plans.md](plans.md)): `\"on_request\"` proposes them for `/plan <task>` "
               "only; `\"auto\"` also lets the model propose them when it judges a task "
               "complex (1:1 chats and programs)"),
      Applies(
          "agent.stream_first_part_ms", K::kInteger,
          [](auto& c) -> auto& { return c.agent.stream_first_part_ms; })
          .Range(0, 60000)
          .Doc("`1000`",
               "a streamed answer's first part goes out at the end of its first sentence (once "
               "the text has been coming for 250 ms), or after this many milliseconds of text, "
               "whichever comes first; `0` = with the first text"),
      Applies(
          "agent.correction_interval_ms", K::kInteger,
          [](auto& c) -> auto& { return c.agent.correction_interval_ms; })
          .Range(250, 60000)
          .Doc("`700`", "at most one correction of a streamed answer this often, in a chat"),
      Applies(
          "agent.room_correction_interval_ms", K::kInteger,
          [](auto& c) -> auto& { return c.agent.room_correction_interval_ms; })
          .Range(500, 60000)
          .Doc("`2000`", "at most one correction of a streamed answer this often, in a room"),
      Applies(
          "agent.room_reactions", K::kBoolean,
          [](auto& c) -> auto& { return c.agent.room_reactions; })
          .Doc("`true`",
               "mark a room message Herald works on with 👀 and one it could not answer with "
               "⚠️ "
               "(XEP-0444 reactions); the 👀 is taken back once the answer is there"),
      Applies(
          "agent.room_archive_messages", K::kInteger,
          [](auto& c) -> auto& { return c.agent.room_archive_messages; })
          .Range(0, 200)
          .Doc("`20`",
               "on joining a room whose service keeps an archive (XEP-0313), read at most this "
               "many of its last messages into the room's history, so Herald does not start "
               "blind; `0` = none. See [room archives](xmpp.md#room-archives-xep-0313)."),
      Applies(
          "agent.room_archive_minutes", K::kInteger,
          [](auto& c) -> auto& { return c.agent.room_archive_minutes; })
          .Range(1, 525600)
          .Doc("`240`",
               "how far back those messages may go (never past `session_idle_minutes`, after "
               "which they would start a session of their own)"),
      Applies(
          "agent.catch_up", K::kString, [](auto& c) -> auto& { return c.agent.catch_up; })
          .Doc("`\"answer\"`",
               "client mode: what Herald does, on logging in again, with the chats that reached "
               "its account while it was away (read from the account's XEP-0313 archive): "
               "`\"answer\"` (one answer to each sender, to all they wrote), `\"summarize\"` "
               "(kept in the history, and one note to each sender that Herald was away), "
               "`\"ignore\"` (kept in the history only) or `\"off\"` (not read). Never a "
               "message twice. See [catching up](xmpp.md#catching-up-after-downtime)."),
      Applies(
          "agent.catch_up_minutes", K::kInteger,
          [](auto& c) -> auto& { return c.agent.catch_up_minutes; })
          .Range(1, 43200)
          .Doc("`120`", "how old a missed chat may be and still be caught up"),
      Applies(
          "agent.greet_after_hours", K::kInteger,
          [](auto& c) -> auto& { return c.agent.greet_after_hours; })
          .Range(0, 8760)
          .Doc("`0` (never)",
               "greet a person who comes online after at least this many hours away (as their "
               "presence showed Herald; a turn on the light tier). See "
               "[proactivity.md](proactivity.md#greeting-people-who-come-back)"),
      Restart(
          "agent.injection_policy", K::kString,
          [](auto& c) -> auto& { return c.agent.injection_policy; })
          .Doc("`\"flag\"`",
               "what the prompt-injection screen does with a message that matches: `\"refuse\"` "
               "(the message does not reach the model), `\"flag\"` (it reaches the model marked as "
               "suspicious), `\"log\"` (only logged), `\"off\"` (no screening)"),
      Restart(
          "agent.injection_phrases", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.injection_phrases; })
          .Doc("`[]`",
               "extra phrases the screen treats as injection, beside its built-in ones; matched "
               "without regard to case. Each 1–200 characters and not only spaces."),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

void DeclareRoomKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Applies(
          "rooms", K::kTableArray, [](auto& c) -> auto& { return c.rooms; }),
      Part("rooms.jid", K::kString)
          .Type("string, bare JID with a localpart")
          .Doc("— (required)",
               "the room (`lobby@conference.example.org`); each room once. With several "
               "instances on one database give them all the same rooms: one is in each "
               "([scale-out.md](scale-out.md#rooms))"),
      Part("rooms.nick", K::kString)
          .Type("string, not empty")
          .Doc("`\"herald\"`", "Herald's nickname in the room"),
      Part("rooms.activation", K::kString)
          .Doc("`\"mention\"`",
               "`\"mention\"`: answer when addressed by nick; `\"all\"`: every message"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

}  // namespace herald::config::declare

namespace herald::config::declare {

void DeclareScheduleKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("schedules", K::kTable),
      Restart(
          "schedules.enabled", K::kBoolean, [](auto& c) -> auto& { return c.schedules.enabled; })
          .Doc("`true`",
               "reminders and recurring prompts: the `schedule` skill (when `[skills] enabled` "
               "lists it), `/schedules`, `/timezone`, `heraldctl schedules` "
               "([proactivity.md](proactivity.md))"),
      Restart(
          "schedules.path", K::kString, [](auto& c) -> auto& { return c.schedules.path; })
          .Type("string, not empty")
          .Doc("`\"./data/schedules.db\"`",
               "the schedules and people's time zones (SQLite, mode 0600); they survive "
               "restarts. Not used with `[storage] backend = \"postgresql\"`: they are then in "
               "the shared database"),
      Restart(
          "schedules.max_per_user", K::kInteger,
          [](auto& c) -> auto& { return c.schedules.max_per_user; })
          .Range(1, 1000)
          .Doc("`20`", "schedules one chat or room may have"),
      Restart(
          "schedules.min_interval_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.schedules.min_interval_seconds; })
          .Range(1, 86400)
          .Doc("`300`", "a recurring schedule people make may not run more often than this"),
      Restart(
          "schedules.missed", K::kString, [](auto& c) -> auto& { return c.schedules.missed; })
          .Type("`\"run_once\"` or `\"skip\"`")
          .Doc("`\"run_once\"`",
               "a run that fell due while Herald was down runs once at start, or is skipped to "
               "the next time"),
      Restart(
          "schedules.task", K::kTableArray, [](auto& c) -> auto& { return c.schedules.tasks; }),
      Part("schedules.task.name", K::kString)
          .Type("string, 1-64 of `a-z 0-9 _ -`, unique")
          .Doc("— (required)", "names the schedule in listings; people cannot cancel it"),
      Part("schedules.task.to", K::kString)
          .Type("string, bare JID")
          .Doc("— (required)", "whose turn it is: a user's chat, or a room of `[[rooms]]`"),
      Part("schedules.task.prompt", K::kString)
          .Type("string, not empty")
          .Doc("— (required)", "what the model is asked each time (a turn on the light tier)"),
      Part("schedules.task.when", K::kString)
          .Type("string")
          .Doc("— (required)",
               "`\"every 1d\"` (s, m, h, d, w) or `\"cron 0 9 * * MON-FRI\"` (five fields, or "
               "`@daily` and the like)"),
      Part("schedules.task.timezone", K::kString)
          .Type("string, IANA name")
          .Doc("`\"UTC\"`", "the zone a cron expression is read in"),
      Restart(
          "pubsub", K::kTableArray, [](auto& c) -> auto& { return c.agent.pubsub; }),
      Part("pubsub.service", K::kString)
          .Type("string, bare JID")
          .Doc("— (required)",
               "the pubsub service (`pubsub.example.org`, XEP-0060), or a person whose PEP node "
               "it is (XEP-0163)"),
      Part("pubsub.node", K::kString)
          .Type("string, at most 256 bytes")
          .Doc("— (required)", "the node Herald subscribes to when it comes online"),
      Part("pubsub.to", K::kString)
          .Type("string, bare JID")
          .Doc("— (required)", "where its new items go: a user's chat, or a room of `[[rooms]]`"),
      Part("pubsub.prompt", K::kString)
          .Doc("`\"\"`",
               "empty: each item's text is said as it is; else each item is a turn on the light "
               "tier with this instruction and the item quoted (e.g. \"Summarise this release "
               "note in one line.\")"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

void DeclareAgentProtocolKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("agent_protocol", K::kTable),
      Restart(
          "agent_protocol.enabled", K::kBoolean,
          [](auto& c) -> auto& { return c.agent_protocol.enabled; })
          .Doc("`false`",
               "Herald's skills over IQ (`urn:herald:agent:0`) for the peers below "
               "([agent-protocol.md](agent-protocol.md)); disco#info lists the feature"),
      Restart(
          "agent_protocol.max_hops", K::kInteger,
          [](auto& c) -> auto& { return c.agent_protocol.max_hops; })
          .Range(0, 20)
          .Doc("`3`", "a request that passed through more agents than this is refused"),
      Restart(
          "agent_protocol.requests_per_minute", K::kInteger,
          [](auto& c) -> auto& { return c.agent_protocol.requests_per_minute; })
          .Range(1, 100000)
          .Doc("`60`", "requests one peer may make per minute"),
      Restart(
          "agent_protocol.max_concurrent", K::kInteger,
          [](auto& c) -> auto& { return c.agent_protocol.max_concurrent; })
          .Range(1, 1000)
          .Doc("`4`", "runs (execute, ask) of one peer at once"),
      Restart(
          "agent_protocol.max_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.agent_protocol.max_timeout_seconds; })
          .Range(1, 86400)
          .Doc("`300`", "a request's own timeout is cut to this"),
      Restart(
          "agent_protocol.peer", K::kTableArray,
          [](auto& c) -> auto& { return c.agent_protocol.peers; }),
      Part("agent_protocol.peer.jid", K::kString)
          .Type("string, bare JID or domain, each once")
          .Doc("— (required)", "the peer, matched on the sender's bare JID"),
      Part("agent_protocol.peer.scopes", K::kStringArray)
          .Type("list of `\"read\"`, `\"execute\"`, `\"operate\"`")
          .Doc("— (required)",
               "what it may do: `read` lists skills, `execute` runs one, `operate` asks a "
               "question and confirms pending actions (as the control tokens' scopes)"),
      Part("delegate", K::kTable),
      Restart(
          "delegate.agent", K::kTableArray, [](auto& c) -> auto& { return c.delegate; }),
      Part("delegate.agent.name", K::kString)
          .Type("string, 1-64 of `a-z 0-9 _ -`, unique")
          .Doc("— (required)", "what the `delegate` skill calls the agent"),
      Part("delegate.agent.description", K::kString)
          .Doc("`\"\"`", "what it is good for; the model reads it"),
      Part("delegate.agent.jid", K::kString)
          .Type("string, JID")
          .Doc("—",
               "an agent speaking `urn:herald:agent:0` (a full JID for one in client mode); "
               "or `grpc`"),
      Part("delegate.agent.grpc", K::kString)
          .Type("string, `HOST:PORT`")
          .Doc("—", "another Herald's control plane; or `jid`"),
      Part("delegate.agent.token", K::kString, kSecret)
          .Type("string, not empty")
          .Doc("— (with `grpc`)",
               "its control token (scopes `execute` for skills, `operate` for questions); best "
               "`\"${VAR}\"`"),
      Part("delegate.agent.tls_ca_file", K::kString)
          .Type("string, path")
          .Doc("`\"\"`", "with `grpc`: TLS verified by this CA; empty: plaintext (loopback)"),
      Part("delegate.agent.timeout_seconds", K::kInteger)
          .Range(1, 3600)
          .Doc("`60`",
               "how long one delegation may take (less when the run's own deadline is "
               "nearer)"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

}  // namespace herald::config::declare
