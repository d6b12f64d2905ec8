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
};

struct Rows {
  std::vector<int32_t> i, h, m;
  std::vector<uint8_t> unmerged;
};

// Checks a list's offsets against its buffer (increasing, each path NUL-terminated inside it).
bool valid_path_list(const PathList& list);

// `stages`: one per index entry (0 normal, 1-3 unmerged), may be null when index.count is 0.
// The lists must be valid (valid_path_list) and sorted; equal paths within the trees are not
// expected (trees hold each name once).
void join_rows(const PathList& index, const uint8_t* stages, const PathList& head,
               const PathList& target, Rows* out);

}  // namespace pc
