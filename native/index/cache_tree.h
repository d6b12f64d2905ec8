// git's cache-tree, the index's TREE extension (gitformat-index, "Cache tree"): per directory,
// how many index entries lie under it and, while they still make it, the id of its tree.
// Parsed here into a flat list, and written from a tree walk's directories.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pc {

// One directory. Lists are in pre-order: the root first, every directory before what it
// holds, paths (with their final '/') in byte order, which is tree order.
struct CacheTreeDir {
  std::string path;    // "" for the root, else "a/b/"
  int32_t entries;     // index entries under it, or -1: not valid (no id)
  std::string oid;     // 20 bytes when entries >= 0, else empty
};

// Parses the extension's data (without signature and size). False for anything malformed
// (bad numbers, a truncated id, a name with '/', an empty name below the root, the same
// directory twice, nesting deeper than the tree walk allows, bytes left over); `out` then
// holds nothing usable.
bool parse_cache_tree(const uint8_t* data, size_t size, std::vector<CacheTreeDir>* out);

// The whole extension (signature "TREE", size, data) for `dirs` in pre-order, as git writes it:
// each directory's subdirectories in git's order (shorter names first, then bytes).
std::string write_cache_tree(const std::vector<CacheTreeDir>& dirs);

// The same extension for a tree walk's directories as they are (views of the caller's arrays,
// no node per directory): `paths` in pre-order and byte order (each NUL-terminated, with its
// final '/', "" for the root), 20 bytes of id each in `oids`, each one's entry count in
// `entries`; every directory above one of `differing` (NUL-terminated paths, concatenated) is
// written not valid, as invalidate_above marks it. False when `paths` is not such a list.
bool write_walk_cache_tree(const std::vector<const char*>& paths, const uint8_t* oids,
                           const std::vector<int32_t>& entries, const char* differing,
                           size_t differing_len, std::string* out);

// Marks not valid (entries = -1, no id) every directory above each of `paths` (NUL-terminated,
// concatenated; "a/b/c" reaches "a/b/", "a/" and the root), as git does after an edit.
void invalidate_above(std::vector<CacheTreeDir>* dirs, const char* paths, size_t len);

// A sparse index's directories (gitformat-index, "Sparse Directory Entries"): each of
// `sparse` becomes a node of one entry with the id given and no subdirectories; what was below
// it goes, and every valid directory above counts one entry where it counted all of them. A
// sparse directory the list lacks is added (its parents are then not valid already).
struct SparseDir {
  std::string path;  // "a/b/"
  std::string oid;   // 20 bytes
};
void collapse_sparse(std::vector<CacheTreeDir>* dirs, const std::vector<SparseDir>& sparse);

}  // namespace pc
