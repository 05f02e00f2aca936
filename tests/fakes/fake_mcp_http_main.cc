// tests/fakes/fake_mcp_http_main.cc
//
// The fake MCP server over Streamable HTTP (fake_mcp_http_server.h) as a program: prints
// "url http://127.0.0.1:PORT/mcp" and serves until stdin closes. For trying an MCP client by
// hand or from a script.
//
//   fake_mcp_http_main [--sse] [--page_size=N] [--numbered_tools=N] [--protocol_version=V]
#include <cstdlib>
#include <iostream>
#include <string>

#include "tests/fakes/fake_mcp_http_server.h"

int main(int argc, char** argv) {
  herald::fakes::FakeMcpOptions options;
  bool event_stream = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--sse") {
      event_stream = true;
    } else if (arg.rfind("--page_size=", 0) == 0) {
      options.page_size = std::atoi(arg.c_str() + 12);
    } else if (arg.rfind("--numbered_tools=", 0) == 0) {
      options.numbered_tools = std::atoi(arg.c_str() + 17);
    } else if (arg.rfind("--protocol_version=", 0) == 0) {
      options.protocol_version = arg.substr(19);
    } else {
      std::cerr << "fake_mcp_http_main: unknown argument " << arg << "\n";
      return 2;
    }
  }
  auto server = herald::fakes::FakeMcpHttpServer::Start(options, event_stream);
  if (!server.ok()) {
    std::cerr << "fake_mcp_http_main: " << server.status() << "\n";
    return 1;
  }
  std::cout << "url " << (*server)->url() << std::endl;
  std::string ignored;
  while (std::getline(std::cin, ignored)) {
  }
  return 0;
}
