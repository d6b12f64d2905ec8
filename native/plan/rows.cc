#include "plan/rows.h"

#include <algorithm>
#include <cstring>

#include "worktree/stat.h"

namespace pc {

namespace {

struct PathRef {
  const uint8_t* p;
  size_t n;
};

PathRef path_at(const PathList& l, size_t k) {
  return {l.paths + l.starts[k], static_cast<size_t>(l.starts[k + 1] - 1 - l.starts[k])};
}

// Sign of comparing two paths as bytes (git's index order: a prefix sorts first).
int compare(PathRef a, PathRef b) {
  int c = std::memcmp(a.p, b.p, std::min(a.n, b.n));
  if (c != 0) return c;
  return a.n < b.n ? -1 : a.n > b.n ? 1 : 0;
}

bool same_entry(const PathList& a, int32_t i, const PathList& b, int32_t j) {
  if (i < 0 || j < 0) return false;
  size_t x = static_cast<size_t>(i), y = static_cast<size_t>(j);
  return a.modes[x] == b.modes[y] && std::memcmp(a.oids + 20 * x, b.oids + 20 * y, 20) == 0;
}

}  // namespace

bool valid_path_list(const PathList& l) {
  if (l.count == 0) return true;
  if (l.paths == nullptr || l.starts == nullptr) return false;
  for (size_t k = 0; k < l.count; k++) {
    uint32_t from = l.starts[k], to = l.starts[k + 1];
    if (to <= from || to > l.paths_len || l.paths[to - 1] != 0) return false;
  }
  return true;
}

void join_rows(const PathList& index, const uint8_t* stages, const PathList& head,
               const PathList& target, Rows* out) {
  size_t a = 0, b = 0, c = 0;
  const size_t cap = index.count + head.count + target.count;
  out->i.resize(cap);
  out->h.resize(cap);
  out->m.resize(cap);
  out->unmerged.resize(cap);
  out->same.resize(cap);
  size_t n = 0;
  while (a < index.count || b < head.count || c < target.count) {
    // The smallest path among the three heads.
    bool have = false;
    PathRef least{nullptr, 0};
    if (a < index.count) least = path_at(index, a), have = true;
    if (b < head.count) {
      PathRef p = path_at(head, b);
      if (!have || compare(p, least) < 0) least = p, have = true;
    }
    if (c < target.count) {
      PathRef p = path_at(target, c);
      if (!have || compare(p, least) < 0) least = p;
    }
    int32_t ri = -1, rh = -1, rm = -1;
    uint8_t conflicted = 0;
    if (a < index.count && compare(path_at(index, a), least) == 0) {
      ri = static_cast<int32_t>(a);
      do {
        if (stages[a] != 0) conflicted = 1;
        a++;
      } while (a < index.count && compare(path_at(index, a), least) == 0);
    }
    if (b < head.count && compare(path_at(head, b), least) == 0) rh = static_cast<int32_t>(b++);
    if (c < target.count && compare(path_at(target, c), least) == 0)
      rm = static_cast<int32_t>(c++);
    out->i[n] = ri;
    out->h[n] = rh;
    out->m[n] = rm;
    out->unmerged[n] = conflicted;
    out->same[n] = static_cast<uint8_t>((same_entry(index, ri, target, rm) ? kSameIM : 0) |
                                        (same_entry(index, ri, head, rh) ? kSameIH : 0) |
                                        (same_entry(head, rh, target, rm) ? kSameHM : 0));
    n++;
  }
  out->i.resize(n);
  out->h.resize(n);
  out->m.resize(n);
  out->unmerged.resize(n);
  out->same.resize(n);
}

std::vector<int32_t> rows_to_decide(const RowsView& rows, const uint32_t* stats,
                                    size_t index_count, uint32_t racy_seconds) {
  constexpr uint8_t kAllSame = kSameIM | kSameIH | kSameHM;
  std::vector<int32_t> out;
  for (size_t r = 0; r < rows.count; r++) {
    int32_t i = rows.i[r];
    bool plain = i >= 0 && static_cast<size_t>(i) < index_count && rows.unmerged[r] == 0 &&
                 rows.same[r] == kAllSame &&
                 (racy_seconds == 0 || stats[static_cast<size_t>(i) * kStatWords + 2] < racy_seconds);
    if (!plain) out.push_back(static_cast<int32_t>(r));
  }
  return out;
}

}  // namespace pc
