// N-API glue for the worktree: Worktree (worktree/worktree.h), `new Worktree(root)` with one
// method per operation, and statFiles (worktree/stat.h), the probe's batch of lstats.
#pragma once

#include <napi.h>

namespace pc::binding {

Napi::Function define_worktree(Napi::Env env);

// statFiles({ root, paths, threads?, expect? }) -> { stats: Uint32Array, status: Int32Array,
// verdict: Uint8Array }: lstat of each path, never through a symlinked leading directory.
Napi::Value StatFiles(const Napi::CallbackInfo& info);

}  // namespace pc::binding
