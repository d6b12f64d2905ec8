// Loose objects: their header, and a stream over one (read when small, mapped when large).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "odb/inflate.h"
#include "odb/odb.h"

namespace pc {

// Parses "<type> <size>\0" at the start of a loose object. Returns the header length, or 0
// when it is malformed.
size_t parse_loose_header(const uint8_t* p, size_t n, int* type, uint64_t* size);

// The type and size of the loose object in the file at `path`, from its first bytes; false
// when they give no well-formed, plausible header.
bool loose_header(const std::string& path, int* type, uint64_t* size);

// The object in the loose file at `path` (named `oid`), inflated as it is read. A bad header
// or implausible size throws at construction, corrupt data while reading (ERR_CORRUPT_OBJECT).
class LooseStream : public ObjectStream {
 public:
  LooseStream(const std::string& path, const uint8_t* oid);
  size_t read(uint8_t* out, size_t cap) override;

 private:
  static constexpr size_t kSmall = 64 * 1024;

  std::vector<uint8_t> small_;
  MappedFile map_;
  std::unique_ptr<InflateStream> z_;
  std::vector<uint8_t> pending_;
  std::string oid_;
};

}  // namespace pc
