// component/ledger/page_token.h
//
// PageTokenCodec makes the cursor of a paged usage query into an opaque token and back. The
// token carries the query it belongs to (window, window start, JID and model filters) and the
// last (jid, model) row served, and is authenticated with HMAC-SHA256 under a key that the
// ledger keeps in its database: a garbled or forged token, or one from another query, is
// refused (InvalidArgument) before anything of it reaches SQL, and tokens stay valid across
// restarts.
//
//   PageTokenCodec codec(key);
//   std::string token = codec.Encode(cursor);
//   absl::StatusOr<PageCursor> back = codec.Decode(token);   // == cursor
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "component/ledger/usage_window.h"

namespace herald::ledger {

struct PageCursor {
  Window window = Window::kDay;
  int64_t window_start = 0;  // Unix seconds
  std::string jid_filter;    // the query's filters ("" = all)
  std::string model_filter;
  std::string after_jid;  // the last row served
  std::string after_model;

  friend bool operator==(const PageCursor&, const PageCursor&) = default;
};

class PageTokenCodec {
 public:
  // `key`: secret bytes (32 are plenty).
  explicit PageTokenCodec(std::string key) : key_(std::move(key)) {}

  std::string Encode(const PageCursor& cursor) const;
  // InvalidArgument for anything Encode did not make with this key.
  absl::StatusOr<PageCursor> Decode(std::string_view token) const;

 private:
  std::string Mac(std::string_view payload) const;

  std::string key_;
};

}  // namespace herald::ledger
