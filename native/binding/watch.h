// N-API glue for Watch (worktree/watch.h): `new Watch()`, add, forgetRoot, remove, drain, close.
#pragma once

#include <napi.h>

namespace pc::binding {

Napi::Function define_watch(Napi::Env env);

// The event bits TypeScript reads: { isDir, ignored, deleteSelf, moveSelf } (inotify.h's).
Napi::Object watch_flags(Napi::Env env);

}  // namespace pc::binding
