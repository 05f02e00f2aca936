// The keys of [attachments] and [voice]: the files people send and Herald sends, voice messages
// (docs/media.md).
//
// Declared as key_declarations.h says; docs/configuration.md's key tables are made from
// these (`bazel run //tools/config:config_reference`).

#include <vector>

#include "component/config/key_declarations.h"

namespace herald::config::declare {

void DeclareAttachmentKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Restart(
          "attachments", K::kTable, [](auto& c) -> auto& { return c.attachments; }),
      Part("attachments.enabled", K::kBoolean)
          .Doc("`true`",
               "download the files linked in a message (XEP-0066 out-of-band data, which is how "
               "clients send what they uploaded with XEP-0363) and let the model read them; "
               "`false`: the sender is told files are not read here"),
      Part("attachments.max_bytes", K::kInteger)
          .Range(1024, 256 << 20)
          .Doc("`10485760` (10 MiB)", "the largest file downloaded; a larger one is refused"),
      Part("attachments.max_per_message", K::kInteger)
          .Range(1, 4)
          .Doc("`4`",
               "files read from one message; more links are not downloaded (and no more than "
               "4 are taken from a message at all)"),
      Part("attachments.timeout_seconds", K::kInteger)
          .Range(1, 300)
          .Doc("`30`", "one download: resolution, every redirect and the body"),
      Part("attachments.text_budget_bytes", K::kInteger)
          .Range(1024, 1 << 20)
          .Doc("`32768`",
               "the text of documents (text, Markdown, CSV, JSON, PDF) the model reads from "
               "one message; the rest is cut with a note saying so"),
      Part("attachments.max_pdf_pages", K::kInteger)
          .Range(1, 1000)
          .Doc("`50`", "pages of a PDF read; a longer one is read that far, with a note"),
      Part("attachments.allow_hosts", K::kStringArray)
          .Doc("`[]`",
               "hosts exempt from the private-address refusal, in `url_fetch`'s forms (host "
               "name, `\"*.domain\"`, address, network). The XMPP server's own upload service "
               "(XEP-0363) is allowed without an entry. Cloud-metadata addresses stay refused"),
      Part("attachments.send_max_files", K::kInteger)
          .Range(0, 16)
          .Doc("`4`",
               "files one run may send (a skill's output, a generated picture, a spoken "
               "answer) through the server's upload service (XEP-0363); `0`: none are sent"),
      Part("attachments.send_max_bytes", K::kInteger)
          .Range(1024, 256 << 20)
          .Doc("`10485760` (10 MiB)",
               "the largest file sent; the upload service's own limit applies too"),
      Part("attachments.send_timeout_seconds", K::kInteger)
          .Range(1, 600)
          .Doc("`60`", "one upload of a file sent"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

void DeclareVoiceKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Restart(
          "voice", K::kTable, [](auto& c) -> auto& { return c.voice; }),
      Part("voice.transcription", K::kString)
          .Type("string: `\"local\"`, `\"openai:<model>\"` or `\"off\"`")
          .Doc("`\"local\"`",
               "how voice messages become text: on this machine with PocketSphinx and Debian's "
               "English model, through `[llm.openai]`'s `/audio/transcriptions` with that model "
               "(`\"openai:whisper-1\"`), or not at all"),
      Part("voice.speech", K::kString)
          .Type("string: `\"local\"`, `\"openai:<model>\"` or `\"off\"`")
          .Doc("`\"local\"`",
               "how answers are spoken (`/voice on`, `answer_voice_notes`): on this machine "
               "with espeak-ng, through `[llm.openai]`'s `/audio/speech` with that model "
               "(`\"openai:tts-1\"`), or not at all"),
      Part("voice.voice", K::kString)
          .Doc("`\"\"`",
               "the voice answers are spoken in: the provider's (`\"alloy\"`, its default) or "
               "espeak-ng's (`\"en-us\"`, the default; `espeak-ng --voices` lists them)"),
      Part("voice.show_transcript", K::kBoolean)
          .Doc("`true`", "say back what was heard in a voice message before answering it"),
      Part("voice.answer_voice_notes", K::kBoolean)
          .Doc("`false`",
               "answer a voice message with a spoken answer too (as if its sender had said "
               "`/voice on` for that answer)"),
      Part("voice.max_seconds", K::kInteger)
          .Range(5, 600)
          .Doc("`120`",
               "the longest voice message transcribed (refused before it is decoded when it "
               "claims more) and the longest answer spoken (a longer one is cut, saying so)"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

}  // namespace herald::config::declare
