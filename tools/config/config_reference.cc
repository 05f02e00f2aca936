// Rewrites the generated parts of docs/configuration.md from the key declarations
// (component/config/config_reference.h).
//
//   bazel run //tools/config:config_reference
#include "component/config/config_reference.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

int main() {
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace == nullptr) {
    std::cerr << "config_reference: run it with `bazel run //tools/config:config_reference`\n";
    return 2;
  }
  const std::string path = std::string(workspace) + "/docs/configuration.md";
  std::ifstream in(path);
  if (!in) {
    std::cerr << "config_reference: cannot read " << path << "\n";
    return 1;
  }
  std::stringstream page;
  page << in.rdbuf();
  absl::StatusOr<std::string> current = herald::config::WithGeneratedParts(page.str());
  if (!current.ok()) {
    std::cerr << "config_reference: " << path << ": " << current.status().message() << "\n";
    return 1;
  }
  if (std::vector<std::string> missing = herald::config::KeysMissingFromPage(page.str());
      !missing.empty()) {
    std::cerr << "config_reference: " << path << " has no key table for";
    for (const std::string& key : missing) std::cerr << " " << key;
    std::cerr << " (add the lines " << herald::config::KeysBegin("TABLE") << " and "
              << herald::config::KeysEnd("TABLE") << " where its table is described)\n";
    return 1;
  }
  if (*current == page.str()) {
    std::cout << path << " is current\n";
    return 0;
  }
  std::ofstream out(path, std::ios::trunc);
  out << *current;
  if (!out.flush()) {
    std::cerr << "config_reference: cannot write " << path << "\n";
    return 1;
  }
  std::cout << "rewrote the generated parts of " << path << "\n";
  return 0;
}
