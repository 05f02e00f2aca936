// control/pem_file.h
//
// Reads a PEM file the configuration names (a certificate, a key, a CA bundle) at start-up,
// with an error that names the setting: "control.tls_cert: cannot read /etc/...".
//
//   absl::StatusOr<std::string> ca = ReadPemFile(config.tls_client_ca, "control.tls_client_ca");
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace herald::control {

// The whole file; NotFound when it cannot be read, InvalidArgument when it is empty.
absl::StatusOr<std::string> ReadPemFile(const std::string& path, std::string_view setting);

}  // namespace herald::control
