// Walks a tree object recursively into a flat list in index order (paths joined with '/').
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "odb.h"

namespace pc {

struct FlatTree {
  std::string paths;            // each path followed by a NUL
  std::vector<uint32_t> modes;  // canonical: 0100644, 0100755, 0120000, 0160000
  std::string oids;             // 20 bytes per entry
  size_t count = 0;
};

// Throws Error(CorruptObject) for malformed, unsorted or duplicate entries and
// Error(UnsafePath) for names that may not appear in a worktree (".", "..", ".git", "a/b").
void walk_tree(Odb& odb, const uint8_t* tree_oid, FlatTree* out);

}  // namespace pc
