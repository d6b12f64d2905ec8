#include "odb/decode_stats.h"

namespace pc {

void DecodeStats::base(uint32_t pack, uint64_t offset, uint64_t size) {
  base_decodes++;
  base_bytes += size;
  if (bases.size() >= kMaxBases) {
    bases_dropped = true;
    return;
  }
  bases.push_back(Base{pack, offset, size});
}

void DecodeTally::add(const DecodeStats& stats,
                      const std::function<const std::string&(uint32_t)>& pack_name) {
  inflations += stats.inflations;
  inflated_bytes += stats.inflated_bytes;
  deltas += stats.deltas;
  cache_hits += stats.cache_hits;
  base_decodes += stats.base_decodes;
  base_bytes += stats.base_bytes;
  if (stats.bases_dropped) complete = false;
  std::unordered_map<uint32_t, uint32_t> ids;  // this reader's pack number -> ours
  for (const DecodeStats::Base& b : stats.bases) {
    auto id = ids.find(b.pack);
    if (id == ids.end()) {
      auto named = packs_.emplace(pack_name(b.pack), static_cast<uint32_t>(packs_.size())).first;
      id = ids.emplace(b.pack, named->second).first;
    }
    if (!seen_.insert(Key{id->second, b.offset}).second) {
      repeated_decodes++;
      repeated_bytes += b.size;
    }
  }
}

}  // namespace pc
