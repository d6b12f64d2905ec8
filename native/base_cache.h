// A bounded LRU of inflated delta bases, keyed by (pack, offset). One per object reader, so
// threads never share or lock it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>

#include "common.h"

namespace pc {

class BaseCache {
 public:
  explicit BaseCache(size_t budget) : budget_(budget) {}
  bool get(uint32_t pack, uint64_t offset, Object* out);
  void put(uint32_t pack, uint64_t offset, const Object& obj);
  void clear();
  size_t bytes() const { return bytes_; }

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
  size_t budget_;
  size_t bytes_ = 0;
  std::list<Slot> lru_;  // front = most recently used
  std::unordered_map<Key, std::list<Slot>::iterator, KeyHash> map_;
};

}  // namespace pc
