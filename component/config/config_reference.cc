#include "component/config/config_reference.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/config/config_keys.h"

namespace herald::config {
namespace {

struct Row {
  std::string table;  // "[server]", "[[rooms]]"
  std::vector<std::string> applies;
  std::vector<std::string> restart;
};

std::string Cell(const std::vector<std::string>& keys) {
  return keys.empty() ? "—" : absl::StrJoin(keys, ", ");
}

}  // namespace

std::string ReloadReferenceMarkdown() {
  std::vector<Row> rows;
  for (const ConfigKey& key : ConfigKeys()) {
    const size_t dot = key.path.find('.');
    if (dot == std::string_view::npos) {
      // A table of the file's top level: [server], or [[rooms]] (a reload unit of its own).
      const bool array = key.kind == ValueKind::kTableArray;
      rows.push_back(
          Row{.table = absl::StrCat(array ? "[[" : "[", AbslView(key.path), array ? "]]" : "]")});
    }
    if (!key.IsReloadUnit()) continue;
    const std::string name = dot == std::string_view::npos
                                 ? "(all of it)"
                                 : absl::StrCat("`", AbslView(key.path.substr(dot + 1)), "`");
    (key.reload == OnReload::kApplies ? rows.back().applies : rows.back().restart).push_back(name);
  }
  std::string out =
      "| table | a reload applies at once | needs a restart (the running value stays) |\n"
      "| --- | --- | --- |\n";
  for (const Row& row : rows) {
    absl::StrAppend(&out, "| `", row.table, "` | ", Cell(row.applies), " | ", Cell(row.restart),
                    " |\n");
  }
  return out;
}

absl::StatusOr<std::string> WithGeneratedParts(std::string_view page) {
  const size_t begin = page.find(kReloadBegin);
  const size_t end = page.find(kReloadEnd);
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin) {
    return absl::NotFoundError(absl::StrCat("the page lacks the lines ", AbslView(kReloadBegin),
                                            " and ", AbslView(kReloadEnd)));
  }
  const size_t content = begin + kReloadBegin.size();
  return absl::StrCat(AbslView(page.substr(0, content)), "\n", ReloadReferenceMarkdown(),
                      AbslView(page.substr(end)));
}

}  // namespace herald::config
