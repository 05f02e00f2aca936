// component/base/shared_library.h
//
// A system library opened at run time (dlopen) rather than linked: for the large ones a feature
// needs only when it is used, whose pages would otherwise be in every Herald's resident memory
// (FFmpeg for AAC voice messages, PocketSphinx for reading voice messages, espeak-ng for spoken
// answers; docs/BENCHMARKS.md). A library opened here stays open for the life of the process,
// with RTLD_NOW | RTLD_LOCAL: every symbol is bound at once, and none of the library's symbols
// resolves anything else in the process.
//
// The caller keeps its functions in a struct of pointers, typed by the header it compiled
// against, and looks each one up by its own name:
//
//   absl::StatusOr<base::SharedLibrary> lib = base::SharedLibrary::Open("libespeak-ng.so.1");
//   if (!lib.ok()) return lib.status();      // FailedPrecondition, with dlerror()'s words
//   HERALD_FIND_FUNCTION(*lib, api, espeak_Synth);  // lib->Find("espeak_Synth", &api.espeak_Synth)
//   if (absl::Status found = lib->AllFound(); !found.ok()) return found;  // names the first miss
#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace herald::base {

class SharedLibrary {
 public:
  // Opens `file` (a soname such as "libavformat.so.59", found as the dynamic loader finds
  // libraries). FailedPrecondition with the loader's reason when it cannot be.
  static absl::StatusOr<SharedLibrary> Open(const char* file);

  // Sets *function to the library's symbol `name`, or to nullptr when it has none (AllFound then
  // fails, naming the first such symbol).
  template <typename Function>
  void Find(const char* name, Function* function) {
    *function = reinterpret_cast<Function>(Symbol(name));
  }

  // OK when every Find so far found its symbol.
  absl::Status AllFound() const;

 private:
  SharedLibrary(void* handle, std::string file) : handle_(handle), file_(std::move(file)) {}
  void* Symbol(const char* name);

  void* handle_;  // never closed
  std::string file_;
  std::string missing_;  // the first symbol Find did not find
};

}  // namespace herald::base

// Looks `name` up in `library` (a SharedLibrary) into the member `name` of `api`: the name is
// written once, so the symbol looked up and the pointer it fills cannot disagree.
#define HERALD_FIND_FUNCTION(library, api, name) (library).Find(#name, &(api).name)
