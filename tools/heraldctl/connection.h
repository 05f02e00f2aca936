// tools/heraldctl/connection.h
//
// The gRPC channel heraldctl talks to Herald over, built from the connection options: a unix
// socket, plaintext TCP on loopback (or anywhere with --insecure), or TLS with the system's
// roots or --ca, and a client certificate for mTLS. The bearer token is not part of the
// channel; each call carries it (CommandRunner::NewContext in commands.h).
//
//   absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(options.connection);
//   if (!channel.ok()) { ...a usage error: exit 2... }
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "tools/heraldctl/invocation.h"

namespace herald::heraldctl {

// Fails (InvalidArgument, naming the flag and the file) when --ca, --cert or --key cannot be
// read, or the target is malformed. Connecting happens later, on the first call.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const ConnectionOptions& options);

// The token in --token-file: the file's first line without surrounding whitespace. The
// messages name the file, never its contents.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace herald::heraldctl
