// git's blob ids of worktree files, for the entries a checkout must compare by content (racy
// ones, and those whose stat data changed): read without following a symlink anywhere, hashed
// as "blob <size>\0<content>" with SHA-1 (Node's own OpenSSL), on native threads. Files that
// need a conversion before hashing (attributes, filters) are TypeScript's, not this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "worktree/worktree.h"

namespace pc {

// Per path (relative, NUL-terminated): 1 when it is a regular file whose blob id is the 20
// bytes at oids + 20 * i, else 0 (absent, unreadable, not a regular file, other content, or
// changed size while read). Up to `threads` threads.
void same_blobs(const Worktree& wt, const std::vector<const char*>& paths, const uint8_t* oids,
                size_t threads, uint8_t* same);

}  // namespace pc
