#include "index/cache_tree.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace pc {

namespace {

constexpr size_t kMaxDepth = 4096;  // as the tree walk
constexpr size_t kOid = 20;

// A decimal number (git's strtol: an optional '-') ending at `stop`.
bool read_number(const uint8_t* data, size_t size, size_t* pos, uint8_t stop, long* out) {
  size_t p = *pos;
  bool negative = p < size && data[p] == '-';
  if (negative) p++;
  long value = 0;
  size_t digits = 0;
  while (p < size && data[p] >= '0' && data[p] <= '9') {
    if (++digits > 10) return false;
    value = value * 10 + (data[p] - '0');
    p++;
  }
  if (digits == 0 || p >= size || data[p] != stop) return false;
  *out = negative ? -value : value;
  *pos = p + 1;
  return true;
}

// The component of `child` below `parent` (both with their final '/'), without the '/'.
std::string name_below(const std::string& parent, const std::string& child) {
  return child.substr(parent.size(), child.size() - parent.size() - 1);
}

}  // namespace

bool parse_cache_tree(const uint8_t* data, size_t size, std::vector<CacheTreeDir>* out) {
  out->clear();
  struct Open {
    std::string path;
    long left;
  };
  std::vector<Open> pending;  // directories whose subdirectories are still to come
  // One directory per line: room for them all at once (200,000 at a million files).
  size_t lines = 0;
  for (const uint8_t* p = data; (p = static_cast<const uint8_t*>(
                                     std::memchr(p, '\n', size - static_cast<size_t>(p - data)))) != nullptr;
       p++)
    lines++;
  out->reserve(lines);
  size_t pos = 0;
  do {
    const void* nul = pos < size ? std::memchr(data + pos, 0, size - pos) : nullptr;
    if (nul == nullptr) return false;
    size_t name_end = static_cast<size_t>(static_cast<const uint8_t*>(nul) - data);
    std::string name(reinterpret_cast<const char*>(data + pos), name_end - pos);
    pos = name_end + 1;
    long entries = 0, subtrees = 0;
    if (!read_number(data, size, &pos, ' ', &entries) ||
        !read_number(data, size, &pos, '\n', &subtrees) || entries < -1 ||
        entries > INT32_MAX || subtrees < 0)
      return false;
    Open* parent = pending.empty() ? nullptr : &pending.back();
    if (parent == nullptr ? !name.empty() || !out->empty()
                          : name.empty() || name.find('/') != std::string::npos)
      return false;
    CacheTreeDir dir;
    dir.path = parent == nullptr ? "" : parent->path + name + "/";
    dir.entries = static_cast<int32_t>(entries);
    if (entries >= 0) {
      if (size - pos < kOid) return false;
      dir.oid.assign(reinterpret_cast<const char*>(data + pos), kOid);
      pos += kOid;
    }
    if (parent != nullptr) parent->left--;
    std::string path = dir.path;
    out->push_back(std::move(dir));
    if (subtrees > 0) {
      if (pending.size() >= kMaxDepth) return false;
      // Each subdirectory takes at least 5 bytes ("x\0-1 0\n" is 7): a count beyond what is
      // left cannot be met.
      if (static_cast<size_t>(subtrees) > (size - pos) / 5 + 1) return false;
      pending.push_back({std::move(path), subtrees});
    }
    while (!pending.empty() && pending.back().left == 0) pending.pop_back();
  } while (!pending.empty());
  if (pos != size) return false;
  std::sort(out->begin(), out->end(),
            [](const CacheTreeDir& a, const CacheTreeDir& b) { return a.path < b.path; });
  for (size_t j = 1; j < out->size(); j++) {
    if ((*out)[j].path == (*out)[j - 1].path) return false;
  }
  return true;
}

std::string write_cache_tree(const std::vector<CacheTreeDir>& dirs) {
  std::string data;
  if (!dirs.empty()) {
    // Each directory's children: the directories it directly holds.
    std::vector<std::vector<size_t>> children(dirs.size());
    std::vector<size_t> open;
    for (size_t j = 0; j < dirs.size(); j++) {
      while (!open.empty() &&
             dirs[j].path.compare(0, dirs[open.back()].path.size(), dirs[open.back()].path) != 0)
        open.pop_back();
      if (!open.empty()) children[open.back()].push_back(j);
      open.push_back(j);
    }
    struct Item {
      size_t j;
      size_t parent;  // dirs.size() for the root
    };
    std::vector<Item> stack{{0, dirs.size()}};
    while (!stack.empty()) {
      Item it = stack.back();
      stack.pop_back();
      const CacheTreeDir& d = dirs[it.j];
      std::vector<size_t>& kids = children[it.j];
      std::sort(kids.begin(), kids.end(), [&](size_t a, size_t b) {
        size_t la = dirs[a].path.size(), lb = dirs[b].path.size();
        if (la != lb) return la < lb;  // the same parent: equal length names
        return dirs[a].path < dirs[b].path;
      });
      if (it.parent < dirs.size()) data += name_below(dirs[it.parent].path, d.path);
      data.push_back('\0');
      bool valid = d.entries >= 0 && d.oid.size() == kOid;
      data += std::to_string(valid ? d.entries : -1);
      data.push_back(' ');
      data += std::to_string(kids.size());
      data.push_back('\n');
      if (valid) data += d.oid;
      for (size_t k = kids.size(); k-- > 0;) stack.push_back({kids[k], it.j});
    }
  }
  std::string out = "TREE";
  uint32_t n = static_cast<uint32_t>(data.size());
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((n >> shift) & 0xff));
  out += data;
  return out;
}

namespace {

void append_number(std::string* out, long v) {
  char digits[24];
  size_t n = 0;
  bool negative = v < 0;
  unsigned long u = negative ? static_cast<unsigned long>(-(v + 1)) + 1 : static_cast<unsigned long>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative) out->push_back('-');
  while (n > 0) out->push_back(digits[--n]);
}

// memcmp order of two byte strings, a shorter one first on a tie.
int compare_bytes(const char* a, size_t la, const char* b, size_t lb) {
  int c = std::memcmp(a, b, std::min(la, lb));
  if (c != 0) return c;
  return la < lb ? -1 : (la > lb ? 1 : 0);
}

}  // namespace

bool write_walk_cache_tree(const std::vector<const char*>& paths, const uint8_t* oids,
                           const std::vector<int32_t>& entries, const char* differing,
                           size_t differing_len, std::string* out) {
  const size_t n = paths.size();
  out->assign("TREE");
  out->append(4, '\0');  // the size, once known
  if (n == 0) return true;
  if (entries.size() != n || n > UINT32_MAX) return false;
  std::vector<uint32_t> len(n);
  for (size_t j = 0; j < n; j++) len[j] = static_cast<uint32_t>(std::strlen(paths[j]));
  if (len[0] != 0) return false;
  // Each directory's parent (n for the root), checked: byte order, each one under the one
  // before it or under one of that one's ancestors, its name one component.
  std::vector<uint32_t> parent(n, static_cast<uint32_t>(n));
  std::vector<uint32_t> open{0};
  for (size_t j = 1; j < n; j++) {
    if (compare_bytes(paths[j - 1], len[j - 1], paths[j], len[j]) >= 0) return false;
    while (!open.empty() && (len[j] <= len[open.back()] ||
                             std::memcmp(paths[j], paths[open.back()], len[open.back()]) != 0))
      open.pop_back();
    if (open.empty()) return false;
    const uint32_t p = open.back();
    const char* name = paths[j] + len[p];
    const size_t name_len = len[j] - len[p];
    if (name_len < 2 || name[name_len - 1] != '/' || std::memchr(name, '/', name_len - 1) != nullptr)
      return false;
    parent[j] = p;
    open.push_back(static_cast<uint32_t>(j));
  }
  // Valid unless above a differing path: each of its directories, the deepest first, up to
  // one already marked (everything above that one is too).
  std::vector<uint8_t> valid(n);
  for (size_t j = 0; j < n; j++) valid[j] = entries[j] >= 0 ? 1 : 0;
  std::vector<uint8_t> marked(n, 0);
  auto find = [&](const char* key, size_t key_len) -> size_t {
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (compare_bytes(paths[mid], len[mid], key, key_len) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo < n && len[lo] == key_len && std::memcmp(paths[lo], key, key_len) == 0 ? lo : n;
  };
  for (size_t start = 0; start < differing_len;) {
    const char* p = differing + start;
    const size_t plen = strnlen(p, differing_len - start);
    start += plen + 1;
    for (size_t cut = plen; cut > 0;) {
      cut--;
      while (cut > 0 && p[cut] != '/') cut--;
      const size_t dir_len = p[cut] == '/' ? cut + 1 : 0;
      const size_t j = find(p, dir_len);
      if (j == n) continue;
      if (marked[j]) break;
      marked[j] = 1;
      valid[j] = 0;
    }
  }
  // Children in git's order (the same parent: shorter names first, then bytes), as spans of
  // one array.
  std::vector<uint32_t> first(n + 1, 0);
  for (size_t j = 1; j < n; j++) first[parent[j] + 1]++;
  for (size_t j = 0; j < n; j++) first[j + 1] += first[j];
  std::vector<uint32_t> kids(n > 0 ? n - 1 : 0);
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (size_t j = 1; j < n; j++) kids[fill[parent[j]]++] = static_cast<uint32_t>(j);
  }
  for (size_t j = 0; j < n; j++) {
    if (first[j + 1] - first[j] < 2) continue;
    std::sort(kids.begin() + first[j], kids.begin() + first[j + 1], [&](uint32_t a, uint32_t b) {
      if (len[a] != len[b]) return len[a] < len[b];
      return std::memcmp(paths[a], paths[b], len[a]) < 0;
    });
  }
  size_t bytes = 0;
  for (size_t j = 0; j < n; j++) bytes += len[j] + 24 + (valid[j] ? 20 : 0);
  out->reserve(8 + bytes);
  std::vector<uint32_t> stack{0};
  while (!stack.empty()) {
    const uint32_t j = stack.back();
    stack.pop_back();
    if (j != 0) out->append(paths[j] + len[parent[j]], len[j] - len[parent[j]] - 1);
    out->push_back('\0');
    append_number(out, valid[j] ? entries[j] : -1);
    out->push_back(' ');
    append_number(out, static_cast<long>(first[j + 1] - first[j]));
    out->push_back('\n');
    if (valid[j]) out->append(reinterpret_cast<const char*>(oids + 20 * static_cast<size_t>(j)), 20);
    for (uint32_t k = first[j + 1]; k-- > first[j];) stack.push_back(kids[k]);
  }
  const size_t data = out->size() - 8;
  if (data > UINT32_MAX) return false;
  for (int b = 0; b < 4; b++)
    (*out)[4 + b] = static_cast<char>((static_cast<uint32_t>(data) >> (24 - 8 * b)) & 0xff);
  return true;
}

void invalidate_above(std::vector<CacheTreeDir>* dirs, const char* paths, size_t len) {
  std::unordered_map<std::string, size_t> at;
  for (size_t j = 0; j < dirs->size(); j++) at.emplace((*dirs)[j].path, j);
  std::string dir;
  for (size_t start = 0; start < len;) {
    const char* p = paths + start;
    size_t n = strnlen(p, len - start);
    start += n + 1;
    // Each directory above the path, the deepest first: "a/b/", "a/", "".
    for (size_t cut = n; cut > 0;) {
      cut--;
      while (cut > 0 && p[cut] != '/') cut--;
      dir.assign(p, p[cut] == '/' ? cut + 1 : 0);
      auto found = at.find(dir);
      if (found != at.end()) {
        CacheTreeDir& d = (*dirs)[found->second];
        d.entries = -1;
        d.oid.clear();
      }
    }
  }
}

void collapse_sparse(std::vector<CacheTreeDir>* dirs, const std::vector<SparseDir>& sparse) {
  if (sparse.empty()) return;
  auto under = [](const std::string& path, const std::string& dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0;
  };
  std::vector<CacheTreeDir> out;
  out.reserve(dirs->size() + sparse.size());
  size_t k = 0;  // the next sparse directory, in byte order as the list
  for (size_t j = 0; j < dirs->size();) {
    CacheTreeDir& d = (*dirs)[j];
    while (k < sparse.size() && sparse[k].path < d.path) {
      // Not in the list: added where it sorts.
      out.push_back({sparse[k].path, 1, sparse[k].oid});
      k++;
    }
    if (k < sparse.size() && sparse[k].path == d.path) {
      long was = d.entries;
      for (CacheTreeDir& above : out) {
        if (above.entries >= 0 && was >= 1 && under(d.path, above.path))
          above.entries -= static_cast<int32_t>(was - 1);
      }
      out.push_back({d.path, 1, sparse[k].oid});
      const std::string& path = sparse[k].path;
      for (j++; j < dirs->size() && under((*dirs)[j].path, path); j++) {
      }
      while (k < sparse.size() && under(sparse[k].path, path)) k++;  // nested: not possible
      k++;
      continue;
    }
    out.push_back(std::move(d));
    j++;
  }
  for (; k < sparse.size(); k++) out.push_back({sparse[k].path, 1, sparse[k].oid});
  *dirs = std::move(out);
}

}  // namespace pc
