#include "index/index_lender.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace pc {

namespace {

constexpr uint16_t kIntentToAdd = 0x2000;

bool tree_mode(uint32_t mode) {
  return mode == 0100644 || mode == 0100755 || mode == 0120000 || mode == 0160000;
}

struct Paths {
  const PathList& list;
  const char* at(size_t i) const { return reinterpret_cast<const char*>(list.paths) + list.starts[i]; }
  size_t len(size_t i) const { return list.starts[i + 1] - list.starts[i] - 1; }
  bool starts_with(size_t i, std::string_view prefix) const {
    return len(i) >= prefix.size() && std::memcmp(at(i), prefix.data(), prefix.size()) == 0;
  }
  // The first entry whose path is not below `key` in memcmp order (shorter first on a tie).
  size_t lower_bound(const char* key, size_t key_len) const {
    size_t lo = 0, hi = list.count;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      size_t n = len(mid);
      int c = std::memcmp(at(mid), key, std::min(n, key_len));
      if (c < 0 || (c == 0 && n < key_len)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
};

// Whether some entry's path is also a directory of another entry ("a" and "a/b"). Sorted
// paths put every path that starts with "a/" after "a" with only paths starting with "a" in
// between, so the entry after "a" tells whether a search is needed at all.
bool file_is_directory(const Paths& p) {
  std::string key;
  for (size_t i = 0; i + 1 < p.list.count; i++) {
    size_t n = p.len(i);
    if (p.len(i + 1) <= n || std::memcmp(p.at(i + 1), p.at(i), n) != 0) continue;
    key.assign(p.at(i), n);
    key.push_back('/');
    size_t j = p.lower_bound(key.data(), key.size());
    if (j < p.list.count && p.len(j) >= key.size() && std::memcmp(p.at(j), key.data(), key.size()) == 0)
      return true;
  }
  return false;
}

}  // namespace

size_t lend_index(const PathList& index, const uint8_t* stages, const uint16_t* ext_flags,
                  std::vector<CacheTreeDir> dirs, PathProtection protect, WalkMemo* memo) {
  memo->protect = protect;
  memo->dirs.clear();
  const size_t n = index.count;
  if (n == 0 || dirs.empty() || !dirs[0].path.empty()) return 0;
  for (size_t j = 1; j < dirs.size(); j++) {
    const std::string& d = dirs[j].path;
    if (d.empty() || d.back() != '/' || d <= dirs[j - 1].path) return 0;
  }
  Paths p{index};
  if (file_is_directory(p)) return 0;
  // Entries a tree walk could not have produced, counted up to each position.
  std::vector<uint32_t> odd(n + 1, 0);
  for (size_t i = 0; i < n; i++) {
    bool bad = stages[i] != 0 || (ext_flags[i] & kIntentToAdd) != 0 || !tree_mode(index.modes[i]);
    odd[i + 1] = odd[i] + (bad ? 1 : 0);
  }
  // Each directory's run of entries, checked against its count; its parent in the list.
  std::vector<bool> ok(dirs.size(), false);
  std::vector<size_t> parent(dirs.size(), 0);
  std::vector<size_t> open;  // the directories enclosing the current one, outermost first
  // Each directory's path and id go into its WalkDir (read from there once copied), and the
  // parsed list is let go as it is read.
  size_t path_bytes = 0;
  for (const CacheTreeDir& d : dirs) path_bytes += d.path.size() + 1;
  memo->dirs.reserve(dirs.size(), path_bytes);
  for (size_t j = 0; j < dirs.size(); j++) {
    CacheTreeDir& d = dirs[j];
    const bool valid = d.entries > 0 && d.oid.size() == 20;
    WalkDir& w = memo->dirs.add(d.path, valid ? reinterpret_cast<const uint8_t*>(d.oid.data())
                                              : nullptr);
    std::string().swap(d.path);
    std::string().swap(d.oid);
    const std::string_view path = memo->dirs.path(j);
    while (!open.empty() &&
           path.substr(0, memo->dirs.path(open.back()).size()) != memo->dirs.path(open.back()))
      open.pop_back();
    if (j > 0) {
      if (open.empty()) return 0;  // not under the root: the list is not one tree
      parent[j] = open.back();
      memo->dirs[parent[j]].subtrees++;
    }
    open.push_back(j);
    if (!valid) continue;  // not valid, or empty: nothing to lend
    size_t begin = path.empty() ? 0 : p.lower_bound(path.data(), path.size());
    size_t count = static_cast<size_t>(d.entries);
    if (begin >= n || count > n - begin) continue;
    size_t end = begin + count;
    if (!p.starts_with(begin, path) || !p.starts_with(end - 1, path)) continue;
    if (end < n && p.starts_with(end, path)) continue;  // more entries under it than counted
    if (odd[end] != odd[begin]) continue;
    w.entry_begin = begin;
    w.entry_end = end;
    w.path_begin = index.starts[begin];
    w.path_end = index.starts[end];
    ok[j] = true;
  }
  // A directory is lent with everything under it: not when any directory under it is not.
  for (size_t j = dirs.size(); j-- > 1;) {
    if (!ok[j]) ok[parent[j]] = false;
  }
  size_t lent = 0;
  for (size_t j = 0; j < dirs.size(); j++) {
    memo->dirs[j].lendable = ok[j];
    if (ok[j]) lent++;
  }
  if (lent == 0) return 0;
  memo->paths = reinterpret_cast<const char*>(index.paths);
  memo->modes = index.modes;
  memo->oids = reinterpret_cast<const char*>(index.oids);
  memo->starts = index.starts;
  return lent;
}

}  // namespace pc
