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

#include "absl/base/thread_annotations.h"
#include "component/base/mutex.h"
#include "grpcpp/client_context.h"

namespace herald::heraldctl {

// Shared by the signal thread (Trigger) and the thread making calls (the rest).
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

  // Cancels the registered call, if any, and every later one.
  void Trigger() ABSL_LOCKS_EXCLUDED(mu_);
  bool triggered() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // For Registration: `context` (null: none) is the call to cancel.
  void SetActive(grpc::ClientContext* context) ABSL_LOCKS_EXCLUDED(mu_);

  mutable base::Mutex mu_;
  bool triggered_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace herald::heraldctl
