// control/tool_import.h
//
// The server side of SkillService.ImportTools: a bidirectional stream that receives a JSON
// Lines registry in pieces, writes them to a private file beside the registry (mode 0600),
// and, once the client has closed its side, imports that file through skills::ToolSearch,
// streaming the lines read every 10,000 and then the report. A client that cancels before
// closing its side imports nothing; one that goes away during the import does not stop it
// (the import is one transaction, and its report is audited either way). The upload file is
// removed when the call ends.
//
//   return new ToolImportReactor(control, *search, actor, audit);   // from ImportTools
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "component/base/mutex.h"
#include "proto/herald/v1/skill.pb.h"
#include "skills/tool_search/tool_search.h"

namespace herald::control {

// The most an upload may be; a registry of a million tools is about 300 MiB.
inline constexpr int64_t kMaxToolUploadBytes = int64_t{2} << 30;

class ToolImportReactor final
    : public grpc::ServerBidiReactor<v1::ImportToolsRequest, v1::ImportToolsEvent> {
 public:
  // `on_done` gets the status the call ended with (for the audit log).
  ToolImportReactor(grpc::CallbackServerContext* context, skills::ToolSearch& search,
                    std::function<void(const grpc::Status&)> on_done);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  void Finishing(grpc::Status status);  // records the status for on_done, then Finish
  void Progress(int64_t lines) ABSL_LOCKS_EXCLUDED(mu_);
  void Imported(absl::StatusOr<skills::ToolImportReport> report) ABSL_LOCKS_EXCLUDED(mu_);
  void WriteNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  grpc::CallbackServerContext* context_;
  skills::ToolSearch& search_;
  std::function<void(const grpc::Status&)> on_done_;
  v1::ImportToolsRequest request_;
  std::string upload_path_;  // "" until created
  int upload_fd_ = -1;
  int64_t received_ = 0;
  grpc::Status final_status_;

  base::Mutex mu_;
  v1::ImportToolsEvent writing_ ABSL_GUARDED_BY(mu_);
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<int64_t> pending_lines_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::ImportToolsEvent> report_ ABSL_GUARDED_BY(mu_);
  bool report_sent_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> failure_ ABSL_GUARDED_BY(mu_);  // the import failed
};

}  // namespace herald::control
