// [attachments] and [voice] (docs/media.md): reading the TOML into AttachmentsConfig and
// VoiceConfig.
#include "component/config/bind_sections.h"

namespace herald::config {

void BindAttachments(Binder& b, const Section& root, AttachmentsConfig& attachments) {
  Section s = b.Sub(root, "attachments");
  b.Bool(s, "enabled", &attachments.enabled);
  b.Integer(s, "max_bytes", &attachments.max_bytes);
  b.Integer(s, "max_per_message", &attachments.max_per_message);
  b.Integer(s, "timeout_seconds", &attachments.timeout_seconds);
  b.Integer(s, "text_budget_bytes", &attachments.text_budget_bytes);
  b.Integer(s, "max_pdf_pages", &attachments.max_pdf_pages);
  BindAllowHosts(b, s, attachments.allow_hosts);
  b.Integer(s, "send_max_files", &attachments.send_max_files);
  b.Integer(s, "send_max_bytes", &attachments.send_max_bytes);
  b.Integer(s, "send_timeout_seconds", &attachments.send_timeout_seconds);
}

// "local", "off" or "openai:<model>": how voice is read or spoken.
void BindVoiceChoice(Binder& b, const Section& s, std::string_view key, std::string* out) {
  std::string value;
  if (!b.Has(s, key) || !b.String(s, key, &value)) return;
  const bool provider = value.starts_with("openai:") && value.size() > 7;
  if (value != "local" && value != "off" && !provider) {
    b.MustBe(s, key, "\"local\", \"off\" or \"openai:<model>\"");
    return;
  }
  *out = std::move(value);
}

void BindVoice(Binder& b, const Section& root, VoiceConfig& voice) {
  Section s = b.Sub(root, "voice");
  BindVoiceChoice(b, s, "transcription", &voice.transcription);
  BindVoiceChoice(b, s, "speech", &voice.speech);
  b.String(s, "voice", &voice.voice);
  b.Bool(s, "show_transcript", &voice.show_transcript);
  b.Bool(s, "answer_voice_notes", &voice.answer_voice_notes);
  b.Integer(s, "max_seconds", &voice.max_seconds);
}

}  // namespace herald::config
