// What object readers decoded: inflations, delta applications, delta-base cache hits, and each
// delta base decoded — so a checkout can tell, across all its readers (one per thread), whether
// any base was decoded more than once and what that cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace pc {

// One reader's record since it was last drained. Only its own thread touches it.
struct DecodeStats {
  uint64_t inflations = 0;      // zlib streams inflated (pack entries, loose objects)
  uint64_t inflated_bytes = 0;  // their inflated sizes
  uint64_t deltas = 0;          // delta applications
  uint64_t cache_hits = 0;      // delta bases (or objects) served by the base cache
  uint64_t base_decodes = 0;    // delta bases decoded (each offered to the cache)
  uint64_t base_bytes = 0;
  struct Base {
    uint32_t pack;  // the reader's own pack number
    uint64_t offset;
    uint64_t size;
  };
  std::vector<Base> bases;     // each base decoded, in order (at most kMaxBases)
  bool bases_dropped = false;  // more than kMaxBases: later ones counted, not recorded

  static constexpr size_t kMaxBases = 1 << 20;
  void base(uint32_t pack, uint64_t offset, uint64_t size);
};

// Several readers' records added together; bases are told apart by pack file and offset.
class DecodeTally {
 public:
  // pack_name(k) is the path of the reader's pack k.
  void add(const DecodeStats& stats, const std::function<const std::string&(uint32_t)>& pack_name);

  uint64_t inflations = 0;
  uint64_t inflated_bytes = 0;
  uint64_t deltas = 0;
  uint64_t cache_hits = 0;
  uint64_t base_decodes = 0;     // bases decoded, all readers
  uint64_t base_bytes = 0;
  uint64_t repeated_decodes = 0;  // decodes of a base some reader had already decoded
  uint64_t repeated_bytes = 0;
  bool complete = true;  // false if a reader's record was cut short

  uint64_t distinct_bases() const { return base_decodes - repeated_decodes; }

 private:
  struct Key {
    uint32_t pack;
    uint64_t offset;
    bool operator==(const Key& o) const { return pack == o.pack && offset == o.offset; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.offset * 31 + k.pack); }
  };
  std::unordered_map<std::string, uint32_t> packs_;
  std::unordered_set<Key, KeyHash> seen_;
};

}  // namespace pc
