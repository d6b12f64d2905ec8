// Pack index (.idx), version 2 (header, fan-out table, sorted object ids, CRCs, 32- and 64-bit
// offsets) or version 1 (fan-out table, then a 32-bit offset and an id per object), which git
// still reads and `git index-pack --index-version=1` still writes. Every table is validated
// against the file size on open; lookups never read past it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/mapped_file.h"

namespace pc {

// An abbreviated object id: the first `nibbles` hex digits, packed two per byte.
struct OidPrefix {
  uint8_t bytes[20] = {0};
  size_t nibbles = 0;
};

// -1 / 0 / 1 comparing the first prefix.nibbles hex digits of oid with the prefix.
int compare_prefix(const uint8_t* oid, const OidPrefix& prefix);

class PackIndex {
 public:
  void open(const std::string& path);
  uint32_t count() const { return count_; }
  const uint8_t* oid_at(uint32_t i) const { return oids_ + static_cast<size_t>(i) * stride_; }
  uint64_t offset_at(uint32_t i) const;
  bool find(const uint8_t* oid, uint64_t* offset) const;
  // Counts matches (stopping at 2) and copies the first one into out.
  int find_prefix(const OidPrefix& prefix, uint8_t* out) const;
  const uint8_t* pack_checksum() const { return map_->data() + map_->size() - 40; }
  const std::string& path() const { return map_->path(); }

 private:
  uint32_t fanout(int i) const;
  std::shared_ptr<const MappedFile> map_;
  int version_ = 2;
  const uint8_t* fanout_ = nullptr;
  uint32_t count_ = 0;
  const uint8_t* oids_ = nullptr;
  size_t stride_ = 20;  // bytes from one id to the next (v1: 24, an offset before each id)
  const uint8_t* off32_ = nullptr;
  const uint8_t* off64_ = nullptr;
  size_t n64_ = 0;
};

inline uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace pc
