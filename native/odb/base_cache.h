// A bounded LRU of inflated delta bases, shared by every reader of one object store (one
// reader per thread): a base one thread decoded serves the others, and one total budget
// bounds the memory whatever the number of threads. Keyed by (pack, offset), where a pack is
// known by pack_key(): readers number their packs each in their own order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/common.h"

namespace pc {

class BaseCache {
 public:
  explicit BaseCache(size_t budget) : budget_(budget) {}
  // One number per pack file (path and checksum) for the life of the process.
  static uint32_t pack_key(const std::string& path, const uint8_t* checksum);
  bool get(uint32_t pack, uint64_t offset, Object* out);
  // A base larger than half the budget is not kept: it would evict everything useful.
  void put(uint32_t pack, uint64_t offset, const Object& obj);
  void clear();

 private:
  struct Key {
    uint32_t pack;
    uint64_t offset;
    bool operator==(const Key& o) const { return pack == o.pack && offset == o.offset; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.offset * 31 + k.pack);
    }
  };
  struct Slot {
    Key key;
    Object obj;
  };
  const size_t budget_;
  std::mutex mu_;  // held only to look up, link and unlink: never while decoding
  size_t bytes_ = 0;
  std::list<Slot> lru_;  // front = most recently used
  std::unordered_map<Key, std::list<Slot>::iterator, KeyHash> map_;
};

}  // namespace pc
