// component/base/sanitizers.h
//
// Whether this build runs under AddressSanitizer or ThreadSanitizer (tools/test --asan,
// --tsan). Such a build has the sanitizer's allocator, not glibc's, and reserves terabytes of
// address space: code that limits the address space or gives glibc's heap back asks here.
//
//   if (!base::kUnderSanitizer) LimitAddressSpace();
#pragma once

namespace herald::base {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif
#else
inline constexpr bool kUnderSanitizer = false;
#endif

}  // namespace herald::base
