// The planner's result list gathered from the two lists it takes entries from (the index and
// the target tree): entry k is entry idx[k] of list src[k]. This is byte work the planner did
// in JavaScript, a loop per entry that a one-shot process runs in V8's interpreter (~10 ms for
// the Linux tree's 78,000 entries); here a run of consecutive entries of one list is one copy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rows.h"

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

// Bytes of the result's paths (NULs included); false when a src is not 0 or 1, or an idx is
// outside its list.
bool gather_path_bytes(const GatherRequest& req, size_t* bytes);

// Fills the result: paths (gather_path_bytes of them), starts (count + 1), oids (20 * count),
// modes (count). The request must have passed gather_path_bytes.
void gather_entries(const GatherRequest& req, uint8_t* paths, uint32_t* starts, uint8_t* oids,
                    uint32_t* modes);

}  // namespace pc
