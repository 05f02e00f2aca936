// component/xmpp/room_archive.h
//
// XEP-0313 for a room's recent past, as a pure translation: the IQ that asks a room's archive
// for its last messages (ArchiveRequest), and ArchiveReader, which reads what comes back — one
// message per archived message, each a <result/> holding the room message it forwards
// (XEP-0297), then the IQ that ends the query — into a RoomArchive. Only what the room itself
// sends for this query counts: its address is in every result, and anyone else's is ignored.
//
//   XmlElement iq = ArchiveRequest(query, id);           // sent; `id` is also the queryid
//   ArchiveReader reader(query);
//   if (reader.Read(message, id)) return;                // a result of this query, read
//   RoomArchive archive = std::move(reader).Finish(iq);  // the IQ result or error
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
XmlElement ArchiveRequest(const QueryRoomArchive& query, std::string_view id);

class ArchiveReader {
 public:
  explicit ArchiveReader(const QueryRoomArchive& query);

  // Whether `message` is a result of the query `query_id` sent to the room; if so its room
  // message is kept when it has a nick, a body and a valid time (a correction replaces the
  // text of the message it corrects), up to the query's max. False for any other message.
  bool Read(const XmlElement& message, std::string_view query_id);

  // The archive read so far, answered by `iq` (the query's result, or an error).
  RoomArchive Finish(const XmlElement& iq) &&;
  // No answer came: the query failed with `condition` ("timeout", "disconnected").
  RoomArchive Fail(std::string_view condition) &&;

 private:
  RoomArchive archive_;
  size_t max_;
  // The id each kept message had when it was sent, for the corrections that name it.
  std::vector<std::string> sent_ids_;
};

}  // namespace herald::xmpp
