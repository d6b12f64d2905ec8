// Path operations relative to a root directory that never follow a symlink in any component,
// so a link planted in the worktree can never redirect a write or an unlink outside it.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/fd.h"

namespace pc {

// Opens the root directory itself; throws Error(Io) when it cannot.
Fd open_root(const std::string& root);

// Whether openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH) is used: probed once per process (the
// addon probes it when it loads), never changed afterwards.
bool have_openat2();

// openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH) with O_NOFOLLOW added. Where the kernel lacks
// openat2 (before 5.6, or a seccomp filter), the path is walked one component at a time with
// O_NOFOLLOW|O_DIRECTORY, so a symlinked leading directory is refused (ELOOP) either way.
// Returns -1 with errno set on failure.
int open_beneath(int rootfd, const char* rel, int flags, mode_t mode);

// Removes the file or symlink at rel. Leading components are resolved without following
// symlinks. Returns 0, or an errno (ENOENT when nothing was there).
int unlink_beneath(int rootfd, const char* rel);

}  // namespace pc
