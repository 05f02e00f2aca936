// component/xmpp/room_archive.cc
//
// The XEP-0313 query for a room's last messages and the reading of its results (see the
// header).
#include "component/xmpp/archive_query.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza.h"

namespace herald::xmpp {

XmlElement ArchiveRequest(const QueryArchive& query, std::string_view id) {
  XmlElement iq("iq");
  iq.SetAttr("type", "set").SetAttr("id", id);
  // Without a room, no address: the account's own archive (XEP-0313 §4).
  if (!query.room.empty()) iq.SetAttr("to", query.room.BareString());
  if (!query.from.empty()) iq.SetAttr("from", query.from.ToString());
  XmlElement& mam = iq.AddChild("query", ns::kMam);
  mam.SetAttr("queryid", id);
  XmlElement& form = mam.AddChild("x", ns::kDataForms);
  form.SetAttr("type", "submit");
  XmlElement& type = form.AddChild("field", ns::kDataForms);
  type.SetAttr("var", "FORM_TYPE").SetAttr("type", "hidden");
  type.AddChild("value", ns::kDataForms).AddText(ns::kMam);
  XmlElement& start = form.AddChild("field", ns::kDataForms);
  start.SetAttr("var", "start");
  start.AddChild("value", ns::kDataForms)
      .AddText(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", query.since, absl::UTCTimeZone()));
  XmlElement& set = mam.AddChild("set", ns::kRsm);
  set.AddChild("max", ns::kRsm)
      .AddText(absl::StrCat(std::clamp(query.max, 1, kMaxArchivedMessages)));
  set.AddChild("before", ns::kRsm);  // empty: the last page
  return iq;
}

ArchiveReader::ArchiveReader(const QueryArchive& query, const Jid& account)
    : archive_{.room = query.room.Bare(), .nick = query.nick},
      account_(account.Bare()),
      max_(static_cast<size_t>(std::clamp(query.max, 1, kMaxArchivedMessages))) {}

bool ArchiveReader::FromArchive(std::string_view from) const {
  if (archive_.room.empty() && from.empty()) return true;  // the account's server
  absl::StatusOr<Jid> sender = Jid::Parse(from);
  return sender.ok() && sender->resource().empty() &&
         sender->BareEquals(archive_.room.empty() ? account_ : archive_.room);
}

bool ArchiveReader::Read(const XmlElement& message, std::string_view query_id) {
  const XmlElement* result = message.FindChild("result", ns::kMam);
  if (result == nullptr || result->Attr("queryid") != query_id) return false;
  // Query ids can be guessed: only the archive's own results count.
  if (!FromArchive(message.Attr("from"))) return false;
  const XmlElement* forwarded = result->FindChild("forwarded", ns::kForward);
  if (forwarded == nullptr) return true;
  const XmlElement* delay = forwarded->FindChild("delay", ns::kDelay);
  const XmlElement* said = nullptr;
  for (const XmlNode& node : forwarded->children()) {
    if (node.element != nullptr && node.element->name() == "message") said = node.element.get();
  }
  if (delay == nullptr || said == nullptr) return true;
  absl::Time time;
  std::string unparsed;
  if (!absl::ParseTime(absl::RFC3339_full, AbslView(delay->Attr("stamp")), &time, &unparsed)) {
    return true;
  }
  absl::StatusOr<Jid> from = Jid::Parse(said->Attr("from"));
  if (!from.ok()) return true;
  if (archive_.room.empty()) {
    // A chat someone else sent the account: not Herald's own words, not a room's.
    const std::string_view type = said->Attr("type");
    if (from->BareEquals(account_) || type == "groupchat" || type == "error" ||
        type == "headline") {
      return true;
    }
  } else if (from->resource().empty() || !from->BareEquals(archive_.room)) {
    return true;  // not said in this room by an occupant (room@service/nick)
  }
  const XmlElement* body = said->FindChild("body");
  if (body == nullptr) return true;  // reactions, chat states, markers: nothing said
  std::string text = body->Text();
  if (text.empty()) return true;
  if (const XmlElement* replace = said->FindChild("replace", ns::kMessageCorrect)) {
    // XEP-0308: only the author can correct their message.
    for (ArchivedMessage& earlier : archive_.messages) {
      if (earlier.sent_id == replace->Attr("id") && earlier.from.BareEquals(*from) &&
          earlier.from.resource() == from->resource()) {
        earlier.body = std::move(text);
        return true;
      }
    }
  }
  if (archive_.messages.size() == max_) return true;
  archive_.messages.push_back(ArchivedMessage{.nick = archive_.room.empty() ? "" : from->resource(),
                                              .from = *from,
                                              .body = std::move(text),
                                              .time = time,
                                              .id = std::string(result->Attr("id")),
                                              .sent_id = std::string(said->Attr("id"))});
  return true;
}

ArchiveResult ArchiveReader::Finish(const XmlElement& iq) && {
  if (iq.Attr("type") == "result") {
    archive_.answered = true;
    return std::move(archive_);
  }
  const XmlElement* error = iq.FindChild("error");
  return std::move(*this).Fail(error != nullptr ? ErrorCondition(*error) : "undefined-condition");
}

ArchiveResult ArchiveReader::Fail(std::string_view condition) && {
  archive_.answered = false;
  archive_.condition = std::string(condition);
  archive_.messages.clear();
  return std::move(archive_);
}

}  // namespace herald::xmpp
