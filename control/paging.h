// control/paging.h
//
// Paging for the list RPCs (ListSessions, GetHistory, ListSkills, ListAuditEntries): page sizes
// of 1..1000 (0 = 100) and opaque page tokens. A token is the URL-safe base64 of
// "<list>|<cursor>", where the cursor is the key of the last item returned (for history, how
// many entries from the newest were returned; for the audit log, the byte offset where the
// oldest entry returned starts); a token from another list is refused.
//
//   absl::StatusOr<int> size = PageSize(request.page_size());
//   absl::StatusOr<std::string> after = DecodePageToken("sessions", request.page_token());
//   response.set_next_page_token(EncodePageToken("sessions", last_key));
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace herald::control {

inline constexpr int kDefaultPageSize = 100;
inline constexpr int kMaxPageSize = 1000;

// 0 -> 100; 1..1000 as is; anything else InvalidArgument naming page_size.
absl::StatusOr<int> PageSize(int requested);

std::string EncodePageToken(std::string_view list, std::string_view cursor);
// The cursor; "" for an empty token; InvalidArgument naming page_token for anything this
// server did not give for `list`.
absl::StatusOr<std::string> DecodePageToken(std::string_view list, std::string_view token);

}  // namespace herald::control
