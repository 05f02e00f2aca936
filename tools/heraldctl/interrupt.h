// tools/heraldctl/interrupt.h
//
// Ctrl-C for gRPC calls. main() turns SIGINT and SIGTERM into Trigger() from a thread of its
// own; the call in progress registers its ClientContext, and Trigger cancels it, so that an
// `events` stream ends cleanly and a `converse` run is cancelled on the server too. A call
// registered after Trigger is cancelled at once.
//
//   Interrupt interrupt;
//   {
//     Interrupt::Registration registration(&interrupt, &context);
//     ...reader->Read(&event)...   // returns false once Trigger() has run
//   }
//   if (interrupt.triggered()) { ... }
#pragma once

#include <mutex>

#include "grpcpp/client_context.h"

namespace herald::heraldctl {

class Interrupt {
 public:
  // Keeps `context` cancellable by `interrupt` (which may be null: no interruption) while it
  // lives.
  class Registration {
   public:
    Registration(Interrupt* interrupt, grpc::ClientContext* context);
    ~Registration();
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    Interrupt* interrupt_;
  };

  // Thread-safe; cancels the registered call, if any, and every later one.
  void Trigger();
  bool triggered() const;

 private:
  mutable std::mutex mu_;
  bool triggered_ = false;                 // guarded by mu_
  grpc::ClientContext* active_ = nullptr;  // guarded by mu_
};

}  // namespace herald::heraldctl
