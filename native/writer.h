// Writes blobs to files under a root directory: open (exclusive, no symlinks followed), one
// write of the whole content, fstat, close. No directories are made here: the caller made
// them all up front. Policy (what to write, retries, the index) stays in TypeScript.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "odb.h"

namespace pc {

// Per-file stat words, in the order of a git index entry's stat fields:
// ctime s, ctime ns, mtime s, mtime ns, dev, ino, mode, uid, gid, size (each truncated to 32 bits).
constexpr size_t kStatWords = 10;

enum FileStatus : int32_t {
  kWritten = 0,
  kCollided = 1,  // something was already there (or a leading component is not a directory)
  kFailed = 2,
};

struct WriteRequest {
  std::string root;
  std::vector<const char*> paths;  // relative to root, NUL-terminated
  const uint8_t* oids = nullptr;   // 20 bytes per path
  const uint32_t* modes = nullptr; // 0100644 or 0100755
  const double* sizes = nullptr;   // inflated sizes when known (else 0), to pick streaming
  uint64_t stream_threshold = 0;   // objects larger than this are streamed, not held whole
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
  uint64_t bytes = 0;
};

// Throws only when the root itself cannot be opened; per-file problems land in result.
void write_files(Odb& odb, const WriteRequest& req, WriteResult* result);

}  // namespace pc
