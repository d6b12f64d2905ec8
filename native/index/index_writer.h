// Serializes index entries (gitformat-index versions 2, 3 and 4) with their stat data: the loop
// over 80,000 entries that cost a switch of the Linux tree ~50 ms in JavaScript (a call per
// field). The checks of versions and flags, and the checksum, are the caller's (TypeScript).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/rows.h"

namespace pc {

struct IndexWrite {
  PathList entries;            // paths, starts, ids and modes (the tree's modes, as git records)
  const uint32_t* stats;       // kStatWords per entry
  const uint16_t* ext_flags;   // per entry, or null: none
  uint32_t version;            // 2, 3 or 4 (3 or 4 when an entry has extended flags)
  std::vector<std::string_view> extensions;  // each whole: signature, size, data
  // The entries [from, to) only, for a file written in parts: the header comes with the part
  // that starts at 0, the extensions and the checksum's room with the one that ends at the
  // last entry (a version 4 part strips its first path against entry from - 1).
  size_t from = 0;
  size_t to = SIZE_MAX;  // capped at the entry count
};

// The bytes of the file up to its checksum, and 20 bytes of room for it (zeros) at the end; or
// those of the part [from, to) (see IndexWrite).
std::string serialize_index(const IndexWrite& in);

// The same bytes appended to `out` (a buffer reused part after part keeps its room).
void append_index(const IndexWrite& in, std::string* out);

}  // namespace pc
