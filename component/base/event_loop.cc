#include "component/base/event_loop.h"

namespace herald::base {

EventLoop::EventLoop(int worker_threads, int concurrency_hint)
    : workers_(static_cast<size_t>(worker_threads)), io_(concurrency_hint) {}

EventLoop::~EventLoop() {
  JoinWorkers();
  // Members end in reverse order: io_ (and the frames still suspended in it), then workers_.
}

void EventLoop::JoinWorkers() { workers_.join(); }

}  // namespace herald::base
