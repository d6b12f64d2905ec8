#include "plan/gather.h"

#include <cstring>
#include <limits>

#include "worktree/stat.h"

namespace pc {

namespace {

// The end of the run starting at k: positions taking consecutive entries of one list.
size_t run_end(const GatherRequest& req, size_t k) {
  size_t end = k + 1;
  while (end < req.count && req.src[end] == req.src[k] &&
         static_cast<int64_t>(req.idx[end]) ==
             static_cast<int64_t>(req.idx[k]) + static_cast<int64_t>(end - k))
    end++;
  return end;
}

}  // namespace

bool gather_is_whole(const GatherRequest& req) {
  if (req.count == 0 || req.src[0] > 1) return false;
  const PathList* list = req.lists[req.src[0]];
  if (list == nullptr || list->count != req.count || req.idx[0] != 0) return false;
  return run_end(req, 0) == req.count;
}

bool gather_same_as(const GatherRequest& req, int which) {
  if (which < 0 || which > 1) return false;
  const PathList* want = req.lists[which];
  if (want == nullptr || want->count != req.count) return false;
  for (size_t k = 0; k < req.count; k++) {
    const int src = req.src[k];
    const int64_t i = req.idx[k];
    if (src == which && i == static_cast<int64_t>(k)) continue;
    if (src > 1 || req.lists[src] == nullptr || i < 0 ||
        i >= static_cast<int64_t>(req.lists[src]->count))
      return false;
    const PathList& from = *req.lists[src];
    const size_t at = static_cast<size_t>(i);
    const uint32_t len = from.starts[at + 1] - from.starts[at];
    if (len != want->starts[k + 1] - want->starts[k] || from.modes[at] != want->modes[k] ||
        std::memcmp(from.oids + 20 * at, want->oids + 20 * k, 20) != 0 ||
        std::memcmp(from.paths + from.starts[at], want->paths + want->starts[k], len) != 0)
      return false;
  }
  return true;
}

bool gather_path_bytes(const GatherRequest& req, size_t* bytes) {
  size_t total = 0;
  for (size_t k = 0; k < req.count;) {
    if (req.src[k] > 1) return false;
    const PathList* list = req.lists[req.src[k]];
    size_t end = run_end(req, k);
    int64_t first = req.idx[k];
    int64_t last = first + static_cast<int64_t>(end - k);  // one past the run's last entry
    if (list == nullptr || first < 0 || last > static_cast<int64_t>(list->count)) return false;
    total += list->starts[last] - list->starts[first];
    k = end;
  }
  if (total > std::numeric_limits<uint32_t>::max()) return false;  // starts are 32-bit
  *bytes = total;
  return true;
}

void gather_entries(const GatherRequest& req, uint8_t* paths, uint32_t* starts, uint8_t* oids,
                    uint32_t* modes) {
  uint32_t pos = 0;
  for (size_t k = 0; k < req.count;) {
    const PathList& list = *req.lists[req.src[k]];
    size_t end = run_end(req, k);
    size_t first = static_cast<size_t>(req.idx[k]);
    size_t n = end - k;
    uint32_t from = list.starts[first];
    for (size_t j = 0; j < n; j++) starts[k + j] = list.starts[first + j] - from + pos;
    uint32_t len = list.starts[first + n] - from;
    std::memcpy(paths + pos, list.paths + from, len);
    std::memcpy(oids + 20 * k, list.oids + 20 * first, 20 * n);
    std::memcpy(modes + k, list.modes + first, sizeof(uint32_t) * n);
    pos += len;
    k = end;
  }
  starts[req.count] = pos;
}

bool gather_stats(const StatGather& req, uint32_t* out) {
  for (size_t k = 0; k < req.count; k++) {
    uint32_t* to = out + k * kStatWords;
    if (req.src[k] != 0 || req.write[k] != 0) continue;  // none yet: `out` is zeroed
    const int32_t slot = req.fresh_slot[k];
    const int32_t i = req.idx[k];
    if (slot >= 0) {
      if (static_cast<size_t>(slot) >= req.fresh_count) return false;
      std::memcpy(to, req.fresh + static_cast<size_t>(slot) * kStatWords, kStatWords * sizeof(uint32_t));
      continue;
    }
    if (i < 0 || static_cast<size_t>(i) >= req.old_count) return false;
    std::memcpy(to, req.old + static_cast<size_t>(i) * kStatWords, kStatWords * sizeof(uint32_t));
    if (req.smudge[k] != 0) to[9] = 0;
  }
  return true;
}

}  // namespace pc
