// lstat of many worktree paths at once, for the dirty check of a switch or restore. A path
// whose leading directory is not a real directory (a symlink, a file, missing) is reported
// missing, as git's lstat-based check sees it, and never looked up through a link.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pc {

// Per-file stat words, in the order of a git index entry's stat fields:
// ctime s, ctime ns, mtime s, mtime ns, dev, ino, mode, uid, gid, size (each truncated to 32 bits).
constexpr size_t kStatWords = 10;

void fill_stat(const struct stat& st, uint32_t* words);

enum StatStatus : int32_t {
  kPresent = 0,    // stat words filled (mode word = st_mode)
  kAbsent = 1,     // nothing there, or a leading component is not a real directory
  kStatFailed = 2, // another error (EACCES, EIO, ...): errno in the mode word
};

struct StatRequest {
  std::string root;
  std::vector<const char*> paths;  // relative to root, NUL-terminated, ideally sorted
  size_t threads = 1;              // at most this many threads, fewer for few paths
};

// Below this many paths per thread, another thread costs more than it saves.
constexpr size_t kPathsPerThread = 2048;

struct StatResult {
  std::vector<uint32_t> stats;
  std::vector<int32_t> status;
};

// Throws only when the root itself cannot be opened.
void stat_files(const StatRequest& req, StatResult* result);

}  // namespace pc
