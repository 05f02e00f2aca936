// libFuzzer target for the translation of inbound stanzas into the agent's events: the input
// is the content of a component stream (stanzas back to back), and each stanza goes through
// every reader a hostile peer can reach — TranslateMessage (chats, rooms, reactions, replies
// and their XEP-0428 fallback, invitations), TranslatePresence, TranslateCommandRequest, the
// agent protocol's TranslateAgentRequest and TranslateAgentAnswer, and the XEP-0313
// ArchiveReader (a room's archive and the account's). None may crash, and what they
// give the agent must hold: a reply's quote and the text left are whole UTF-8 characters that
// together are the body, and reactions and archives stay within their caps.
//
//   tests/fuzz/run stanza           # builds with clang and fuzzes for FUZZ_SECONDS
//   stanza_fuzzer corpus_dir/       # by hand, once built

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "component/xmpp/adhoc_commands.h"
#include "component/xmpp/agent_protocol.h"
#include "component/xmpp/archive_query.h"
#include "component/xmpp/stanza_translation.h"
#include "component/xmpp/stream_parser.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

[[noreturn]] void Fail(const char* what, std::string_view input) {
  std::fprintf(stderr, "%s\n--- input (%zu bytes): %.*s\n", what, input.size(),
               static_cast<int>(input.size()), input.data());
  std::abort();
}

// Whether `text` is well-formed UTF-8 (RFC 3629), checked on its own terms.
bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const uint8_t b0 = static_cast<uint8_t>(text[i]);
    size_t extra = b0 < 0x80             ? 0
                   : (b0 & 0xE0) == 0xC0 ? 1
                   : (b0 & 0xF0) == 0xE0 ? 2
                   : (b0 & 0xF8) == 0xF0 ? 3
                                         : 4;
    if (extra == 4 || text.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      if ((static_cast<uint8_t>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += extra + 1;
  }
  return true;
}

class Stanzas : public StreamParser::Handler {
 public:
  void OnStreamOpen(const XmlElement&, std::string_view) override {}
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    if (stanzas.size() < 64) stanzas.push_back(std::move(stanza));
  }
  void OnStreamClose() override {}
  std::vector<std::unique_ptr<XmlElement>> stanzas;
};

void CheckReply(const Reply& reply, const XmlElement& message, std::string_view body,
                std::string_view input) {
  const std::string original = message.ChildText("body");
  if (reply.quote.size() + body.size() != original.size()) {
    Fail("a reply's quote and the text left are not the body", input);
  }
  if (!reply.quote.empty() && reply.id.empty()) Fail("a quote cut without a reply", input);
  if (IsUtf8(original) && (!IsUtf8(reply.quote) || !IsUtf8(body))) {
    Fail("a reply's fallback was cut inside a character", input);
  }
}

void Check(std::string_view input) {
  Stanzas handler;
  StreamParser parser(StreamLimits{}, &handler);
  const std::string stream =
      "<stream:stream xmlns='jabber:component:accept' "
      "xmlns:stream='http://etherx.jabber.org/streams'>" +
      std::string(input);
  (void)parser.Feed(stream);

  const Jid own = Jid::Parse("herald.localhost").value();
  const Jid account = Jid::Parse("herald@localhost/herald").value();
  const absl::flat_hash_set<std::string> rooms = {"lobby@conference.localhost"};
  QueryArchive room_query{
      .room = Jid::Parse("lobby@conference.localhost").value(), .nick = "herald", .max = 5};
  QueryArchive account_query{.max = 5};
  ArchiveReader room_archive(room_query, account);
  ArchiveReader account_archive(account_query, account);

  for (const std::unique_ptr<XmlElement>& stanza : handler.stanzas) {
    InboundMessage in = TranslateMessage(*stanza, own);
    if (in.event.has_value()) {
      if (const auto* chat = std::get_if<ChatMessage>(&*in.event)) {
        CheckReply(chat->reply, *stanza, chat->body, input);
      } else if (const auto* group = std::get_if<GroupMessage>(&*in.event)) {
        CheckReply(group->reply, *stanza, group->body, input);
      } else if (const auto* reactions = std::get_if<MessageReactions>(&*in.event)) {
        if (reactions->reactions.size() > kMaxReactions) Fail("too many reactions", input);
        for (const std::string& reaction : reactions->reactions) {
          if (reaction.empty() || reaction.size() > kMaxReactionBytes) {
            Fail("a reaction out of bounds", input);
          }
        }
      }
    }
    (void)TranslatePresence(*stanza, own, rooms);
    (void)TranslateCommandRequest(*stanza);
    if (std::optional<AgentRequest> request = TranslateAgentRequest(*stanza)) {
      if (request->malformed.empty() &&
          (request->arguments_json.size() > kMaxAgentArgumentsBytes ||
           request->text.size() > kMaxAgentTextBytes ||
           request->thread.size() > kMaxAgentThreadBytes ||
           request->skill.size() > kMaxAgentNameBytes ||
           request->action_id.size() > kMaxAgentNameBytes || request->hops < 0 ||
           request->hops > kMaxAgentHops || request->timeout < absl::ZeroDuration())) {
        Fail("an agent request out of bounds passed as well-formed", input);
      }
    }
    if (absl::StatusOr<Jid> from = Jid::Parse(stanza->Attr("from")); from.ok()) {
      if (std::optional<AgentAnswer> answer = TranslateAgentAnswer(*stanza, *from, "c1")) {
        if (answer->input_tokens < 0 || answer->output_tokens < 0) {
          Fail("an agent answer with negative tokens", input);
        }
      }
    }
    (void)room_archive.Read(*stanza, "q1");
    (void)account_archive.Read(*stanza, "q1");
  }
  for (ArchiveReader* reader : {&room_archive, &account_archive}) {
    ArchiveResult result = std::move(*reader).Finish(XmlElement("iq").SetAttr("type", "result"));
    if (result.messages.size() > 5) Fail("an archive kept more than it asked for", input);
    for (const ArchivedMessage& message : result.messages) {
      if (message.body.empty()) Fail("an archived message without text", input);
    }
  }
}

}  // namespace
}  // namespace herald::xmpp

// The readers log what they drop; at millions of inputs a second that is only noise.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_minloglevel = google::GLOG_FATAL;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  herald::xmpp::Check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
