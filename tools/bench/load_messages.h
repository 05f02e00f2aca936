// tools/bench/load_messages.h
//
// The messages conversation_load sends and how a reply is traced back to one. Every message
// carries a token (tok-c17: message 17 of the concurrent phase; tok-o4242: of the overhead
// phase) that the fake LLM echoes in its answer, so each reply can be checked against the JID
// it reached, and each LLM request matched to the stanza it came from.
//
//   env.server->Send(MessageXml(kConcurrent, 17, rate_jids));   // from user17@localhost/load
//   std::optional<Token> token = FindToken(request.LastUserText());   // {kConcurrent, 17}
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace herald::bench {

inline constexpr int kConcurrent = 0;  // phase indexes, also the token letters 'c' and 'o'
inline constexpr int kOverhead = 1;
inline constexpr char kComponentDomain[] = "agent.localhost";
// What the fake LLM's answer starts with, before the token it answers.
inline constexpr char kAnswerPrefix[] = "answer ";

struct Token {
  int phase = 0;
  int index = 0;
};

// The last token in `text`, if any.
std::optional<Token> FindToken(std::string_view text);

std::string TokenText(int phase, int index);

// The local part of the bare JID message `index` of `phase` comes from: user<index> in the
// concurrent phase, rate<index % rate_jids> in the overhead phase.
std::string SenderLocal(int phase, int index, int rate_jids);

// The <message/> stanza of message `index` of `phase`, to the component.
std::string MessageXml(int phase, int index, int rate_jids);

}  // namespace herald::bench
