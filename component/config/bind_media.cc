// [attachments] (docs/media.md): reading the TOML into AttachmentsConfig.
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
}

}  // namespace herald::config
