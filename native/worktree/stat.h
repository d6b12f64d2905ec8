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
// Their names, exported by the addon so src/addon.ts can check the order when it loads it.
constexpr const char* kStatFields[kStatWords] = {"ctimeSec", "ctimeNsec", "mtimeSec", "mtimeNsec",
                                                 "dev",      "ino",       "mode",     "uid",
                                                 "gid",      "size"};

void fill_stat(const struct stat& st, uint32_t* words);

enum StatStatus : int32_t {
  kPresent = 0,    // stat words filled (mode word = st_mode)
  kAbsent = 1,     // nothing there, or a leading component is not a real directory
  kStatFailed = 2, // another error (EACCES, EIO, ...): errno in the mode word
};

// With an expectation (an index entry's mode and stat words), each present path also gets a
// verdict, git's ie_match_stat: the device is not compared (git is built without USE_STDEV),
// and an entry stamped in the index's own second or later is racy and must be hashed.
enum Verdict : uint8_t {
  kNoVerdict = 0,  // not compared (no expectation, or the path is absent / failed)
  kClean = 1,      // type, exec bit and stat data agree, not racy
  kDirty = 2,      // type, exec bit or size differ: modified without reading it
  kHash = 3,       // same type and size, other stat data or racy: only a hash can tell
};

struct Expect {
  const uint8_t* compare = nullptr;  // per path: 1 = compare with the words below
  const uint32_t* modes = nullptr;   // the index entry's mode (0100644, 0120000, 0160000, ...)
  const uint32_t* stats = nullptr;   // kStatWords per path, as the index stores them
  uint32_t racy_seconds = 0;         // the index file's mtime in seconds (0: nothing is racy)
  bool file_mode = true;             // core.filemode: the exec bit counts
  bool symlinks = true;              // core.symlinks: false, a link may be a plain file
  // git's checkout without a refresh of the index first (checkout -f, checkout-index, checkout
  // of paths): any change of the stat data git compares (whole seconds, no device) makes the
  // entry dirty — git rewrites it — where a switch (which refreshes) would hash the content.
  bool stat_change_is_dirty = false;
};

// Below this many paths per thread, another thread costs more than it saves (a local disk,
// where an lstat takes microseconds; a network filesystem asks for far fewer per thread).
constexpr size_t kPathsPerThread = 2048;

struct StatRequest {
  std::string root;
  std::vector<const char*> paths;  // relative to root, NUL-terminated, ideally sorted
  size_t threads = 1;              // at most this many threads, fewer for few paths
  size_t per_thread = kPathsPerThread;  // at least this many paths for each thread
  Expect expect;                   // optional (compare == nullptr: no verdicts)
};

// Where the results go, one element (stats: kStatWords) per path, owned by the caller (the
// binding hands in JavaScript's own arrays, so nothing is copied out). Zeroed by the caller.
struct StatResult {
  uint32_t* stats = nullptr;
  int32_t* status = nullptr;  // kPresent is 0: a zeroed array starts as "present"
  uint8_t* verdict = nullptr; // kNoVerdict is 0
};

// Throws only when the root itself cannot be opened.
void stat_files(const StatRequest& req, StatResult* result);

}  // namespace pc
