#include "odb/base_cache.h"

#include <iterator>
#include <map>
#include <utility>

namespace pc {

uint32_t BaseCache::pack_key(const std::string& path, const uint8_t* checksum) {
  // Leaked on purpose, like the mapping registry: readers may outlive static destructors.
  static std::mutex* lock = new std::mutex;
  static auto* keys = new std::map<std::string, uint32_t>;
  std::string name = path + '\0' + std::string(reinterpret_cast<const char*>(checksum), 20);
  std::lock_guard<std::mutex> guard(*lock);
  auto it = keys->find(name);
  if (it != keys->end()) return it->second;
  uint32_t key = static_cast<uint32_t>(keys->size());
  keys->emplace(std::move(name), key);
  return key;
}

bool BaseCache::get(uint32_t pack, uint64_t offset, Object* out) {
  std::lock_guard<std::mutex> guard(mu_);
  auto it = map_.find(Key{pack, offset});
  if (it == map_.end()) return false;
  lru_.splice(lru_.begin(), lru_, it->second);
  *out = it->second->obj;
  return true;
}

void BaseCache::put(uint32_t pack, uint64_t offset, const Object& obj) {
  size_t size = obj.bytes ? obj.bytes->size : 0;
  if (size > budget_ / 2) return;
  Key key{pack, offset};
  std::list<Slot> evicted;  // freed after the lock is let go
  std::lock_guard<std::mutex> guard(mu_);
  if (map_.count(key) != 0) return;
  lru_.push_front(Slot{key, obj});
  map_[key] = lru_.begin();
  bytes_ += size;
  while (bytes_ > budget_ && !lru_.empty()) {
    Slot& last = lru_.back();
    bytes_ -= last.obj.bytes ? last.obj.bytes->size : 0;
    map_.erase(last.key);
    evicted.splice(evicted.begin(), lru_, std::prev(lru_.end()));
  }
}

void BaseCache::clear() {
  std::list<Slot> dropped;
  {
    std::lock_guard<std::mutex> guard(mu_);
    dropped.swap(lru_);
    map_.clear();
    bytes_ = 0;
  }
}

}  // namespace pc
