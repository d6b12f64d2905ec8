// The index as a list a tree walk may copy from: the directories its cache-tree (the TREE
// extension) names, with the tree id each had when the index last matched it, and the entries
// the index holds under each. A switch or forced checkout then reads only the trees that
// changed since, as git's unpack_trees does with the cache-tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "index/cache_tree.h"
#include "plan/rows.h"
#include "plan/tree.h"

namespace pc {

// Fills `memo` with the index's entries (pointing at `index`'s arrays, which must outlive it)
// and, from its cache-tree `dirs` (parse_cache_tree), every directory that may be lent: valid, and so
// is every directory under it; its entry count matches the index entries whose paths start with
// its path (exactly those, and in one run); none of those is unmerged, intent-to-add or of a
// mode a tree cannot hold. An index with a file and a directory of one name, or a directory
// list out of order, lends nothing. `stages` and `ext_flags` have one value per entry. The
// caller has checked every path of `index` under `protect` (as the walk checks tree entries).
// Returns how many directories may be lent. `dirs` is taken: its paths and ids move into the
// memo's directories.
size_t lend_index(const PathList& index, const uint8_t* stages, const uint16_t* ext_flags,
                  std::vector<CacheTreeDir> dirs, PathProtection protect, WalkMemo* memo);

}  // namespace pc
