// component/xmpp/archive_query.h
//
// XEP-0313 for a room's recent past, as a pure translation: the IQ that asks a room's archive
// for its last messages (ArchiveRequest), and ArchiveReader, which reads what comes back — one
// message per archived message, each a <result/> holding the room message it forwards
// (XEP-0297), then the IQ that ends the query — into a ArchiveResult. Only what the room itself
// sends for this query counts: its address is in every result, and anyone else's is ignored.
//
//   XmlElement iq = ArchiveRequest(query, id);           // sent; `id` is also the queryid
//   ArchiveReader reader(query);
//   if (reader.Read(message, id)) return;                // a result of this query, read
//   ArchiveResult archive = std::move(reader).Finish(iq);  // the IQ result or error
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "component/xmpp/events.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// <iq type='set' id=`id`> with a XEP-0313 query (queryid `id`) for the last query.max
// messages of query.room since query.since: a data form with `start`, and XEP-0059 paging
// from the end (<max/> and an empty <before/>).
XmlElement ArchiveRequest(const QueryArchive& query, std::string_view id);

class ArchiveReader {
 public:
  // `account`: Herald's own account (client mode), whose archive a query without a room asks.
  ArchiveReader(const QueryArchive& query, const Jid& account);

  // Whether `message` is a result of the query `query_id` sent to the room; if so its room
  // message is kept when it has a nick, a body and a valid time (a correction replaces the
  // text of the message it corrects), up to the query's max. False for any other message.
  bool Read(const XmlElement& message, std::string_view query_id);

  // The archive read so far, answered by `iq` (the query's result, or an error).
  ArchiveResult Finish(const XmlElement& iq) &&;
  // No answer came: the query failed with `condition` ("timeout", "disconnected").
  ArchiveResult Fail(std::string_view condition) &&;

  // Whether a result, or the IQ that ends the query, from `from` comes from the archive: the
  // room, or for the account's archive the account (or no one: its server).
  bool FromArchive(std::string_view from) const;

 private:
  ArchiveResult archive_;
  Jid account_;  // bare
  size_t max_;
};

}  // namespace herald::xmpp
