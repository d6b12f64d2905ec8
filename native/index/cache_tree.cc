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
