// component/agent/blocking_work.h
//
// Awaitable bridges from the I/O loop's coroutines to work that must not run on the loop:
// blocking calls go to the worker pool and their result comes back on the loop; callback
// APIs (the model router, skills) become values a coroutine can co_await.
//
//   absl::StatusOr<std::vector<MemoryEntry>> history =
//       co_await Offload(conversation_strand, [=, &store] { return store.History(ref, 40); });
//
// These are plain functions returning an awaitable (not coroutines), so their by-value
// parameters are safe from g++ 12's coroutine-parameter bug.
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace herald::agent {

// Runs `work` on `executor` (the worker pool, or a strand of it that serialises one
// conversation's file access); the awaiting coroutine resumes on its own executor with the
// result. `work` must not touch state owned by the I/O loop.
template <typename Executor, typename Work>
auto Offload(const Executor& executor, Work work) {
  using Result = std::invoke_result_t<Work&>;
  return asio::async_initiate<decltype(asio::use_awaitable), void(Result)>(
      [executor, work = std::move(work)](auto handler) mutable {
        asio::post(executor, [work = std::move(work), handler = std::move(handler)]() mutable {
          Result result = work();
          auto executor = asio::get_associated_executor(handler);
          asio::post(executor,
                     [handler = std::move(handler), result = std::move(result)]() mutable {
                       std::move(handler)(std::move(result));
                     });
        });
      },
      asio::use_awaitable);
}

// Adapts `start(callback)` — an API that calls `callback(Result)` exactly once on the I/O
// loop — into an awaitable of Result.
template <typename Result, typename Start>
auto AwaitCallback(Start start) {
  return asio::async_initiate<decltype(asio::use_awaitable), void(Result)>(
      [start = std::move(start)](auto handler) mutable {
        // std::function needs a copyable callable; the handler is move-only.
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        start([shared](Result result) mutable { std::move (*shared)(std::move(result)); });
      },
      asio::use_awaitable);
}

// The same for an API whose callback runs on another thread (a strand of the worker pool,
// such as skills::ToolSearch's): the result is posted to `io` before the coroutine sees it.
template <typename Result, typename Start>
auto AwaitCallbackOn(asio::io_context& io, Start start) {
  auto on_loop = [&io, start = std::move(start)](std::function<void(Result)> done) mutable {
    start([&io, done = std::move(done)](Result result) mutable {
      asio::post(io, [done = std::move(done), result = std::move(result)]() mutable {
        done(std::move(result));
      });
    });
  };
  return AwaitCallback<Result>(std::move(on_loop));
}

}  // namespace herald::agent
