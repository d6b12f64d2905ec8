// N-API glue for Worktree (worktree.h): `new Worktree(root)` with one method per operation.
#pragma once

#include <napi.h>

namespace pc::binding {

Napi::Function define_worktree(Napi::Env env);

}  // namespace pc::binding
