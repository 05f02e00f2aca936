// tools/heraldctl/exit_code.h
//
// The exit statuses scripts can rely on (docs/heraldctl.md), and the gRPC status codes each
// one stands for.
//
//   0 ok                      4 unauthenticated, permission denied
//   1 negative result         5 not found
//   2 usage error             6 invalid argument, failed precondition, resource exhausted, ...
//   3 cannot connect          7 any other server error
//
//   return static_cast<int>(ExitCodeForGrpcStatus(status.error_code()));
#pragma once

#include <string>

#include "grpcpp/support/status.h"

namespace herald::heraldctl {

enum class ExitCode : int {
  kOk = 0,
  kNegativeResult = 1,  // the call ran and says no: audit chain broken, run or skill failed
  kUsage = 2,           // bad command line, unreadable --ca/--cert/--key/--token-file
  kUnavailable = 3,     // cannot connect, UNAVAILABLE, DEADLINE_EXCEEDED
  kDenied = 4,          // UNAUTHENTICATED, PERMISSION_DENIED
  kNotFound = 5,        // NOT_FOUND
  kRejected = 6,        // INVALID_ARGUMENT, FAILED_PRECONDITION, RESOURCE_EXHAUSTED,
                        // OUT_OF_RANGE, ALREADY_EXISTS
  kServerError = 7,     // anything else (INTERNAL, UNIMPLEMENTED, UNKNOWN, ...)
  kInterrupted = 130,   // Ctrl-C (SIGINT) or SIGTERM stopped a call; `events` exits 0 instead
};

ExitCode ExitCodeForGrpcStatus(grpc::StatusCode code);

// "PERMISSION_DENIED", as gRPC's documentation and grpcurl spell it.
std::string GrpcStatusCodeName(grpc::StatusCode code);

}  // namespace herald::heraldctl
