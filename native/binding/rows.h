// N-API glue for the planner's row work (plan/rows.h, plan/gather.h, plan/dirs.h): joinRows,
// gatherEntries, gatherStats, rowsToDecide, dirsOf, and the path lists they (and others) read.
#pragma once

#include <napi.h>

#include "plan/rows.h"

namespace pc::binding {

// A list { count, paths: Buffer, starts: Uint32Array, oids: Buffer, modes: Uint32Array } (or
// null: an empty one), checked: arrays long enough, offsets inside the paths (valid_path_list).
// It points into the JS buffers, valid while they are.
PathList path_list_arg(Napi::Env env, const Napi::Value& v, const char* what);

// joinRows(index, stages, head, target) -> { count, i, h, m, unmerged }; each list is
// { paths: Buffer, starts: Uint32Array, count } or null.
Napi::Value JoinRows(const Napi::CallbackInfo& info);

// gatherEntries(index, target, src: Uint8Array, idx: Int32Array) -> { count, paths, starts,
// oids, modes }, or null when the result is one of the lists whole (gather.h).
Napi::Value GatherEntries(const Napi::CallbackInfo& info);

// gatherStats({ src, idx, write, freshSlot, smudge }, old: Uint32Array, fresh: Uint32Array)
// -> Uint32Array (10 words per position; gather.h).
Napi::Value GatherStats(const Napi::CallbackInfo& info);

// newStats(count) -> a zeroed Uint32Array of count stat records (kStatWords words each), in
// memory of huge pages when large (arrays.h).
Napi::Value NewStats(const Napi::CallbackInfo& info);

// dirsOf(list, select: Uint8Array | null) -> Buffer of NUL-terminated directories (dirs.h).
Napi::Value DirsOf(const Napi::CallbackInfo& info);

// rowsToDecide({ i, unmerged, same }, stats: Uint32Array, racySeconds) -> Int32Array (rows.h).
Napi::Value RowsToDecide(const Napi::CallbackInfo& info);

}  // namespace pc::binding
