// The planner's result list gathered from the two lists it takes entries from (the index and
// the target tree): entry k is entry idx[k] of list src[k]. This is byte work the planner did
// in JavaScript, a loop per entry that a one-shot process runs in V8's interpreter (~10 ms for
// the Linux tree's 78,000 entries); here a run of consecutive entries of one list is one copy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plan/rows.h"

namespace pc {

struct GatherRequest {
  const PathList* lists[2] = {nullptr, nullptr};  // src 0 and src 1
  const uint8_t* src = nullptr;
  const int32_t* idx = nullptr;
  size_t count = 0;
};

// Whether the result is exactly one of the lists, whole and in order (the caller then keeps
// that list): count > 0, every src the same, idx[k] == k, count == that list's count.
bool gather_is_whole(const GatherRequest& req);

// Whether the result holds, entry for entry, what list `which` (0 or 1) holds: the same count,
// and at each position the same path, mode and id, from whichever list it is taken. A switch
// keeps most entries from the index where they are the target's too: the result is then the
// target, and need not be copied (88 MB for a million files). False when an idx is outside its
// list.
bool gather_same_as(const GatherRequest& req, int which);

// Bytes of the result's paths (NULs included); false when a src is not 0 or 1, or an idx is
// outside its list.
bool gather_path_bytes(const GatherRequest& req, size_t* bytes);

// Fills the result: paths (gather_path_bytes of them), starts (count + 1), oids (20 * count),
// modes (count). The request must have passed gather_path_bytes.
void gather_entries(const GatherRequest& req, uint8_t* paths, uint32_t* starts, uint8_t* oids,
                    uint32_t* modes);

// The stat data of the same result (10 words an entry): none (zero) for an entry taken from
// the target or written; the probe's fresh words where fresh_slot[k] >= 0; else the old
// index's words of entry idx[k], the size zeroed where smudge[k] (git's racily clean entry).
struct StatGather {
  const uint8_t* src = nullptr;
  const int32_t* idx = nullptr;
  const uint8_t* write = nullptr;
  const int32_t* fresh_slot = nullptr;
  const uint8_t* smudge = nullptr;
  size_t count = 0;
  const uint32_t* old = nullptr;  // old_count entries
  size_t old_count = 0;
  const uint32_t* fresh = nullptr;  // fresh_count entries
  size_t fresh_count = 0;
};

// Into `out`, zeroed by the caller (written and new entries are left as zeros). False (out
// untouched past the entry) when a position names an entry outside its array.
bool gather_stats(const StatGather& req, uint32_t* out);

}  // namespace pc
