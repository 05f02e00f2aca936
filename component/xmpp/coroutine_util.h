// component/xmpp/coroutine_util.h
//
// What the session's coroutines and timers share: awaiting an Asio operation without
// exceptions (its error comes back as the first element of a tuple), and Herald's
// absl::Durations as the std::chrono durations Asio timers take (a negative one is zero).
//
//   timer.expires_after(ToChrono(options.ping_interval));
//   auto [error] = co_await timer.async_wait(kNoThrow);
#pragma once

#include <algorithm>
#include <asio.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <chrono>

#include "absl/time/time.h"

namespace herald::xmpp {

inline constexpr auto kNoThrow = asio::experimental::as_tuple(asio::use_awaitable);

inline std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(std::max(d, absl::ZeroDuration()));
}

}  // namespace herald::xmpp
