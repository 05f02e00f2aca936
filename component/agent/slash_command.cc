#include "component/agent/slash_command.h"

#include "absl/strings/ascii.h"
#include "component/base/absl_string_view.h"

namespace herald::agent {

std::optional<SlashCommand> ParseSlashCommand(std::string_view body) {
  absl::string_view text = absl::StripAsciiWhitespace(AbslView(body));
  if (text.size() < 2 || text[0] != '/' || !absl::ascii_isalpha(text[1])) return std::nullopt;
  size_t end = 1;
  while (end < text.size() && !absl::ascii_isspace(text[end])) ++end;
  SlashCommand command;
  command.name = absl::AsciiStrToLower(text.substr(1, end - 1));
  command.args = std::string(absl::StripAsciiWhitespace(text.substr(end)));
  return command;
}

}  // namespace herald::agent
