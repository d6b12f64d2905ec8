#include "worktree/stat.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "worktree/beneath.h"
#include "base/slices.h"

namespace pc {

void fill_stat(const struct stat& st, uint32_t* w) {
  w[0] = static_cast<uint32_t>(st.st_ctim.tv_sec);
  w[1] = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  w[2] = static_cast<uint32_t>(st.st_mtim.tv_sec);
  w[3] = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  w[4] = static_cast<uint32_t>(st.st_dev);
  w[5] = static_cast<uint32_t>(st.st_ino);
  w[6] = static_cast<uint32_t>(st.st_mode);
  w[7] = static_cast<uint32_t>(st.st_uid);
  w[8] = static_cast<uint32_t>(st.st_gid);
  w[9] = static_cast<uint32_t>(st.st_size);
}

namespace {

// Remembers the deepest directory known to be a chain of real directories, with the lstat of
// each of its components, so paths sorted in index order check each leading directory about
// once, and a directory asked for itself (a switch looks at the directories of new paths, the
// deepest first) is answered from what was seen on the way down.
class LeadingDirs {
 public:
  explicit LeadingDirs(int rootfd) : rootfd_(rootfd) {}

  // True when every leading component of rel is a real directory.
  bool ok(const char* rel) {
    const char* slash = std::strrchr(rel, '/');
    if (slash == nullptr) return true;
    size_t len = static_cast<size_t>(slash - rel);
    // The longest directory prefix shared by rel's parent and the verified directory.
    size_t common = 0;
    while (common < len && common < good_.size() && good_[common] == rel[common]) common++;
    size_t keep;
    if ((common == good_.size() || good_[common] == '/') && (common == len || rel[common] == '/')) {
      keep = common;
    } else {
      size_t cut = good_.rfind('/', common == 0 ? 0 : common - 1);
      keep = cut == std::string::npos ? 0 : cut;
    }
    if (keep == len) return true;  // the parent or a descendant of it is verified
    good_.resize(keep);
    while (!levels_.empty() && levels_.back().end > keep) levels_.pop_back();
    for (size_t end = keep == 0 ? 0 : keep + 1; end <= len; end++) {
      if (end < len && rel[end] != '/') continue;
      std::string part(rel, end);
      struct stat st;
      if (fstatat(rootfd_, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
        return false;
      good_ = std::move(part);
      levels_.push_back({end, st});
    }
    return true;
  }

  // rel, just found a real directory by its own lstat (ok(rel) true), extends the verified
  // chain when its parent ends it, as if ok() had seen it.
  void adopt(const char* rel, const struct stat& st) {
    const char* slash = std::strrchr(rel, '/');
    size_t parent = slash == nullptr ? 0 : static_cast<size_t>(slash - rel);
    if (parent != good_.size() || std::memcmp(good_.data(), rel, parent) != 0) return;
    good_.assign(rel);
    levels_.push_back({good_.size(), st});
  }

  // The lstat of rel when it is one of the verified directories (ok() has seen it on the way
  // to a deeper path): copied into *st.
  bool seen(const char* rel, struct stat* st) const {
    size_t len = std::strlen(rel);
    if (len == 0 || len > good_.size() || (len < good_.size() && good_[len] != '/') ||
        std::memcmp(good_.data(), rel, len) != 0)
      return false;
    for (const Level& l : levels_) {
      if (l.end != len) continue;
      *st = l.st;
      return true;
    }
    return false;
  }

 private:
  struct Level {
    size_t end;  // the component's end in good_
    struct stat st;
  };
  int rootfd_;
  std::string good_;
  std::vector<Level> levels_;  // good_'s components, outermost first
};

}  // namespace

namespace {

Verdict judge(const Expect& e, size_t i, const struct stat& st) {
  const uint32_t want = e.modes[i];
  const uint32_t* old = e.stats + i * kStatWords;
  const uint32_t type = want & S_IFMT;
  if (type == 0160000) return S_ISDIR(st.st_mode) ? kClean : kDirty;  // a gitlink's directory
  // Without core.symlinks git writes a link as a plain file, and takes one for the link.
  bool same_type = type == S_IFLNK ? S_ISLNK(st.st_mode) || (!e.symlinks && S_ISREG(st.st_mode))
                                   : S_ISREG(st.st_mode);
  if (!same_type) return kDirty;
  if (e.file_mode && type == S_IFREG && ((st.st_mode & 0100) != 0) != ((want & 0100) != 0))
    return kDirty;
  uint32_t now[kStatWords];
  fill_stat(st, now);
  bool racy = e.racy_seconds != 0 && old[2] >= e.racy_seconds;
  bool same = now[0] == old[0] && now[1] == old[1] && now[2] == old[2] && now[3] == old[3] &&
              now[5] == old[5] && now[7] == old[7] && now[8] == old[8] && now[9] == old[9];
  if (same && !racy) return kClean;
  // A changed size is a modification, unless the index holds no size (a smudged racy entry).
  if (old[9] != now[9] && old[9] != 0) return kDirty;
  if (e.stat_change_is_dirty && (now[0] != old[0] || now[2] != old[2] || now[5] != old[5] ||
                                 now[7] != old[7] || now[8] != old[8] || now[9] != old[9]))
    return kDirty;
  return kHash;
}

// Paths order[from..to) (or from..to themselves without an order).
void stat_range(int rootfd, const StatRequest& req, const std::vector<uint32_t>& order,
                size_t from, size_t to, StatResult* result) {
  LeadingDirs dirs(rootfd);
  for (size_t k = from; k < to; k++) {
    const size_t i = order.empty() ? k : order[k];
    const char* rel = req.paths[i];
    uint32_t* words = &result->stats[i * kStatWords];
    if (!dirs.ok(rel)) {
      result->status[i] = kAbsent;
      continue;
    }
    struct stat st;
    if (dirs.seen(rel, &st) || fstatat(rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISDIR(st.st_mode)) dirs.adopt(rel, st);
      fill_stat(st, words);
      if (req.expect.compare != nullptr && req.expect.compare[i] == 1)
        result->verdict[i] = judge(req.expect, i, st);
    } else if (errno == ENOENT || errno == ENOTDIR) {
      result->status[i] = kAbsent;
    } else {
      result->status[i] = kStatFailed;
      words[6] = static_cast<uint32_t>(errno);
    }
  }
}

}  // namespace

void stat_files(const StatRequest& req, StatResult* result) {
  size_t n = req.paths.size();
  static_assert(kPresent == 0 && kNoVerdict == 0, "a zeroed result starts present, unjudged");
  Fd root = open_root(req.root);
  // One lstat costs a few microseconds, most of it in the kernel: threads (as git's
  // preload-index uses) pay off from a few thousand paths. Each writes its own slice.
  size_t threads =
      std::min<size_t>(std::max<size_t>(req.threads, 1), n / std::max<size_t>(req.per_thread, 1) + 1);
  // Unsorted paths (a switch asks for the files that change, then the directories of new
  // paths, deepest first) are taken in byte order: each slice then shares its leading
  // directories with the paths next to it, and a directory asked for is one seen on the way.
  auto before = [](const char* a, const char* b) { return std::strcmp(a, b) < 0; };
  std::vector<uint32_t> order;
  if (!std::is_sorted(req.paths.begin(), req.paths.end(), before)) {
    order.resize(n);
    std::iota(order.begin(), order.end(), uint32_t{0});
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return before(req.paths[a], req.paths[b]); });
  }
  run_in_slices(n, threads, [&](size_t from, size_t to) {
    stat_range(root.get(), req, order, from, to, result);
  });
}

}  // namespace pc
