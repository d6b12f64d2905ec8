// N-API glue for git's path rules (plan/path_rules.h): verifyPath, verifyPaths, and the
// protection bits the tree walk and the index lender take too (binding/odb.cc).
#pragma once

#include <napi.h>

#include "plan/path_rules.h"

namespace pc::binding {

// The protection bits of verifyPath(s)/walkTree/lendIndex: core.protectNTFS, core.protectHFS
// (exported in the layout as `protect`).
constexpr int kProtectNtfs = 1;
constexpr int kProtectHfs = 2;

PathProtection protection_arg(Napi::Env env, const Napi::Value& v);

// verifyPath(path: Buffer, mode: number, protect: number) -> null | { index: 0, rule, text }
Napi::Value VerifyPath(const Napi::CallbackInfo& info);

// verifyPaths(paths: Buffer of NUL-terminated paths, modes: Uint32Array, protect: number)
//   -> null, or { index, rule, text } for the first path refused.
Napi::Value VerifyPaths(const Napi::CallbackInfo& info);

}  // namespace pc::binding
