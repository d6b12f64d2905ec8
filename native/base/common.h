// Shared types for the native side: error codes, object types, owned byte buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace pc {

// Every code native code can report. The addon exports their names (errorCodes) and
// src/addon.ts checks, when it loads the addon, that each is in src/errors.ts's table. Native
// code only reports a code and a short detail; TypeScript builds the message the user sees.
enum class Code {
  CorruptPack,
  CorruptObject,
  MissingObject,
  Io,
  UnsafePath,
  Unsupported,
  TooLarge,
  CorruptIndex,
  Internal,  // a request TypeScript should never have made (bad argument, closed reader)
  Aborted,   // the caller asked a long step to stop (base/cancel.h)
};
constexpr Code kAllCodes[] = {Code::CorruptPack, Code::CorruptObject, Code::MissingObject,
                              Code::Io,          Code::UnsafePath,    Code::Unsupported,
                              Code::TooLarge,    Code::CorruptIndex,  Code::Internal,
                              Code::Aborted};

const char* code_name(Code code);

class Error : public std::runtime_error {
 public:
  Error(Code code, const std::string& detail) : std::runtime_error(detail), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

enum ObjType : int {
  kNone = 0,
  kCommit = 1,
  kTree = 2,
  kBlob = 3,
  kTag = 4,
  kOfsDelta = 6,
  kRefDelta = 7,
};

const char* type_name(int type);

constexpr size_t kOidLen = 20;

std::string to_hex(const uint8_t* bytes, size_t n);
// The value of a lowercase or uppercase hex digit, or -1.
int hex_digit(char c);

// Frees a Buffer: large ones are their own anonymous mappings, returned to the system when
// dropped. From malloc, a freed block of several MiB raises glibc's mmap threshold to its
// size, and every later block of that size then comes from an arena that keeps its memory:
// measured on the Linux tree, ~45 MiB more peak RSS, held for the whole run.
struct BufferRelease {
  size_t mapped = 0;  // the mapping's length; 0 for a block from new[]
  void operator()(uint8_t* p) const;
};
using Buffer = std::unique_ptr<uint8_t[], BufferRelease>;
// Uninitialized bytes (null for 0). Throws std::bad_alloc when they cannot be had.
Buffer allocate_buffer(size_t n);

// Bytes that are written once and then shared read-only (delta-base cache, results).
// Not a std::vector: resizing a vector zero-fills, and every byte here is overwritten anyway.
struct Bytes {
  explicit Bytes(size_t n) : data(allocate_buffer(n)), size(n) {}
  Buffer data;
  size_t size;
};
using BytesPtr = std::shared_ptr<Bytes>;

// Allocates, reporting an impossible size as a coded error instead of std::bad_alloc.
BytesPtr alloc_bytes(size_t n);

struct Object {
  int type = kNone;
  BytesPtr bytes;
};

}  // namespace pc
