#include "component/base/shared_library.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace herald::base {

absl::StatusOr<SharedLibrary> SharedLibrary::Open(const char* file) {
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(
        error != nullptr ? error : absl::StrCat(file, " cannot be opened"));
  }
  return SharedLibrary(handle, file);
}

void* SharedLibrary::Symbol(const char* name) {
  void* symbol = dlsym(handle_, name);
  if (symbol == nullptr && missing_.empty()) missing_ = name;
  return symbol;
}

absl::Status SharedLibrary::AllFound() const {
  if (missing_.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(file_, " has no ", missing_));
}

}  // namespace herald::base
