// The union of up to three sorted path lists (the index, HEAD's tree, the target tree) in
// index order: one row per path with its position in each list (-1 where absent). Consecutive
// index entries of one path (unmerged stages) collapse into one row. This is the planner's
// join (src/plan/rows.ts), done here because comparing 78,000 paths three ways through
// Buffer.compare cost the Linux tree's switch ~90 ms of calls into C++ one by one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pc {

// One list: `count` paths, path k = bytes [starts[k], starts[k + 1] - 1) of `paths` (each
// followed by its NUL). A list with count 0 may have null pointers.
struct PathList {
  const uint8_t* paths = nullptr;
  size_t paths_len = 0;
  const uint32_t* starts = nullptr;  // count + 1 offsets
  size_t count = 0;
  const uint8_t* oids = nullptr;     // count 20-byte ids
  const uint32_t* modes = nullptr;   // count modes
};

// Per row, which of its entries are the same (mode and id), so the planner need not compare
// 78,000 ids one Buffer.compare at a time (~45 ms of a switch of the Linux tree).
enum SameBits : uint8_t { kSameIM = 1, kSameIH = 2, kSameHM = 4 };

struct Rows {
  std::vector<int32_t> i, h, m;
  std::vector<uint8_t> unmerged;
  std::vector<uint8_t> same;  // SameBits; the index's first entry of the row is compared
};

// Checks a list's offsets against its buffer (increasing, each path NUL-terminated inside it).
bool valid_path_list(const PathList& list);

// `stages`: one per index entry (0 normal, 1-3 unmerged), may be null when index.count is 0.
// The lists must be valid (valid_path_list), carry their ids and modes, and be sorted; equal paths within the trees are not
// expected (trees hold each name once).
void join_rows(const PathList& index, const uint8_t* stages, const PathList& head,
               const PathList& target, Rows* out);

// The rows of a join, as the planner holds them (its arrays, `count` each).
struct RowsView {
  const int32_t* i = nullptr;
  const uint8_t* unmerged = nullptr;
  const uint8_t* same = nullptr;
  size_t count = 0;
};

// The rows a switch decides one by one, in order: every row but those whose index entry is
// merged, the same as HEAD's and the target's, and not racy (its mtime seconds, word 2 of its
// `stats`, below `racy_seconds`; 0: nothing is racy). Those are kept as they are, in bulk. An
// index position at or past `index_count` (the entries `stats` holds) is decided one by one.
std::vector<int32_t> rows_to_decide(const RowsView& rows, const uint32_t* stats,
                                    size_t index_count, uint32_t racy_seconds);

}  // namespace pc
