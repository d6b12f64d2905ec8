// The entries of a git index file (gitformat-index, versions 2, 3 and 4), parsed into flat
// arrays with every length and offset checked against the file. The header, checksum and
// extensions are the caller's (TypeScript); this is the loop over 80,000 entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pc {

// The entries go straight into arrays the caller owns (JavaScript's, in the binding), one
// element per entry (stats: kStatWords), so nothing is copied twice.
struct IndexEntries {
  uint8_t* oids = nullptr;  // 20 bytes per entry
  uint32_t* modes = nullptr;
  uint32_t* stats = nullptr;  // kStatWords per entry, as stored
  uint8_t* stages = nullptr;
  uint16_t* ext_flags = nullptr;
  uint8_t* assume_valid = nullptr;
  uint32_t* offsets = nullptr;  // where each entry starts in the file
  uint32_t* starts = nullptr;   // count + 1: where each path starts in `paths`
  uint8_t* paths = nullptr;     // NUL-terminated, concatenated, at most paths_cap bytes
  size_t paths_cap = 0;
  size_t paths_len = 0;
  size_t end_of_entries = 0;  // where the extensions begin
  bool unmerged = false;
  // A rule broken that does not stop the walk (unsorted, bad mode, empty path): reported by the
  // caller after the extensions, so that a split or sparse index is named as such.
  std::string problem;
  long sparse_dir = -1;     // the first sparse directory entry (a sparse index), or -1
  uint32_t sparse_dirs = 0;  // how many there are
};

// A bound on the path bytes of a version 2/3 index (names are stored whole); version 4's shared
// prefixes can make them longer than that.
size_t index_path_bound(size_t end, uint32_t count);

// `data[0, end)` is the file without its checksum. Throws Error(CorruptIndex) when an entry
// runs past `end` or is malformed beyond walking on. Returns false when the paths did not fit
// in paths_cap (version 4 only): call again with more room.
bool parse_index_entries(const uint8_t* data, size_t end, uint32_t version, uint32_t count,
                         IndexEntries* out);

}  // namespace pc
