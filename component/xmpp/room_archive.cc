// component/xmpp/room_archive.cc
//
// The XEP-0313 query for a room's last messages and the reading of its results (see the
// header).
#include "component/xmpp/room_archive.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza.h"

namespace herald::xmpp {

XmlElement ArchiveRequest(const QueryRoomArchive& query, std::string_view id) {
  XmlElement iq("iq");
  iq.SetAttr("type", "set").SetAttr("id", id).SetAttr("to", query.room.BareString());
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

ArchiveReader::ArchiveReader(const QueryRoomArchive& query)
    : archive_{.room = query.room.Bare(), .nick = query.nick},
      max_(static_cast<size_t>(std::clamp(query.max, 1, kMaxArchivedMessages))) {}

bool ArchiveReader::Read(const XmlElement& message, std::string_view query_id) {
  const XmlElement* result = message.FindChild("result", ns::kMam);
  if (result == nullptr || result->Attr("queryid") != query_id) return false;
  // Query ids can be guessed: only the room's own results count.
  absl::StatusOr<Jid> sender = Jid::Parse(message.Attr("from"));
  if (!sender.ok() || !sender->resource().empty() || !sender->BareEquals(archive_.room)) {
    return false;
  }
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
  // The forwarded message was said in this room by an occupant: room@service/nick.
  absl::StatusOr<Jid> from = Jid::Parse(said->Attr("from"));
  if (!from.ok() || from->resource().empty() || !from->BareEquals(archive_.room)) return true;
  const XmlElement* body = said->FindChild("body");
  if (body == nullptr) return true;  // reactions, chat states, markers: nothing said
  std::string text = body->Text();
  if (text.empty()) return true;
  if (const XmlElement* replace = said->FindChild("replace", ns::kMessageCorrect)) {
    // XEP-0308: only the author can correct their message.
    for (size_t i = 0; i < sent_ids_.size(); ++i) {
      if (sent_ids_[i] == replace->Attr("id") && archive_.messages[i].nick == from->resource()) {
        archive_.messages[i].body = std::move(text);
        return true;
      }
    }
  }
  if (archive_.messages.size() == max_) return true;
  archive_.messages.push_back(ArchivedMessage{.nick = from->resource(),
                                              .body = std::move(text),
                                              .time = time,
                                              .id = std::string(result->Attr("id"))});
  sent_ids_.emplace_back(said->Attr("id"));
  return true;
}

RoomArchive ArchiveReader::Finish(const XmlElement& iq) && {
  if (iq.Attr("type") == "result") {
    archive_.answered = true;
    return std::move(archive_);
  }
  const XmlElement* error = iq.FindChild("error");
  return std::move(*this).Fail(error != nullptr ? ErrorCondition(*error) : "undefined-condition");
}

RoomArchive ArchiveReader::Fail(std::string_view condition) && {
  archive_.answered = false;
  archive_.condition = std::string(condition);
  archive_.messages.clear();
  return std::move(archive_);
}

}  // namespace herald::xmpp
