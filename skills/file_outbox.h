// skills/file_outbox.h
//
// Files a run's tools made for the person it answers (X12, attachments out): a chart, a
// generated picture, an export. A skill adds what it made to the run's outbox (SkillContext::
// files) and tells the model in its text that the file will be sent; when the run has answered,
// the runtime uploads each file through the XMPP server's upload service (XEP-0363) and sends
// the link (XEP-0066) with its caption (component/agent/turn_media.h). The outbox holds the
// run's limits: past them Add refuses with a message the skill can hand to the model.
//
//   absl::Status kept = context.files->Add({.name = "chart.png", .media_type = "image/png",
//                                           .bytes = std::move(png), .caption = "Sales by week"});
//   done(kept.ok() ? "The chart will be sent to the user as a file." : kept.message());
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/base/mutex.h"

namespace herald::skills {

struct OutgoingFile {
  // What the file is called where the person sees it ("chart.png"); the runtime keeps only
  // letters, digits, '.', '-' and '_' of it.
  std::string name;
  // What the skill says it is; the runtime sniffs the bytes and sends what they are.
  std::string media_type;
  std::shared_ptr<const std::string> bytes;
  std::string caption;  // a short line said with the link; may be ""
};

class FileOutbox {
 public:
  FileOutbox(size_t max_files, size_t max_bytes) : max_files_(max_files), max_bytes_(max_bytes) {}

  // Keeps `file` for sending after the run; FailedPrecondition when files cannot be sent here
  // (max_files 0), ResourceExhausted past the run's count or a file's size limit.
  absl::Status Add(OutgoingFile file) ABSL_LOCKS_EXCLUDED(mu_) {
    const size_t size = file.bytes == nullptr ? 0 : file.bytes->size();
    if (size == 0) return absl::InvalidArgumentError("the file is empty; nothing will be sent");
    if (max_files_ == 0) {
      return absl::FailedPreconditionError("files cannot be sent in this conversation");
    }
    if (size > max_bytes_) {
      return absl::ResourceExhaustedError(absl::StrCat("the file is ", size,
                                                       " bytes, more than the ", max_bytes_,
                                                       " bytes a file sent may have"));
    }
    base::MutexLock lock(&mu_);
    if (files_.size() >= max_files_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("a run sends at most ", max_files_, " files; this one will not be sent"));
    }
    files_.push_back(std::move(file));
    return absl::OkStatus();
  }

  // What was added, in order; the outbox is empty afterwards.
  std::vector<OutgoingFile> Take() ABSL_LOCKS_EXCLUDED(mu_) {
    base::MutexLock lock(&mu_);
    return std::exchange(files_, {});
  }

 private:
  const size_t max_files_;
  const size_t max_bytes_;
  base::Mutex mu_;
  std::vector<OutgoingFile> files_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::skills
