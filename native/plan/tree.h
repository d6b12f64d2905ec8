// Walks a tree object recursively into a flat list in index order (paths joined with '/').
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/huge_buffer.h"
#include "odb/odb.h"
#include "plan/path_rules.h"

namespace pc {

// The walk's list, in memory of huge pages once large (base/huge_buffer.h): the binding hands
// these arrays to JavaScript as they are (a million entries are ~75 MB, copied and faulted in a
// second time before).
struct FlatTree {
  HugeBuffer paths;             // each path followed by a NUL
  HugeArray<uint32_t> modes;    // canonical: 0100644, 0100755, 0120000, 0160000
  HugeBuffer oids;              // 20 bytes per entry
  HugeArray<uint32_t> starts;   // where each path starts in `paths`, and its end: count + 1
  size_t count = 0;
};

// One directory of a walk, in tree pre-order (the root first, then each directory before what
// it holds): git's cache-tree node, and what a later walk copies from.
struct WalkDir {
  std::string path;  // with a final '/' ("" for the root)
  std::string oid;   // 20 bytes
  size_t entry_begin = 0, entry_end = 0;  // its entries in the flat list, recursively
  size_t path_begin = 0, path_end = 0;    // their bytes in the flat list's paths
  uint32_t subtrees = 0;                  // directories directly in it
  bool lendable = true;                   // in a memo: whether a walk may copy it
};

// A list whose directories a walk may copy instead of reading their trees: a previous walk
// (a switch walks the target, then HEAD: they share most subtrees) or the index, lent by its
// cache-tree (index_lender.h). A directory found at the same path with the same id is copied,
// with the directories under it; its entries were checked under `protect`, byte for byte as the
// walk checks them (the walk that made it, or the caller that verified the index's paths).
struct WalkMemo {
  PathProtection protect{};
  // The entries, in FlatTree's layout: a kept walk's or the lent index's arrays, which the
  // caller keeps alive and unchanged while the memo is.
  const char* paths = nullptr;
  const uint32_t* modes = nullptr;
  const char* oids = nullptr;
  const uint32_t* starts = nullptr;
  // Pre-order, which is also the byte order of their paths (each with its final '/'): a
  // directory is found by a binary search (a map of 100,000 paths cost more to build than the
  // searches of a walk).
  std::vector<WalkDir> dirs;
};

// The position in memo.dirs of the directory at `path` (with its final '/'), or SIZE_MAX.
size_t find_dir(const WalkMemo& memo, const std::string& path);

// Throws Error(CorruptObject) for malformed or unsorted entries and for a name listed twice in
// one tree (adjacent or not), and Error(UnsafePath) for an empty name, a name with a '/', and
// every path git's verify_path refuses under `protect` (see path_rules.h). `reuse`: lists to
// copy identical subtrees from (the first that has one; nulls skipped). `dirs`: every directory
// of the result, in pre-order (the copied ones included).
void walk_tree(Odb& odb, const uint8_t* tree_oid, PathProtection protect, FlatTree* out,
               std::vector<WalkDir>* dirs, const std::vector<const WalkMemo*>& reuse = {});

// A walk kept as a memo for later walks: every directory of it may be lent. `paths`, `modes`,
// `oids` and `starts` are its FlatTree's arrays (wherever they live now; see WalkMemo).
void keep_walk(const char* paths, const uint32_t* modes, const char* oids, const uint32_t* starts,
               std::vector<WalkDir> dirs, PathProtection protect, WalkMemo* memo);

}  // namespace pc
