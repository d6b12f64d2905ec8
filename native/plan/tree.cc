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

void keep_walk(const char* paths, const uint32_t* modes, const char* oids, const uint32_t* starts,
               WalkDirs dirs, PathProtection protect, WalkMemo* memo) {
  memo->protect = protect;
  memo->paths = paths;
  memo->modes = modes;
  memo->oids = oids;
  memo->starts = starts;
  memo->dirs = std::move(dirs);
}

size_t find_dir(const WalkMemo& memo, std::string_view path) {
  size_t lo = 0, hi = memo.dirs.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (memo.dirs.path(mid) < path) lo = mid + 1;
    else hi = mid;
  }
  if (lo == memo.dirs.size() || memo.dirs.path(lo) != path) return SIZE_MAX;
  return lo;
}

namespace {
// One entry of a tree: "<octal mode> <name>\0<20-byte id>".
struct TreeEntry {
  uint32_t mode = 0;  // canonical
  const char* name = nullptr;
  size_t name_len = 0;
  const uint8_t* oid = nullptr;
  bool is_dir() const { return mode == 0040000; }
};

// One walk: the frames of the trees open, the path being built, and the flat list and the
// directories it fills. A directory a memo holds at the same path with the same id is copied
// instead of read.
class TreeWalk {
 public:
  TreeWalk(Odb& odb, PathProtection protect, FlatTree* out, WalkDirs* dirs,
           const std::vector<const WalkMemo*>& reuse)
      : odb_(odb), protect_(protect), out_(out), dirs_(dirs) {
    for (const WalkMemo* m : reuse) {
      if (m != nullptr && m->protect.ntfs == protect.ntfs && m->protect.hfs == protect.hfs)
        memos_.push_back(m);
    }
  }

  void run(const uint8_t* tree_oid) {
    dirs_->clear();
    reserve_like_memos();
    stack_.push_back(open_tree(odb_, tree_oid, 0));
    walking_.insert(key(tree_oid));
    dirs_->add("", tree_oid);
    root_hex_ = stack_.back().oid_hex;
    uint32_t steps = 0;
    while (!stack_.empty()) {
      if (++steps % kCancelEvery == 0) odb_.cancel().check("walking the tree");
      Frame& f = stack_.back();
      if (f.pos >= f.tree.bytes->size) {
        (*dirs_)[f.dir].entry_end = out_->count;
        (*dirs_)[f.dir].path_end = out_->paths.size();
        walking_.erase(f.oid);
        stack_.pop_back();
        continue;
      }
      TreeEntry e = next_entry(f);
      path_.resize(f.prefix_len);
      path_.append(e.name, e.name_len);
      check_entry(f, e);
      if (!e.is_dir()) {
        emit_file(f, e);
        continue;
      }
      (*dirs_)[f.dir].subtrees++;
      path_.push_back('/');
      if (!memos_.empty() && lend(e.oid)) continue;
      descend(f, e.oid);  // `f` may dangle after this
    }
    out_->starts.push_back(static_cast<uint32_t>(out_->paths.size()));
  }

 private:
  // Room for about as many entries as the lists lent from hold (a switch's target is mostly
  // its HEAD's tree): the flat list's arrays, tens of MB for a million files, grown by doubling,
  // were copied and faulted in again at every step.
  void reserve_like_memos() {
    size_t paths = 0, entries = 0, dirs = 0, dir_bytes = 0;
    for (const WalkMemo* m : memos_) {
      if (m->dirs.empty()) continue;
      paths = std::max(paths, m->dirs[0].path_end);
      entries = std::max(entries, m->dirs[0].entry_end);
      dirs = std::max(dirs, m->dirs.size());
      dir_bytes = std::max(dir_bytes, m->dirs.path_bytes());
    }
    if (entries == 0) return;
    out_->paths.reserve(paths + paths / 32);
    out_->oids.reserve(20 * (entries + entries / 32));
    out_->modes.reserve(entries + entries / 32);
    out_->starts.reserve(entries + entries / 32 + 1);
    dirs_->reserve(dirs + dirs / 32, dir_bytes + dir_bytes / 32);
  }

  static std::string key(const uint8_t* oid) {
    return std::string(reinterpret_cast<const char*>(oid), 20);
  }

  static Error bad(const Frame& f, const std::string& why) {
    return Error(Code::CorruptObject, "tree " + f.oid_hex + ": " + why);
  }

  // Parses the entry at f.pos, bounds-checked, and moves past it.
  static TreeEntry next_entry(Frame& f) {
    const uint8_t* data = f.tree.bytes->data.get();
    size_t size = f.tree.bytes->size;
    size_t p = f.pos;
    uint32_t mode = 0;
    size_t digits = 0;
    while (p < size && data[p] >= '0' && data[p] <= '7') {
      if (digits++ >= 7) throw bad(f, "mode too long");
      mode = mode * 8 + (data[p] - '0');
      p++;
    }
    if (digits == 0 || p >= size || data[p] != ' ') throw bad(f, "malformed entry mode");
    p++;
    const uint8_t* nul = static_cast<const uint8_t*>(std::memchr(data + p, 0, size - p));
    if (nul == nullptr) throw bad(f, "entry name is not terminated");
    TreeEntry e;
    e.name = reinterpret_cast<const char*>(data + p);
    e.name_len = static_cast<size_t>(nul - (data + p));
    p += e.name_len + 1;
    if (size - p < 20) throw bad(f, "entry id is truncated");
    e.oid = data + p;
    f.pos = p + 20;
    e.mode = canonical_mode(mode);
    if (e.mode == 0) throw bad(f, "entry has an unknown mode " + std::to_string(mode));
    return e;
  }

  // The entry's name (path_ holds its path) against the tree's rules: one component, no
  // duplicate (also a file and a directory of one name), sorted.
  void check_entry(Frame& f, const TreeEntry& e) {
    if (malformed_name(e.name, e.name_len))
      throw Error(Code::UnsafePath, path_ + " (in tree " + f.oid_hex + "): " +
                                        (e.name_len == 0 ? "an empty name" : "a '/' in a name"));
    if (f.has_last) {
      if (f.last_name.size() == e.name_len &&
          std::memcmp(f.last_name.data(), e.name, e.name_len) == 0)
        throw bad(f, "duplicate entry " + path_);
      if (tree_order(f.last_name, f.last_is_dir, e.name, e.name_len, e.is_dir()) >= 0)
        throw bad(f, "entries are not sorted at " + path_);
    }
    if (reopens_file(&f.open_files, e.name, e.name_len, e.is_dir()))
      throw bad(f, "duplicate entry " + path_ + " (a file and a directory)");
    if (!e.is_dir()) f.open_files.emplace_back(e.name, e.name_len);
    f.last_name.assign(e.name, e.name_len);
    f.last_is_dir = e.is_dir();
    f.has_last = true;
  }

  // The flat list must be in index order, which sorted trees give; a store that lies is
  // refused rather than guessed at. (The previous path emitted: last_at_, last_len_.)
  void sorts_after_last(const char* p, size_t n) const {
    if (!emitted_) return;
    const char* last = out_->paths.data() + last_at_;
    int c = std::memcmp(last, p, std::min(last_len_, n));
    if (c > 0 || (c == 0 && last_len_ >= n))
      throw Error(Code::CorruptObject, "tree " + root_hex_ + " lists " +
                                           std::string(last, last_len_) + " and " +
                                           std::string(p, n) + " out of order");
  }

  // The directory at path_ (with its final '/') with id `oid` in one of the memos.
  std::pair<const WalkMemo*, size_t> lender(const uint8_t* oid) const {
    for (const WalkMemo* m : memos_) {
      const size_t at = find_dir(*m, path_);
      if (at == SIZE_MAX) continue;
      const WalkDir& d = m->dirs[at];
      if (d.lendable && d.entry_end > d.entry_begin && std::memcmp(d.oid, oid, 20) == 0)
        return {m, at};
    }
    return {nullptr, 0};
  }

  // Copies the directory at path_ from a memo that holds it, if one does. Its entries were
  // checked under the same rules, at this very path: copied in index order after what came
  // before (its first path is checked against the previous one), with the directories it holds.
  bool lend(const uint8_t* oid) {
    auto [memo, at] = lender(oid);
    if (memo == nullptr) return false;
    const WalkDir& r = memo->dirs[at];
    const char* first = memo->paths + r.path_begin;
    sorts_after_last(first, std::strlen(first));
    // The last path copied: just before the final NUL of the range.
    size_t end = r.path_end - 1;
    size_t start = end;
    while (start > r.path_begin && memo->paths[start - 1] != '\0') start--;
    last_at_ = out_->paths.size() + (start - r.path_begin);
    last_len_ = end - start;
    emitted_ = true;
    const size_t entry_shift = out_->count - r.entry_begin;
    const size_t path_shift = out_->paths.size() - r.path_begin;
    for (size_t i = r.entry_begin; i < r.entry_end; i++)
      out_->starts.push_back(static_cast<uint32_t>(memo->starts[i] + path_shift));
    out_->paths.append(memo->paths + r.path_begin, r.path_end - r.path_begin);
    out_->modes.append(memo->modes + r.entry_begin, r.entry_end - r.entry_begin);
    out_->oids.append(memo->oids + r.entry_begin * 20, (r.entry_end - r.entry_begin) * 20);
    out_->count += r.entry_end - r.entry_begin;
    // The directory and those under it: they follow it in pre-order, their paths below its.
    const std::string_view top = memo->dirs.path(at);
    for (size_t k = at; k < memo->dirs.size(); k++) {
      const std::string_view path = memo->dirs.path(k);
      if (k > at && path.substr(0, top.size()) != top) break;
      const WalkDir& d = memo->dirs[k];
      WalkDir& copy = dirs_->add(path, d.oid, d);
      copy.entry_begin += entry_shift;
      copy.entry_end += entry_shift;
      copy.path_begin += path_shift;
      copy.path_end += path_shift;
      copy.lendable = true;
    }
    return true;
  }

  // Opens the subtree at path_ (with its final '/'). The ids of the trees being walked: a tree
  // listed inside itself (an id can only name such a tree if the store lies about its content)
  // would otherwise be walked until kMaxDepth, with every level's entries and ever longer paths
  // collected on the way there. `f` may dangle once this returns.
  void descend(const Frame& f, const uint8_t* oid) {
    if (stack_.size() >= kMaxDepth) throw bad(f, "trees nested too deeply");
    if (!walking_.insert(key(oid)).second) {
      std::string at = path_.substr(0, path_.size() - 1);
      throw bad(f, "tree " + to_hex(oid, 20) + " contains itself (at " + at + ")");
    }
    stack_.push_back(open_tree(odb_, oid, path_.size()));
    stack_.back().dir = dirs_->size();
    WalkDir& d = dirs_->add(path_, oid);
    d.entry_begin = out_->count;
    d.path_begin = out_->paths.size();
  }

  // git checks whole paths, with the entry's mode, when they enter the index: a directory
  // named ".git" that holds nothing is no entry and is not refused, as with git.
  void emit_file(const Frame& f, const TreeEntry& e) {
    PathRule rule = verify_path(path_.c_str(), path_.size(), e.mode, protect_);
    if (rule != PathRule::kOk)
      throw Error(Code::UnsafePath,
                  path_ + " (in tree " + f.oid_hex + "): " + path_rule_text(rule));
    sorts_after_last(path_.data(), path_.size());
    last_at_ = out_->paths.size();
    last_len_ = path_.size();
    emitted_ = true;
    out_->starts.push_back(static_cast<uint32_t>(out_->paths.size()));
    out_->paths.append(path_.data(), path_.size());
    out_->paths.push_back('\0');
    out_->modes.push_back(e.mode);
    out_->oids.append(reinterpret_cast<const char*>(e.oid), 20);
    out_->count++;
  }

  Odb& odb_;
  PathProtection protect_;
  FlatTree* out_;
  WalkDirs* dirs_;
  std::vector<const WalkMemo*> memos_;
  std::vector<Frame> stack_;
  std::string path_;
  std::unordered_set<std::string> walking_;
  std::string root_hex_;
  size_t last_at_ = 0, last_len_ = 0;
  bool emitted_ = false;
};
}  // namespace

void walk_tree(Odb& odb, const uint8_t* tree_oid, PathProtection protect, FlatTree* out,
               WalkDirs* dirs, const std::vector<const WalkMemo*>& reuse) {
  TreeWalk(odb, protect, out, dirs, reuse).run(tree_oid);
}

}  // namespace pc
