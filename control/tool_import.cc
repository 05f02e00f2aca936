// control/tool_import.cc
#include "control/tool_import.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "control/control_context.h"

namespace herald::control {

ToolImportReactor::ToolImportReactor(grpc::CallbackServerContext* context,
                                     skills::ToolSearch& search,
                                     std::function<void(const grpc::Status&)> on_done)
    : context_(context), search_(search), on_done_(std::move(on_done)) {
  std::string path = search_.path() + ".upload-XXXXXX";
  upload_fd_ = ::mkostemp(path.data(), O_CLOEXEC);  // mode 0600
  if (upload_fd_ < 0) {
    Finishing(grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        absl::StrCat("cannot write the upload beside the registry: ", std::strerror(errno))));
    return;
  }
  upload_path_ = std::move(path);
  StartRead(&request_);
}

// Every call ends here, exactly once.
void ToolImportReactor::Finishing(grpc::Status status) {
  // Nothing reads the upload any more (the import, if any, is over): it goes before the
  // client hears the call is over.
  if (upload_fd_ >= 0) ::close(upload_fd_);
  upload_fd_ = -1;
  if (!upload_path_.empty()) ::unlink(upload_path_.c_str());
  upload_path_.clear();
  final_status_ = status;
  Finish(std::move(status));
}

void ToolImportReactor::OnReadDone(bool ok) {
  if (!ok) {
    // The client closed its side, or the call is over (cancelled, deadline).
    ::close(upload_fd_);
    upload_fd_ = -1;
    if (context_->IsCancelled()) {
      Finishing(grpc::Status(grpc::StatusCode::CANCELLED, "the upload was cancelled"));
      return;
    }
    search_.Import(
        upload_path_, [this](int64_t lines) { Progress(lines); },
        [this](absl::StatusOr<skills::ToolImportReport> report) { Imported(std::move(report)); });
    return;
  }
  const std::string& data = request_.data();
  received_ += static_cast<int64_t>(data.size());
  if (received_ > kMaxToolUploadBytes) {
    Finishing(InvalidArgument(
        absl::StrCat("the registry is larger than ", kMaxToolUploadBytes >> 30, " GiB")));
    return;
  }
  for (size_t written = 0; written < data.size();) {
    const ssize_t n = ::write(upload_fd_, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Finishing(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                             absl::StrCat("writing the upload failed: ", std::strerror(errno))));
      return;
    }
    written += static_cast<size_t>(n);
  }
  StartRead(&request_);
}

void ToolImportReactor::Progress(int64_t lines) {
  base::MutexLock lock(&mu_);
  pending_lines_ = lines;
  if (!write_in_flight_) WriteNext();
}

void ToolImportReactor::Imported(absl::StatusOr<skills::ToolImportReport> report) {
  // Finish is called without mu_ held: once it is, OnDone may run on another thread and
  // delete this reactor, mutex and all.
  std::optional<grpc::Status> finish;
  v1::ImportToolsEvent event;
  if (report.ok()) {
    v1::ImportToolsReport* out = event.mutable_report();
    out->set_lines(report->lines);
    out->set_added(report->added);
    out->set_updated(report->updated);
    out->set_unchanged(report->unchanged);
    out->set_rejected_count(report->rejected_count);
    for (const auto& rejected : report->rejected) {
      auto* line = out->add_rejected();
      line->set_line(rejected.line);
      line->set_error(rejected.error);
    }
    out->set_tools(report->tools);
  }
  {
    base::MutexLock lock(&mu_);
    pending_lines_.reset();
    if (!report.ok()) {
      failure_ = ToGrpcStatus(report.status());
      if (!write_in_flight_) finish = *failure_;  // else once the write in flight is done
    } else {
      report_ = std::move(event);
      if (!write_in_flight_) WriteNext();
    }
  }
  if (finish.has_value()) Finishing(*std::move(finish));
}

void ToolImportReactor::WriteNext() {
  if (report_.has_value() && !report_sent_) {
    writing_ = *report_;
    report_sent_ = true;
  } else if (pending_lines_.has_value() && !report_.has_value()) {
    writing_.Clear();
    writing_.set_lines_read(*pending_lines_);
    pending_lines_.reset();
  } else {
    return;
  }
  write_in_flight_ = true;
  StartWrite(&writing_);
}

void ToolImportReactor::OnWriteDone(bool ok) {
  std::optional<grpc::Status> finish;  // called after mu_ is released (see Imported)
  {
    base::MutexLock lock(&mu_);
    write_in_flight_ = false;
    if (failure_.has_value()) {
      finish = *failure_;
    } else if (report_sent_) {
      // The report was the last message (whether or not the client was still there for it).
      finish = ok ? grpc::Status::OK : grpc::Status(grpc::StatusCode::CANCELLED, "the client left");
    } else {
      WriteNext();  // a failed write is no reason to stop: the report's write ends the call
    }
  }
  if (finish.has_value()) Finishing(*std::move(finish));
}

void ToolImportReactor::OnDone() {
  if (on_done_) on_done_(final_status_);
  delete this;
}

}  // namespace herald::control
