// The entries of a git index file (gitformat-index, versions 2, 3 and 4), parsed into flat
// arrays with every length and offset checked against the file. The header, checksum and
// extensions are the caller's (TypeScript); this is the loop over 80,000 entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pc {

struct IndexEntries {
  std::vector<uint8_t> paths;  // NUL-terminated, concatenated
  std::vector<uint8_t> oids;   // 20 bytes per entry
  std::vector<uint32_t> modes;
  std::vector<uint32_t> stats;  // kStatWords per entry, as stored
  std::vector<uint8_t> stages;
  std::vector<uint16_t> ext_flags;
  std::vector<uint8_t> assume_valid;
  std::vector<uint32_t> offsets;  // where each entry starts in the file
  size_t end_of_entries = 0;      // where the extensions begin
  bool unmerged = false;
  // A rule broken that does not stop the walk (unsorted, bad mode, empty path): reported by the
  // caller after the extensions, so that a split or sparse index is named as such.
  std::string problem;
  long sparse_dir = -1;  // the first directory entry (a sparse index), or -1
};

// `data[0, end)` is the file without its checksum. Throws Error(CorruptIndex) when an entry
// runs past `end` or is malformed beyond walking on.
void parse_index_entries(const uint8_t* data, size_t end, uint32_t version, uint32_t count,
                         IndexEntries* out);

}  // namespace pc
