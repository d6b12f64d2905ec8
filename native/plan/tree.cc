#include "plan/tree.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace pc {

namespace {
constexpr size_t kMaxDepth = 4096;

struct Frame {
  Object tree;
  std::string oid;  // 20 bytes
  std::string oid_hex;
  size_t pos = 0;
  size_t prefix_len = 0;  // length of the path prefix (with its trailing '/') in `path`
  std::string last_name;
  bool last_is_dir = false;
  bool has_last = false;
  // Files and symlinks a later directory of the same name could still follow: tree order puts
  // "a" and the directory "a" apart when names like "a-b" or "a.c" sort between them.
  std::vector<std::string> open_files;
  size_t dir = 0;  // its position in the walk's directories
};

// git orders tree entries by name, comparing a directory as if its name ended in '/'.
int tree_order(const std::string& a, bool a_dir, const char* b, size_t b_len, bool b_dir) {
  size_t n = std::min(a.size(), b_len);
  int c = std::memcmp(a.data(), b, n);
  if (c != 0) return c;
  unsigned ca = a.size() > n ? static_cast<unsigned char>(a[n]) : (a_dir ? '/' : 0);
  unsigned cb = b_len > n ? static_cast<unsigned char>(b[n]) : (b_dir ? '/' : 0);
  return ca < cb ? -1 : (ca > cb ? 1 : 0);
}

// A name that is no single path component. (git would check out "a/b" as the path a/b; fsck
// calls it a full pathname in a tree, and it could alias another entry, so it is refused.)
bool malformed_name(const char* name, size_t len) {
  return len == 0 || std::memchr(name, '/', len) != nullptr;
}

// Whether a directory named `name` appears among the files still open, after dropping those
// the entry `name` (is_dir) has sorted past.
bool reopens_file(std::vector<std::string>* open, const char* name, size_t len, bool is_dir) {
  bool dup = false;
  auto gone = [&](const std::string& file) {
    if (is_dir && file.size() == len && std::memcmp(file.data(), name, len) == 0) dup = true;
    return tree_order(file, true, name, len, is_dir) < 0;
  };
  open->erase(std::remove_if(open->begin(), open->end(), gone), open->end());
  return dup;
}

// Returns 0 for modes that are neither file, symlink, directory nor gitlink.
uint32_t canonical_mode(uint32_t mode) {
  switch (mode & 0170000) {
    case 0100000: return (mode & 0100) ? 0100755 : 0100644;
    case 0120000: return 0120000;
    case 0040000: return 0040000;
    case 0160000: return 0160000;
    default: return 0;
  }
}

Frame open_tree(Odb& odb, const uint8_t* oid, size_t prefix_len) {
  Frame f;
  f.tree = odb.read(oid);
  f.oid.assign(reinterpret_cast<const char*>(oid), 20);
  f.oid_hex = to_hex(oid, 20);
  if (f.tree.type != kTree)
    throw Error(Code::CorruptObject, f.oid_hex + " is a " + type_name(f.tree.type) + ", not a tree");
  f.prefix_len = prefix_len;
  return f;
}
}  // namespace

void keep_walk(FlatTree tree, std::vector<WalkDir> dirs, PathProtection protect, WalkMemo* memo) {
  memo->protect = protect;
  memo->owned = std::move(tree);
  memo->paths = memo->owned.paths.data();
  memo->modes = memo->owned.modes.data();
  memo->oids = memo->owned.oids.data();
  memo->dirs = std::move(dirs);
  memo->lendable.clear();
  for (size_t j = 0; j < memo->dirs.size(); j++) memo->lendable.emplace(memo->dirs[j].path, j);
}

void walk_tree(Odb& odb, const uint8_t* tree_oid, PathProtection protect, FlatTree* out,
               std::vector<WalkDir>* dirs, const std::vector<const WalkMemo*>& reuse) {
  std::vector<const WalkMemo*> memos;
  for (const WalkMemo* m : reuse) {
    if (m != nullptr && m->protect.ntfs == protect.ntfs && m->protect.hfs == protect.hfs)
      memos.push_back(m);
  }
  dirs->clear();
  // The directory at `path` (with its final '/') with id `oid` in one of the memos.
  auto lender = [&](const std::string& path, const uint8_t* oid) -> std::pair<const WalkMemo*, size_t> {
    for (const WalkMemo* m : memos) {
      auto at = m->lendable.find(path);
      if (at == m->lendable.end()) continue;
      const WalkDir& d = m->dirs[at->second];
      if (d.entry_end > d.entry_begin && std::memcmp(d.oid.data(), oid, 20) == 0)
        return {m, at->second};
    }
    return {nullptr, 0};
  };
  std::vector<Frame> stack;
  std::string path;
  // The ids of the trees being walked: a tree listed inside itself (an id can only name such a
  // tree if the store lies about its content) would otherwise be walked until kMaxDepth, with
  // every level's entries and ever longer paths collected on the way there.
  std::unordered_set<std::string> walking;
  auto key = [](const uint8_t* oid) { return std::string(reinterpret_cast<const char*>(oid), 20); };
  stack.push_back(open_tree(odb, tree_oid, 0));
  walking.insert(key(tree_oid));
  dirs->push_back(WalkDir{"", key(tree_oid), 0, 0, 0, 0, 0});
  const std::string root_hex = stack.back().oid_hex;
  // The previous path emitted (offset and length in out->paths): the flat list must be in
  // index order, which sorted trees give; a store that lies is refused rather than guessed at.
  size_t last_at = 0, last_len = 0;
  bool emitted = false;
  auto sorts_after_last = [&](const char* p, size_t n) {
    if (!emitted) return;
    const char* last = out->paths.data() + last_at;
    int c = std::memcmp(last, p, std::min(last_len, n));
    if (c > 0 || (c == 0 && last_len >= n))
      throw Error(Code::CorruptObject, "tree " + root_hex + " lists " +
                                           std::string(last, last_len) + " and " +
                                           std::string(p, n) + " out of order");
  };
  uint32_t steps = 0;
  while (!stack.empty()) {
    if (++steps % kCancelEvery == 0) odb.cancel().check("walking the tree");
    Frame& f = stack.back();
    const uint8_t* data = f.tree.bytes->data.get();
    size_t size = f.tree.bytes->size;
    if (f.pos >= size) {
      (*dirs)[f.dir].entry_end = out->count;
      (*dirs)[f.dir].path_end = out->paths.size();
      walking.erase(f.oid);
      stack.pop_back();
      continue;
    }
    auto bad = [&](const std::string& why) {
      return Error(Code::CorruptObject, "tree " + f.oid_hex + ": " + why);
    };
    // "<octal mode> <name>\0<20-byte id>"
    size_t p = f.pos;
    uint32_t mode = 0;
    size_t digits = 0;
    while (p < size && data[p] >= '0' && data[p] <= '7') {
      if (digits++ >= 7) throw bad("mode too long");
      mode = mode * 8 + (data[p] - '0');
      p++;
    }
    if (digits == 0 || p >= size || data[p] != ' ') throw bad("malformed entry mode");
    p++;
    const uint8_t* nul = static_cast<const uint8_t*>(std::memchr(data + p, 0, size - p));
    if (nul == nullptr) throw bad("entry name is not terminated");
    const char* name = reinterpret_cast<const char*>(data + p);
    size_t name_len = static_cast<size_t>(nul - (data + p));
    p += name_len + 1;
    if (size - p < 20) throw bad("entry id is truncated");
    const uint8_t* oid = data + p;
    p += 20;
    f.pos = p;

    uint32_t canon = canonical_mode(mode);
    if (canon == 0) throw bad("entry has an unknown mode " + std::to_string(mode));
    bool is_dir = canon == 0040000;
    path.resize(f.prefix_len);
    path.append(name, name_len);
    if (malformed_name(name, name_len))
      throw Error(Code::UnsafePath, path + " (in tree " + f.oid_hex + "): " +
                                        (name_len == 0 ? "an empty name" : "a '/' in a name"));
    if (f.has_last) {
      if (f.last_name.size() == name_len && std::memcmp(f.last_name.data(), name, name_len) == 0)
        throw bad("duplicate entry " + path);
      if (tree_order(f.last_name, f.last_is_dir, name, name_len, is_dir) >= 0)
        throw bad("entries are not sorted at " + path);
    }
    if (reopens_file(&f.open_files, name, name_len, is_dir))
      throw bad("duplicate entry " + path + " (a file and a directory)");
    if (!is_dir) f.open_files.emplace_back(name, name_len);
    f.last_name.assign(name, name_len);
    f.last_is_dir = is_dir;
    f.has_last = true;

    if (is_dir) (*dirs)[f.dir].subtrees++;
    if (is_dir && !memos.empty()) {
      path.push_back('/');
      auto [memo, at] = lender(path, oid);
      if (memo != nullptr) {
        // Checked under the same rules, at this very path: copied, in index order after what
        // came before (its first path is checked against the previous one), with the
        // directories it holds.
        const WalkDir& r = memo->dirs[at];
        const char* first = memo->paths + r.path_begin;
        size_t first_len = std::strlen(first);
        sorts_after_last(first, first_len);
        // The last path copied: just before the final NUL of the range.
        size_t end = r.path_end - 1;
        size_t start = end;
        while (start > r.path_begin && memo->paths[start - 1] != '\0') start--;
        last_at = out->paths.size() + (start - r.path_begin);
        last_len = end - start;
        emitted = true;
        const size_t entry_shift = out->count - r.entry_begin;
        const size_t path_shift = out->paths.size() - r.path_begin;
        out->paths.append(memo->paths + r.path_begin, r.path_end - r.path_begin);
        out->modes.insert(out->modes.end(), memo->modes + r.entry_begin, memo->modes + r.entry_end);
        out->oids.append(memo->oids + r.entry_begin * 20, (r.entry_end - r.entry_begin) * 20);
        out->count += r.entry_end - r.entry_begin;
        // The directory and those under it: they follow it in pre-order, their paths below its.
        for (size_t k = at; k < memo->dirs.size(); k++) {
          const WalkDir& d = memo->dirs[k];
          if (k > at && d.path.compare(0, r.path.size(), r.path) != 0) break;
          dirs->push_back(WalkDir{d.path, d.oid, d.entry_begin + entry_shift,
                                  d.entry_end + entry_shift, d.path_begin + path_shift,
                                  d.path_end + path_shift, d.subtrees});
        }
        continue;
      }
      path.pop_back();
    }
    if (is_dir) {
      if (stack.size() >= kMaxDepth) throw bad("trees nested too deeply");
      if (!walking.insert(key(oid)).second)
        throw bad("tree " + to_hex(oid, 20) + " contains itself (at " + path + ")");
      path.push_back('/');
      // `f` may dangle after push_back; it is not used again in this iteration.
      stack.push_back(open_tree(odb, oid, path.size()));
      stack.back().dir = dirs->size();
      dirs->push_back(WalkDir{path, key(oid), out->count, 0, out->paths.size(), 0, 0});
      continue;
    }
    // git checks whole paths, with the entry's mode, when they enter the index: a directory
    // named ".git" that holds nothing is no entry and is not refused, as with git.
    PathRule rule = verify_path(path.c_str(), path.size(), canon, protect);
    if (rule != PathRule::kOk)
      throw Error(Code::UnsafePath, path + " (in tree " + f.oid_hex + "): " + path_rule_text(rule));
    sorts_after_last(path.data(), path.size());
    last_at = out->paths.size();
    last_len = path.size();
    emitted = true;
    out->paths.append(path);
    out->paths.push_back('\0');
    out->modes.push_back(canon);
    out->oids.append(reinterpret_cast<const char*>(oid), 20);
    out->count++;
  }
}

}  // namespace pc
