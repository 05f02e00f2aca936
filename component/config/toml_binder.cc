#include "component/config/toml_binder.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace herald::config {

const ConfigKey& Binder::DeclaredInteger(const Section& section, std::string_view key) {
  // "skills.mcp[2]" is declared as "skills.mcp".
  std::string path;
  bool in_index = false;
  for (char c : Path(section, key)) {
    if (c == '[') in_index = true;
    if (!in_index) path.push_back(c);
    if (c == ']') in_index = false;
  }
  const ConfigKey* declared = FindConfigKey(path);
  if (declared == nullptr || declared->kind != ValueKind::kInteger) {
    std::fprintf(stderr,
                 "herald: the config key %s is read as an integer but not declared as one\n",
                 path.c_str());
    std::abort();
  }
  return *declared;
}

}  // namespace herald::config
