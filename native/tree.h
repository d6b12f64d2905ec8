// Walks a tree object recursively into a flat list in index order (paths joined with '/').
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "odb.h"
#include "path_rules.h"

namespace pc {

struct FlatTree {
  std::string paths;            // each path followed by a NUL
  std::vector<uint32_t> modes;  // canonical: 0100644, 0100755, 0120000, 0160000
  std::string oids;             // 20 bytes per entry
  size_t count = 0;
};

// Throws Error(CorruptObject) for malformed or unsorted entries and for a name listed twice in
// one tree (adjacent or not), and Error(UnsafePath) for an empty name, a name with a '/', and
// every path git's verify_path refuses under `protect` (see path_rules.h).
void walk_tree(Odb& odb, const uint8_t* tree_oid, PathProtection protect, FlatTree* out);

}  // namespace pc
