// component/base/version.h
//
// Herald's release version: reported by `herald --version`, in XEP-0092 answers and (later)
// by the control plane's status.
#pragma once

namespace herald {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace herald
