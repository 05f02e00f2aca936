// tools/heraldctl/registry_commands.cc
//
// `tools import` and `tools search`: CommandRunner's commands for the external tool registry
// (SkillService.ImportTools and SearchTools; docs/tool-search.md).
#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "tools/heraldctl/commands.h"
#include "tools/heraldctl/output.h"
#include "tools/heraldctl/table.h"

namespace herald::heraldctl {

ExitCode CommandRunner::Execute(const ToolsImportCommand& command) {
  std::ifstream file(command.path, std::ios::binary);
  if (!file) {
    Warn(absl::StrCat("heraldctl: cannot read ", CleanForTerminal(command.path, false), "\n"));
    return ExitCode::kUsage;
  }
  if (grpc::Status connected = AwaitConnection(); !connected.ok()) return Fail(connected);
  std::unique_ptr<grpc::ClientContext> context = NewContext(/*unary=*/false);
  Interrupt::Registration registration(interrupt_, context.get());
  auto stream = skills_->ImportTools(context.get());
  // Pieces well under gRPC's 4 MiB message limit.
  constexpr size_t kPieceBytes = 1 << 20;
  std::string piece(kPieceBytes, '\0');
  int64_t sent = 0;
  while (file) {
    file.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    const auto got = static_cast<size_t>(file.gcount());
    if (got == 0) break;
    v1::ImportToolsRequest request;
    request.set_data(piece.data(), got);
    if (!stream->Write(request)) break;  // the server ended the call: Finish says why
    sent += static_cast<int64_t>(got);
    if (!options_.json && sent % (64 * kPieceBytes) == 0) {
      Warn(absl::StrCat("uploaded ", sent >> 20, " MiB\n"));
    }
  }
  if (file.bad()) {
    context->TryCancel();
    Warn(absl::StrCat("heraldctl: reading ", CleanForTerminal(command.path, false), " failed\n"));
    (void)stream->Finish();
    return ExitCode::kUsage;
  }
  stream->WritesDone();
  std::optional<v1::ImportToolsReport> report;
  v1::ImportToolsEvent event;
  while (stream->Read(&event)) {
    if (options_.json) {
      Print(JsonLine(event));
    } else if (event.has_report()) {
      report = event.report();
    } else {
      Warn(absl::StrCat("imported ", event.lines_read(), " lines so far\n"));
    }
    if (event.has_report()) report = event.report();
  }
  grpc::Status status = stream->Finish();
  if (!status.ok()) return Fail(status);
  if (!report) {
    Warn("heraldctl: the import ended without a report\n");
    return ExitCode::kServerError;
  }
  if (!options_.json) {
    std::string text = absl::StrCat(report->added(), " added, ", report->updated(), " updated, ",
                                    report->unchanged(), " unchanged, ", report->rejected_count(),
                                    " refused; ", report->tools(), " tools in the registry\n");
    for (const auto& rejected : report->rejected()) {
      absl::StrAppend(&text, "line ", rejected.line(), ": ",
                      CleanForTerminal(rejected.error(), false), "\n");
    }
    if (report->rejected_count() > report->rejected_size()) {
      absl::StrAppend(&text, "(and ", report->rejected_count() - report->rejected_size(),
                      " more refused lines)\n");
    }
    Print(text);
  }
  return report->rejected_count() > 0 ? ExitCode::kNegativeResult : ExitCode::kOk;
}

ExitCode CommandRunner::Execute(const ToolsSearchCommand& command) {
  v1::SearchToolsRequest request;
  request.set_query(command.query);
  request.set_k(static_cast<int32_t>(command.k));
  v1::SearchToolsResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return skills_->SearchTools(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  if (options_.json) {
    // SPEC §11: an array, best first, of objects with at least id, name and score.
    nlohmann::json matches = nlohmann::json::array();
    for (const v1::ToolMatch& match : response.matches()) {
      matches.push_back({{"id", match.id()},
                         {"name", match.name()},
                         {"description", match.description()},
                         {"score", match.score()}});
    }
    Print(matches.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return ExitCode::kOk;
  }
  std::string text;
  for (const v1::ToolMatch& match : response.matches()) {
    absl::StrAppend(&text, absl::StrFormat("%8.3f  ", match.score()),
                    CleanForTerminal(match.id(), false), "  ",
                    CleanForTerminal(match.name(), false), "\n          ",
                    CleanForTerminal(match.description(), false), "\n");
  }
  if (text.empty()) text = "no tool matches\n";
  Print(text);
  return ExitCode::kOk;
}

}  // namespace herald::heraldctl
