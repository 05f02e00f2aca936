// The keys of [attachments]: the files people send (docs/media.md).
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
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

}  // namespace herald::config::declare
