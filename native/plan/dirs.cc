#include "plan/dirs.h"

#include <string_view>
#include <unordered_set>

namespace pc {

namespace {

std::string_view path_at(const PathList& list, size_t k) {
  const char* p = reinterpret_cast<const char*>(list.paths) + list.starts[k];
  return std::string_view(p, list.starts[k + 1] - 1 - list.starts[k]);
}

// The directory holding `path` (empty at the top).
std::string_view parent_of(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return {};
  return path.substr(0, slash);
}

// Appends every directory of `dir` longer than `from` bytes (from: 0 or the length of an
// ancestor already written), shortest first; each is also put in `seen` where one is given.
void append_below(std::string& out, std::string_view dir, size_t from,
                  std::unordered_set<std::string_view>* seen = nullptr) {
  for (size_t end = from == 0 ? 0 : from + 1; end <= dir.size(); end++) {
    if (end < dir.size() && dir[end] != '/') continue;
    if (end == 0) continue;
    out.append(dir.data(), end);
    out.push_back('\0');
    if (seen != nullptr) seen->insert(dir.substr(0, end));
  }
}

// The length of the longest directory that is `a` or above it and also `b` or above it (0: none).
size_t common_dir(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  size_t i = 0;
  while (i < n && a[i] == b[i]) i++;
  // A whole component is shared where both end there or go on with a '/'.
  auto boundary = [](std::string_view s, size_t at) { return at == s.size() || s[at] == '/'; };
  if (boundary(a, i) && boundary(b, i)) return i;
  while (i > 0 && a[i - 1] != '/') i--;
  return i == 0 ? 0 : i - 1;
}

// Any order: a set of those seen.
std::string dirs_any_order(const PathList& list, const uint8_t* select) {
  std::string out;
  std::unordered_set<std::string_view> seen;
  std::string_view last;
  bool have_last = false;
  for (size_t k = 0; k < list.count; k++) {
    if (select != nullptr && select[k] == 0) continue;
    std::string_view dir = parent_of(path_at(list, k));
    if (dir.empty()) continue;
    if (have_last && dir == last) continue;  // the entries of a directory follow one another
    last = dir;
    have_last = true;
    // Its ancestors first: find the deepest one already seen, then add the rest downwards.
    size_t from = dir.size();
    while (!seen.count(dir.substr(0, from))) {
      size_t up = dir.rfind('/', from - 1);
      if (up == std::string_view::npos) {
        from = 0;
        break;
      }
      from = up;
    }
    append_below(out, dir, from, &seen);
  }
  return out;
}

}  // namespace

std::string dirs_of(const PathList& list, const uint8_t* select) {
  // Sorted by bytes (as an index and a tree walk are), the paths below a directory follow one
  // another: a directory is new exactly where it is not the previous entry's directory or
  // above it. No set, and a million paths in a few ms; out of order, the set's way.
  std::string out;
  std::string_view prev_path;
  std::string_view prev_dir;
  bool any = false;
  for (size_t k = 0; k < list.count; k++) {
    if (select != nullptr && select[k] == 0) continue;
    std::string_view path = path_at(list, k);
    if (any && path < prev_path) return dirs_any_order(list, select);
    prev_path = path;
    any = true;
    std::string_view dir = parent_of(path);
    if (dir.empty() || dir == prev_dir) continue;
    size_t from = prev_dir.empty() ? 0 : common_dir(dir, prev_dir);
    if (from < dir.size()) append_below(out, dir, from);
    prev_dir = dir;
  }
  return out;
}

}  // namespace pc
