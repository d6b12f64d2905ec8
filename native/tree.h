// Walks a tree object recursively into a flat list in index order (paths joined with '/').
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
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

// A walk kept for the next one (a switch walks HEAD's tree and the target, which share most
// subtrees): its flat list, and where each directory's entries are in it. A later walk with
// the same protection copies a subtree found at the same path with the same id instead of
// reading and checking its trees again (it was checked the same way, byte for byte).
struct WalkMemo {
  struct Range {
    std::string oid;  // 20 bytes
    size_t path_begin, path_end, entry_begin, entry_end;
  };
  PathProtection protect{};
  FlatTree tree;
  std::unordered_map<std::string, Range> dirs;  // key: the directory's path with a final '/'
};

// Throws Error(CorruptObject) for malformed or unsorted entries and for a name listed twice in
// one tree (adjacent or not), and Error(UnsafePath) for an empty name, a name with a '/', and
// every path git's verify_path refuses under `protect` (see path_rules.h). `reuse`: a previous
// walk to copy identical subtrees from; `record`: where to keep this walk's directories (its
// `tree` is left empty: the caller moves `out` there).
void walk_tree(Odb& odb, const uint8_t* tree_oid, PathProtection protect, FlatTree* out,
               const WalkMemo* reuse = nullptr, WalkMemo* record = nullptr);

}  // namespace pc
