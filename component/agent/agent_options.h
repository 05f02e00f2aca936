// component/agent/agent_options.h
//
// What the agent runtime is configured with: who may talk to it ([agent] allowlists), how its
// conversations behave (mailboxes, rounds, sessions, the injection screen), the rooms it is
// in ([[rooms]]), and what each turn needs from other sections (TurnOptions). component/config
// fills them from the file; the control plane and SIGHUP hand new ones to the runtime.
//
//   AgentOptions options;
//   options.allowed_jids = {"alice@example.org"};
//   absl::StatusOr<AccessPolicy> policy = AccessPolicy::Create(options);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "skills/approvals/approval_rules.h"

namespace herald::agent {

// What a JID or domain outside the allowlists gets (SPEC §9: nothing reaches the agent).
enum class RefusalMode { kSilent, kReply };

// [[pubsub]]: a node of a pubsub service (XEP-0060), or of a person's PEP (XEP-0163), whose
// new items are said in a chat or a room, or become a turn there.
struct PubsubFeed {
  std::string service;  // bare JID
  std::string node;
  std::string to;        // a bare JID (a chat) or a room of [[rooms]]
  bool to_room = false;  // set by the config loader from [[rooms]]
  std::string prompt;    // "": the item's text is said as it is; else a light-tier turn
  friend bool operator==(const PubsubFeed&, const PubsubFeed&) = default;
};

// [[agent_protocol.peer]]: another agent that may drive Herald over urn:herald:agent:0
// (docs/agent-protocol.md), with the scopes a control token would have.
struct AgentPeer {
  std::string jid;  // a bare JID or a domain, lower case
  std::vector<std::string>
      scopes;  // "read" (skills), "execute" (execute), "operate" (ask, confirm)
  friend bool operator==(const AgentPeer&, const AgentPeer&) = default;
};

// [agent_protocol]: Herald's skills over IQ for the peers named.
struct AgentProtocolOptions {
  bool enabled = false;
  int max_hops = 3;               // a request that passed through more agents is refused
  int requests_per_minute = 60;   // per peer
  int max_concurrent = 4;         // runs of one peer at once
  int max_timeout_seconds = 300;  // a request's timeout is cut to this
  std::vector<AgentPeer> peers;
  friend bool operator==(const AgentProtocolOptions&, const AgentProtocolOptions&) = default;
};

// [[delegate.agent]]: an agent the `delegate` skill may ask (docs/agent-protocol.md): over
// XMPP (`jid`) or over another Herald's control plane (`grpc`, with a control token).
struct DelegateTarget {
  std::string name;
  std::string description;
  std::string jid;          // speaks urn:herald:agent:0; "" when `grpc` is set
  std::string grpc;         // "HOST:PORT" of a Herald control plane
  std::string token;        // its bearer token (a secret)
  std::string tls_ca_file;  // "" = plaintext (loopback), else TLS verified by this CA
  int timeout_seconds = 60;
  friend bool operator==(const DelegateTarget&, const DelegateTarget&) = default;
};

struct AgentOptions {
  std::string name = "Herald";
  std::vector<std::string> allowed_jids;     // bare JIDs; "*" = anyone from an allowed domain
  std::vector<std::string> allowed_domains;  // default: the server's own domain; "*" = any
  std::vector<std::string> admin_jids;
  std::vector<std::string> dev_command_jids;
  // Who may add notes to the shared knowledge folder with /remember shared ([memory]
  // shared_writers): bare JIDs, and "admins" for admin_jids.
  std::vector<std::string> shared_memory_writers = {"admins"};
  RefusalMode unallowed = RefusalMode::kSilent;

  // The agent runtime (A1–A6).
  int max_tool_rounds = 6;          // LLM rounds with tools before one final call without
  int mailbox_limit = 8;            // messages waiting per conversation before "busy"
  int rate_limit_per_minute = 20;   // messages per sender per minute; 0 = unlimited
  int session_idle_minutes = 240;   // a new session after this much silence; 0 = never
  int history_messages = 40;        // past messages of the session sent to the model
  bool carry_over_summary = false;  // summarise an ending session into context.md (light tier)
  // Prompt-injection screen: "refuse" | "flag" (tell the model) | "log" | "off".
  std::string injection_policy = "flag";
  // Extra case-insensitive phrases the screen treats as injection, beside the built-in ones.
  std::vector<std::string> injection_phrases;

  // Streamed answers (XEP-0308): the first part of an answer goes out early and is corrected
  // as the model writes. "announced": to clients whose disco#info lists corrections, and in
  // rooms; "always": to every client too; "off": one message when the answer is whole.
  std::string stream_answers = "announced";
  // Plans (S9; plan_turn.h): "on_request" (only /plan) or "auto" (the model may also choose to
  // propose plans, with the propose_plans tool, when it judges a task complex; 1:1 chats and
  // programs only).
  std::string planning = "on_request";
  int stream_first_part_ms = 1000;         // the first part waits for a sentence or this long
  int correction_interval_ms = 700;        // at most one correction this often in a chat
  int room_correction_interval_ms = 2000;  // and in a room
  // XEP-0444: mark a room message Herald works on (👀), and one it could not answer (⚠️).
  bool room_reactions = true;
  // XEP-0313: on joining a room whose service archives, its last messages (at most this many,
  // none older than room_archive_minutes or the session idle time) become the room's history;
  // 0 = none.
  int room_archive_messages = 20;
  int room_archive_minutes = 240;
  // Client mode: on logging in again, the chats that reached the account while Herald was
  // away (its XEP-0313 archive, at most catch_up_minutes old): "answer" (one turn per sender
  // with all of them), "summarize" (kept in the history, and one note to the sender),
  // "ignore" (kept in the history only) or "off" (not asked for).
  std::string catch_up = "answer";
  int catch_up_minutes = 120;
  // Greet a person whose presence comes back after at least this many hours offline (seen
  // going offline by this Herald): a turn on the light tier; 0 = never.
  int greet_after_hours = 0;
  // [[pubsub]]: nodes Herald subscribes to when it comes online, and where their items go.
  std::vector<PubsubFeed> pubsub;

  friend bool operator==(const AgentOptions&, const AgentOptions&) = default;
};

// [attachments] (attachments.h, docs/media.md): reading the files people send.
struct AttachmentOptions {
  bool enabled = true;
  size_t max_bytes = 10 << 20;  // of one file
  size_t max_per_message = 4;
  absl::Duration timeout = absl::Seconds(30);  // one download
  size_t text_budget_bytes = 32 << 10;         // documents' text per message
  int max_pdf_pages = 50;
  // Exempt from the private-address refusal (url_fetch's forms).
  std::vector<std::string> allow_hosts;
  bool vision = false;  // [llm.tiers] vision is set: pictures can be shown to a model
  // Files out (file_sender.h): what one run may send, and one upload's time.
  size_t send_max_files = 4;
  size_t send_max_bytes = 10 << 20;
  absl::Duration send_timeout = absl::Seconds(60);
};

// [skills.image_generate] (image_skill.h): the `image_generate` skill exists when a model is set.
struct ImageGenerationOptions {
  std::string model;  // "openai:<model>" (/v1/images/generations of [llm.openai]); "" = none
  std::string size = "1024x1024";
};

// [voice] (voice.h, docs/media.md): voice messages as text, and answers spoken.
struct VoiceOptions {
  // "local" (PocketSphinx on this machine), "openai:<model>" (/v1/audio/transcriptions of
  // [llm.openai]) or "off".
  std::string transcription = "local";
  // "local" (espeak-ng on this machine), "openai:<model>" (/v1/audio/speech) or "off".
  std::string speech = "local";
  // The provider's voice ("alloy") or espeak-ng's ("en-us"); "" for each one's default.
  std::string voice;
  bool show_transcript = true;      // a voice message's transcript is said back to the sender
  bool answer_voice_notes = false;  // a voice message is answered with a spoken answer too
  int max_seconds = 120;            // the longest voice message read, and answer spoken
};

// What a turn needs beyond [agent]: the limits of each model call ([llm]), which tool runs wait
// for a person ([skills.approvals]) and for how long a missing credential is waited for
// ([skills]), and the largest message a program may send through the control plane.
struct TurnOptions {
  int max_tokens = 1024;  // per LLM call
  bool stream = true;     // stream answers where the provider can
  skills::ApprovalRules approvals;
  int credential_timeout_seconds = 900;
  int max_message_bytes = 512 * 1024;
  // Registry tools ([skills] pinned_tools, blocked_tools; registry_tools.h).
  std::vector<std::string> pinned_tools;
  std::vector<std::string> blocked_tools;

  friend bool operator==(const TurnOptions&, const TurnOptions&) = default;
};

// One room Herald is configured to be in ([[rooms]], or joined at run time).
struct RoomSettings {
  std::string jid;
  std::string nick = "herald";
  std::string activation = "mention";  // "mention" | "all"

  friend bool operator==(const RoomSettings&, const RoomSettings&) = default;
};

}  // namespace herald::agent
