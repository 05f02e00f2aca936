// skills/sandbox/sandbox_options.h
//
// How one SandboxRunner is set up: where scratch folders go, which uids runs get, the folders
// every run may read, which layers to leave off, and which layers no run may go without.
// Callers know it as SandboxRunner::Options; it has a header of its own so that the runner's
// parts (host_probe.h, sandbox_setup.h) read it without the runner.
//
//   SandboxRunner::Options options;                  // the same type as SandboxOptions
//   options.uid_base = 3'000'000'000;
//   options.required_layers = {SandboxLayer::kSeccomp, SandboxLayer::kLandlock};
//   auto runner = SandboxRunner::Create(io, workers, std::move(options));
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "skills/sandbox/sandbox_policy.h"

namespace herald::skills::sandbox {

struct SandboxOptions {
  // Where scratch folders are made; every run's uid must be able to reach it ("/tmp").
  std::string scratch_root = "/tmp";
  // Runs get uids uid_base .. uid_base + uid_slots - 1 (and the same gids) when Herald is
  // root. Pick a range no account uses; give each Herald on a host a range of its own.
  uid_t uid_base = 2'000'000'000;
  int uid_slots = 1024;  // also the most runs at once
  // Folders every run may read and execute (the C library, interpreters).
  std::vector<std::string> system_paths = {"/usr",
                                           "/lib",
                                           "/lib64",
                                           "/lib32",
                                           "/bin",
                                           "/sbin",
                                           "/etc/alternatives",
                                           "/etc/ld.so.cache",
                                           "/etc/ld.so.conf",
                                           "/etc/ld.so.conf.d",
                                           "/etc/localtime",
                                           "/etc/passwd",
                                           "/etc/group",
                                           "/etc/nsswitch.conf",
                                           "/etc/ssl",
                                           "/etc/ca-certificates"};
  // Read as well by runs with a network capability (name resolution).
  std::vector<std::string> network_paths = {"/etc/hosts",    "/etc/resolv.conf", "/etc/host.conf",
                                            "/etc/gai.conf", "/etc/services",    "/etc/protocols"};
  // Turn layers off, for tests and for hosts where a layer misbehaves (logged as notices).
  bool use_landlock = true;
  bool use_seccomp = true;
  bool use_network_namespaces = true;
  bool use_ipc_namespaces = true;
  bool use_separate_users = true;
  // Layers without which no run may start (component/main.cc passes [skills.sandbox]
  // require; empty: run with whatever this host has). A missing one is a notice, and Run
  // refuses every run with available()'s status; Herald itself goes on.
  std::vector<SandboxLayer> required_layers;
};

}  // namespace herald::skills::sandbox
