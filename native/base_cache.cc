#include "base_cache.h"

namespace pc {

bool BaseCache::get(uint32_t pack, uint64_t offset, Object* out) {
  auto it = map_.find(Key{pack, offset});
  if (it == map_.end()) return false;
  lru_.splice(lru_.begin(), lru_, it->second);
  *out = it->second->obj;
  return true;
}

void BaseCache::put(uint32_t pack, uint64_t offset, const Object& obj) {
  size_t size = obj.bytes ? obj.bytes->size : 0;
  if (size > budget_ / 2) return;  // one huge base would evict everything useful
  Key key{pack, offset};
  if (map_.count(key) != 0) return;
  lru_.push_front(Slot{key, obj});
  map_[key] = lru_.begin();
  bytes_ += size;
  while (bytes_ > budget_ && !lru_.empty()) {
    Slot& last = lru_.back();
    bytes_ -= last.obj.bytes ? last.obj.bytes->size : 0;
    map_.erase(last.key);
    lru_.pop_back();
  }
}

void BaseCache::clear() {
  lru_.clear();
  map_.clear();
  bytes_ = 0;
}

}  // namespace pc
