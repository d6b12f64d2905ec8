// Writes blobs to files under a root directory: open (exclusive, no symlinks followed), one
// write of the whole content, (optionally a sync,) fstat, close; an update unlinks the old file first. No directories are made here: the caller made
// them all up front. Policy (what to write, retries, the index) stays in TypeScript.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "convert/convert.h"
#include "odb/odb.h"
#include "worktree/stat.h"
#include "write/store.h"
#include "write/sync.h"

namespace pc {

enum FileStatus : int32_t {
  kWritten = 0,
  kCollided = 1,  // something was already there (or a leading component is not a directory)
  kFailed = 2,
};

enum WriteFlag : uint8_t {
  kReplace = 1,  // a file or symlink may be there: unlink it first (never a directory)
};

struct WriteRequest {
  std::string root;
  std::vector<const char*> paths;  // relative to root, NUL-terminated
  const uint8_t* oids = nullptr;   // 20 bytes per path
  const uint32_t* modes = nullptr; // 0100644 or 0100755
  const double* sizes = nullptr;   // inflated sizes when known (else 0), to pick streaming
  const uint8_t* flags = nullptr;  // per path, WriteFlag bits (null: none)
  uint64_t stream_threshold = 0;   // objects larger than this are streamed, not held whole
  // When not empty, one per path: the bytes to write instead of the blob (content an external
  // filter produced); the ids then only name the entries in messages.
  std::vector<std::pair<const uint8_t*, size_t>> contents;
  SyncMode sync = kSyncNone;
  // Per path: 0 = the blob as it is, k = conversions[k - 1] (null: none for every path).
  const uint8_t* convert = nullptr;
  std::vector<Conversion> conversions;
  // When set and nonzero (read atomically: JavaScript stores it with Atomics), no further file
  // is started; the files not started keep status kFailed with no error (see cancelled below).
  const int32_t* cancel = nullptr;
  // When not empty, the store's directory (write/store.h): files are imported from it where
  // it holds them, and added to it where it does not (not for `contents`).
  std::string store;
  // The link mode: a file the store holds is hard-linked into the tree (read-only files).
  bool store_link = false;
};

struct FileError {
  size_t index;
  std::string code;
  std::string message;
};

struct WriteResult {
  std::vector<uint32_t> stats;
  std::vector<int32_t> status;
  std::vector<FileError> errors;
  std::vector<FileError> warnings;  // written anyway (e.g. git's "failed to encode")
  uint64_t bytes = 0;
  // Stopped by the request's cancel flag (or the process exiting) before its last file.
  bool cancelled = false;
  StoreCounts store;  // with a store only
};

// Whether a request should stop before its next file: its cancel flag, or the process exiting
// (see parallel_write.h).
bool write_cancelled(const WriteRequest& req);

// Throws only when the root itself cannot be opened; per-file problems land in result.
void write_files(Odb& odb, const WriteRequest& req, WriteResult* result);

}  // namespace pc
