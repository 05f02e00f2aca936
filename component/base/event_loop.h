// component/base/event_loop.h
//
// EventLoop owns Herald's two executors and, in its layout, the order they end in: the I/O
// loop (one thread runs it; the XMPP session, the agent, the control plane live on it) and
// the worker pool (blocking work: memory files, SQLite, preparing skill processes).
//
// They depend on each other at the end. A coroutine waiting for the pool holds a strand of
// the pool inside its suspended frame, and the pool's work posts its result back to the
// loop. So shutting down goes in this order, and only this one is safe:
//   1. what owns I/O objects or runs coroutines on the loop (session, agent, rooms, control
//      plane, HTTP client) is destroyed: declare all of it after the EventLoop;
//   2. the pool is joined, so that nothing can post to the loop any more;
//   3. the loop is destroyed, and with it every coroutine frame still suspended in it, while
//      the pool whose strands they hold is still there;
//   4. the pool is destroyed.
// ~EventLoop does 2 to 4. Destroying a frame in step 3 runs the destructors of its locals and
// nothing else: coroutines must not keep RAII guards that reach back into their owner.
//
//   EventLoop loop(/*worker_threads=*/2);
//   Agent agent(policy, RuntimeServices{.io = loop.io(), .workers = loop.workers(), ...});
//   loop.io().run();
//   // agent goes first, then loop: members and locals end in reverse order of declaration
#pragma once

#include <asio.hpp>

namespace herald::base {

class EventLoop {
 public:
  // `concurrency_hint` 1 tells Asio that one thread runs the loop (no locking inside it).
  explicit EventLoop(int worker_threads, int concurrency_hint = 1);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  asio::io_context& io() { return io_; }
  asio::thread_pool& workers() { return workers_; }

  // Finishes the pool's queued work and stops its threads; what that work posts to the loop
  // waits there. Safe to call more than once; ~EventLoop calls it.
  void JoinWorkers();

 private:
  // Declared before io_, so destroyed after it: the frames left in the loop hold its strands.
  asio::thread_pool workers_;
  asio::io_context io_;
};

}  // namespace herald::base
