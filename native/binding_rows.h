// N-API glue for join_rows (rows.h).
#pragma once

#include <napi.h>

namespace pc::binding {

// joinRows(index, stages, head, target) -> { count, i, h, m, unmerged }; each list is
// { paths: Buffer, starts: Uint32Array, count } or null.
Napi::Value JoinRows(const Napi::CallbackInfo& info);

}  // namespace pc::binding
