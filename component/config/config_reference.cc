#include "component/config/config_reference.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/config/config_keys.h"

namespace herald::config {
namespace {

constexpr std::string_view kKeysBeginPrefix = "<!-- generated: keys ";
constexpr std::string_view kGenerator = " (bazel run //tools/config:config_reference) -->";

struct Row {
  std::string table;  // "[server]", "[[rooms]]"
  std::vector<std::string> applies;
  std::vector<std::string> restart;
};

std::string Cell(const std::vector<std::string>& keys) {
  return keys.empty() ? "—" : absl::StrJoin(keys, ", ");
}

bool IsUnder(std::string_view path, std::string_view table) {
  return path.size() > table.size() && absl::StartsWith(AbslView(path), AbslView(table)) &&
         path[table.size()] == '.';
}

// `path` relative to `table`, with "[]" after each array of tables on the way:
// "quota.prices.model" under "quota" is "prices[].model".
std::string RelativeName(std::string_view path, std::string_view table) {
  std::string name;
  size_t at = table.size() + 1;
  while (true) {
    const size_t dot = path.find('.', at);
    if (dot == std::string_view::npos) break;
    const ConfigKey* parent = FindConfigKey(path.substr(0, dot));
    absl::StrAppend(&name, AbslView(path.substr(at, dot - at)),
                    parent != nullptr && parent->kind == ValueKind::kTableArray ? "[]." : ".");
    at = dot + 1;
  }
  absl::StrAppend(&name, AbslView(path.substr(at)));
  return name;
}

// The table whose key table on the page holds `path`: the longest of `sections` it is under.
std::string_view SectionOf(std::string_view path, const std::vector<std::string>& sections) {
  std::string_view best;
  for (const std::string& section : sections) {
    if (IsUnder(path, section) && section.size() > best.size()) best = section;
  }
  return best;
}

// The tables with a key table on `page`, in its order.
std::vector<std::string> SectionsOnPage(std::string_view page) {
  std::vector<std::string> sections;
  for (size_t at = page.find(kKeysBeginPrefix); at != std::string_view::npos;
       at = page.find(kKeysBeginPrefix, at + 1)) {
    const size_t start = at + kKeysBeginPrefix.size();
    const size_t end = page.find(' ', start);
    if (end != std::string_view::npos) sections.emplace_back(page.substr(start, end - start));
  }
  return sections;
}

}  // namespace

std::string KeysBegin(std::string_view table) {
  return absl::StrCat(AbslView(kKeysBeginPrefix), AbslView(table), AbslView(kGenerator));
}

std::string KeysEnd(std::string_view table) {
  return absl::StrCat("<!-- end of generated: keys ", AbslView(table), " -->");
}

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

std::string KeysReferenceMarkdown(std::string_view table,
                                  const std::vector<std::string>& own_sections) {
  std::string out = "| key | type | default | meaning |\n| --- | --- | --- | --- |\n";
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.IsTable() || !IsUnder(key.path, table)) continue;
    if (SectionOf(key.path, own_sections) != table) continue;
    absl::StrAppend(&out, "| `", RelativeName(key.path, table), "` | ", key.TypeText(), " | ",
                    key.default_text.empty() ? "—" : AbslView(key.default_text), " | ",
                    AbslView(key.meaning), " |\n");
  }
  return out;
}

std::vector<std::string> KeysMissingFromPage(std::string_view page) {
  const std::vector<std::string> sections = SectionsOnPage(page);
  std::vector<std::string> missing;
  for (const ConfigKey& key : ConfigKeys()) {
    if (!key.IsTable() && SectionOf(key.path, sections).empty()) {
      missing.emplace_back(key.path);
    }
  }
  return missing;
}

absl::StatusOr<std::string> WithGeneratedParts(std::string_view page) {
  const std::vector<std::string> sections = SectionsOnPage(page);
  for (const std::string& section : sections) {
    const ConfigKey* table = FindConfigKey(section);
    if (table == nullptr || !table->IsTable()) {
      return absl::NotFoundError(absl::StrCat("the page has a key table for '", section,
                                              "', which is not a declared table"));
    }
  }
  struct Part {
    std::string begin;
    std::string end;
    std::string content;
  };
  std::vector<Part> parts = {
      {std::string(kReloadBegin), std::string(kReloadEnd), ReloadReferenceMarkdown()}};
  for (const std::string& section : sections) {
    parts.push_back(
        {KeysBegin(section), KeysEnd(section), KeysReferenceMarkdown(section, sections)});
  }
  std::string current(page);
  for (const Part& part : parts) {
    const size_t begin = current.find(part.begin);
    const size_t end = current.find(part.end);
    if (begin == std::string::npos || end == std::string::npos || end < begin) {
      return absl::NotFoundError(
          absl::StrCat("the page lacks the lines ", part.begin, " and ", part.end));
    }
    const size_t content = begin + part.begin.size();
    current = absl::StrCat(current.substr(0, content), "\n", part.content, current.substr(end));
  }
  return current;
}

}  // namespace herald::config
