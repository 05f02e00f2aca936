// tests/fakes/fake_mcp_main.cc
//
// The fake MCP server (fake_mcp_server.h) as a program speaking newline-delimited JSON on
// stdin and stdout, the way Herald runs a command server in its sandbox. Built by a plain
// genrule (no sanitizer runtime: it must start under RLIMIT_AS).
//
//   fake_mcp_main [--page_size=N] [--numbered_tools=N] [--protocol_version=V]
//                 [--ping_before_list] [--crash_on_start]
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "tests/fakes/fake_mcp_server.h"

namespace {

bool Flag(const std::string& arg, const std::string& name, std::string* value) {
  const std::string prefix = "--" + name + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  *value = arg.substr(prefix.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  herald::fakes::FakeMcpOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value;
    if (Flag(arg, "page_size", &value)) {
      options.page_size = std::atoi(value.c_str());
    } else if (Flag(arg, "numbered_tools", &value)) {
      options.numbered_tools = std::atoi(value.c_str());
    } else if (Flag(arg, "protocol_version", &value)) {
      options.protocol_version = value;
    } else if (arg == "--ping_before_list") {
      options.ping_before_list = true;
    } else if (arg == "--crash_on_start") {
      std::cerr << "fake_mcp_main: crashing on start, as asked\n";
      return 3;
    } else {
      std::cerr << "fake_mcp_main: unknown argument " << arg << "\n";
      return 2;
    }
  }
  herald::fakes::FakeMcpServer server(options);
  std::string line;
  while (std::getline(std::cin, line)) {
    herald::fakes::FakeMcpServer::Output out = server.Handle(line);
    if (out.crash) {
      std::cerr << "fake_mcp_main: crashing, as asked\n";
      std::_Exit(4);
    }
    if (out.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(out.delay_ms));
    for (const std::string& reply : out.lines) std::cout << reply << "\n";
    std::cout.flush();
  }
  return 0;
}
