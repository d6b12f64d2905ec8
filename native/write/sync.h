// Durability primitives: the per-file step done by the writer before close, and the barriers the
// checkout runs after all writes and removals (syncfs of the worktree's filesystem, or fsync of
// many paths on native threads). Which one applies where is decided in TypeScript.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pc {

enum SyncMode : uint8_t {
  kSyncNone = 0,
  kSyncFile = 1,   // fsync before close: the data is durable when the file is reported written
  kSyncStart = 2,  // sync_file_range(SYNC_FILE_RANGE_WRITE): writeback started; a barrier ends it
};

// The writer's per-file step for `mode` on an open file. Returns false with errno set on failure
// (an I/O error); a filesystem that cannot start writeback early is not a failure (the barrier
// covers it).
bool sync_file(int fd, SyncMode mode);

// syncfs(2) of the filesystem holding root: waits for all its dirty data and metadata. Throws
// Error(Io) when root cannot be opened or syncfs fails.
void sync_filesystem(const std::string& root);

struct FsyncRequest {
  std::string root;
  std::vector<const char*> paths;  // relative to root ("." for root), files or directories
  size_t threads = 1;              // at most this many threads
};

// fsync of each path, opened read-only beneath root without following symlinks. Per path: 0, or
// the errno (ENOENT when the path is gone). Throws only when root cannot be opened.
void fsync_paths(const FsyncRequest& req, std::vector<int32_t>* errors);

}  // namespace pc
