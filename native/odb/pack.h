// One packfile (.pack v2/v3) with its index. The pack is mapped on first use; object headers
// are parsed with every offset and length checked against the mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/mapped_file.h"
#include "odb/pack_index.h"

namespace pc {

struct PackEntry {
  int type = 0;            // 1-4 for whole objects, 6/7 for deltas
  uint64_t size = 0;       // inflated size of the object (or of the delta data)
  uint64_t data_off = 0;   // start of the zlib stream
  uint64_t base_off = 0;   // kOfsDelta: the base's offset in this pack
  const uint8_t* base_oid = nullptr;  // kRefDelta: the base's object id
};

class Pack {
 public:
  explicit Pack(const std::string& idx_path);
  PackIndex& index() { return idx_; }
  const std::string& pack_path() const { return pack_path_; }
  // The pack's number in every reader's base cache (BaseCache::pack_key).
  uint32_t cache_key() const { return cache_key_; }
  PackEntry entry_at(uint64_t offset);
  // The bytes from data_off to the end of the object data (the trailer excluded).
  const uint8_t* data_at(uint64_t data_off, size_t* avail);
  // What a reader took from the mapping (see MappedFile::touched), and dropping its pages.
  void touched(uint64_t bytes) {
    if (map_) map_->touched(bytes);
  }
  void release() {
    if (map_) map_->release();
  }

 private:
  void ensure_open();
  [[noreturn]] void corrupt(uint64_t offset, const char* why) const;
  PackIndex idx_;
  std::shared_ptr<const MappedFile> map_;
  std::string pack_path_;
  uint32_t cache_key_ = 0;
  bool opened_ = false;
  uint64_t end_ = 0;  // end of object data: file size minus the 20-byte trailer
};

}  // namespace pc
