// Walks a tree object recursively into a flat list in index order (paths joined with '/').
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
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
// it holds): git's cache-tree node, and what a later walk copies from. Its path lies in its
// WalkDirs' pool.
struct WalkDir {
  size_t path_at = 0, path_len = 0;       // its path in the pool: with a final '/', "" for the root
  size_t entry_begin = 0, entry_end = 0;  // its entries in the flat list, recursively
  size_t path_begin = 0, path_end = 0;    // their bytes in the flat list's paths
  uint32_t subtrees = 0;                  // directories directly in it
  bool lendable = true;                   // in a memo: whether a walk may copy it
  uint8_t oid[20] = {};                   // its tree's id (zeros where none is known)
};

// A walk's directories, in pre-order, their paths in one pool. A million-file tree has 200,000
// directories: as two strings each (path and id), the walk and the lent index made 800,000
// small allocations, ~70 MB faulted in, most of it resident to the end of the call.
class WalkDirs {
 public:
  size_t size() const { return dirs_.size(); }
  bool empty() const { return dirs_.empty(); }
  WalkDir& operator[](size_t j) { return dirs_[j]; }
  const WalkDir& operator[](size_t j) const { return dirs_[j]; }
  WalkDir& back() { return dirs_.back(); }
  std::string_view path(size_t j) const {
    return std::string_view(pool_.data() + dirs_[j].path_at, dirs_[j].path_len);
  }
  // Every path, each followed by a NUL: the pool's bytes.
  size_t path_bytes() const { return pool_.size(); }
  // A new last directory at `path`, with the id `oid` (20 bytes; null: none) and the rest
  // copied from `like`.
  WalkDir& add(std::string_view path, const uint8_t* oid, const WalkDir& like = WalkDir{}) {
    WalkDir d = like;
    d.path_at = pool_.size();
    d.path_len = path.size();
    if (oid != nullptr) std::memcpy(d.oid, oid, 20);
    pool_.append(path.data(), path.size());
    pool_.push_back('\0');
    dirs_.push_back(d);
    return dirs_.back();
  }
  void reserve(size_t dirs, size_t path_bytes) {
    dirs_.reserve(dirs);
    pool_.reserve(path_bytes);
  }
  void clear() {
    dirs_.clear();
    pool_.clear();
  }

 private:
  std::vector<WalkDir> dirs_;
  std::string pool_;
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
  WalkDirs dirs;
};

// The position in memo.dirs of the directory at `path` (with its final '/'), or SIZE_MAX.
size_t find_dir(const WalkMemo& memo, std::string_view path);

// Throws Error(CorruptObject) for malformed or unsorted entries and for a name listed twice in
// one tree (adjacent or not), and Error(UnsafePath) for an empty name, a name with a '/', and
// every path git's verify_path refuses under `protect` (see path_rules.h). `reuse`: lists to
// copy identical subtrees from (the first that has one; nulls skipped). `dirs`: every directory
// of the result, in pre-order (the copied ones included).
void walk_tree(Odb& odb, const uint8_t* tree_oid, PathProtection protect, FlatTree* out,
               WalkDirs* dirs, const std::vector<const WalkMemo*>& reuse = {});

// A walk kept as a memo for later walks: every directory of it may be lent. `paths`, `modes`,
// `oids` and `starts` are its FlatTree's arrays (wherever they live now; see WalkMemo).
void keep_walk(const char* paths, const uint32_t* modes, const char* oids, const uint32_t* starts,
               WalkDirs dirs, PathProtection protect, WalkMemo* memo);

}  // namespace pc
