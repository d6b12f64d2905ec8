#include "worktree/worktree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include "worktree/beneath.h"
#include "base/common.h"

namespace pc {

namespace {

// rm -rf of `name` in directory `dirfd`, never through a link. Returns 0 or an errno.
int remove_at(int dirfd, const char* name) {
  if (unlinkat(dirfd, name, 0) == 0) return 0;
  if (errno == ENOENT) return 0;
  if (errno != EISDIR && errno != EPERM) return errno;  // EPERM: Linux's answer for a directory
  Fd dir(openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir.valid()) return errno == ENOENT ? 0 : errno;
  DIR* d = fdopendir(dir.get());
  if (d == nullptr) return errno;
  int fd = dir.release();  // owned by d now
  int err = 0;
  while (struct dirent* ent = readdir(d)) {
    if (std::strcmp(ent->d_name, ".") == 0 || std::strcmp(ent->d_name, "..") == 0) continue;
    err = remove_at(fd, ent->d_name);
    if (err != 0) break;
  }
  closedir(d);
  if (err != 0) return err;
  if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) return errno;
  return 0;
}

}  // namespace

Worktree::Worktree(const std::string& root) : root_(open_root(root)) {}

int Worktree::parent(const char* rel, Fd* holder, std::string* name) const {
  const char* slash = std::strrchr(rel, '/');
  if (slash == nullptr) {
    *name = rel;
    return root_.get();
  }
  *name = slash + 1;
  std::string dir(rel, static_cast<size_t>(slash - rel));
  *holder = Fd(open_beneath(root_.get(), dir.c_str(), O_PATH | O_DIRECTORY, 0));
  if (!holder->valid() && errno == EXDEV) errno = ELOOP;  // left the root: through a link
  return holder->valid() ? holder->get() : -1;
}

int Worktree::mkdir(const char* rel, mode_t mode) const {
  Fd holder;
  std::string name;
  int at = parent(rel, &holder, &name);
  if (at < 0) return errno;
  return mkdirat(at, name.c_str(), mode) == 0 ? 0 : errno;
}

int Worktree::ensure_dir(const char* rel, mode_t mode) const {
  Fd holder;
  std::string name;
  int at = parent(rel, &holder, &name);
  if (at < 0) return errno;
  if (mkdirat(at, name.c_str(), mode) == 0) return 0;
  if (errno != EEXIST) return errno;
  struct stat st;
  return fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) ? 0
                                                                                         : EEXIST;
}

int Worktree::unlink(const char* rel) const {
  Fd holder;
  std::string name;
  int at = parent(rel, &holder, &name);
  if (at < 0) return errno;
  return unlinkat(at, name.c_str(), 0) == 0 ? 0 : errno;
}

int Worktree::rmdir(const char* rel) const {
  Fd holder;
  std::string name;
  int at = parent(rel, &holder, &name);
  if (at < 0) return errno;
  return unlinkat(at, name.c_str(), AT_REMOVEDIR) == 0 ? 0 : errno;
}

int Worktree::remove_tree(const char* rel) const {
  Fd holder;
  std::string name;
  int at = parent(rel, &holder, &name);
  if (at < 0) return errno == ENOENT ? 0 : errno;
  return remove_at(at, name.c_str());
}

int Worktree::symlink(const char* target, const char* rel) const {
  Fd holder;
  std::string name;
  int at = parent(rel, &holder, &name);
  if (at < 0) return errno;
  return symlinkat(target, at, name.c_str()) == 0 ? 0 : errno;
}

int Worktree::lstat(const char* rel, struct stat* st) const {
  Fd holder;
  std::string name;
  int at = parent(rel, &holder, &name);
  if (at < 0) return errno;
  return fstatat(at, name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

int Worktree::readlink(const char* rel, std::string* target) const {
  Fd holder;
  std::string name;
  int at = parent(rel, &holder, &name);
  if (at < 0) return errno;
  std::string buf(256, '\0');
  for (;;) {
    ssize_t n = readlinkat(at, name.c_str(), &buf[0], buf.size());
    if (n < 0) return errno;
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(static_cast<size_t>(n));
      *target = std::move(buf);
      return 0;
    }
    buf.resize(buf.size() * 2);
  }
}

int Worktree::list(const char* rel, std::vector<DirEntry>* out) const {
  Fd dir(rel[0] == '\0' ? openat(root_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                        : open_beneath(root_.get(), rel, O_RDONLY | O_DIRECTORY, 0));
  if (!dir.valid()) return errno;
  DIR* d = fdopendir(dir.get());
  if (d == nullptr) return errno;
  int fd = dir.release();  // owned by d now
  while (struct dirent* ent = readdir(d)) {
    if (std::strcmp(ent->d_name, ".") == 0 || std::strcmp(ent->d_name, "..") == 0) continue;
    bool is_dir = ent->d_type == DT_DIR;
    if (ent->d_type == DT_UNKNOWN) {
      struct stat st;
      is_dir = fstatat(fd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    out->push_back(DirEntry{ent->d_name, is_dir});
  }
  closedir(d);
  return 0;
}

int Worktree::open(const char* rel, int flags, mode_t mode) const {
  int fd = open_beneath(root_.get(), rel, flags, mode);
  return fd >= 0 ? fd : -errno;
}

namespace {

// op(i) for every i < n on up to `threads` threads; thread t takes every threads-th index from
// t, so callers order the paths to keep neighbours in different directories.
template <typename Op>
void spread(size_t n, size_t threads, const Op& op) {
  auto run = [&](size_t first, size_t step) {
    for (size_t i = first; i < n; i += step) op(i);
  };
  threads = std::max<size_t>(1, std::min(threads, n));
  std::vector<std::thread> pool;
  try {
    for (size_t t = 1; t < threads; t++) pool.emplace_back(run, t, threads);
  } catch (const std::system_error&) {
    // No more threads: the started ones keep their share, this one does the rest.
    for (size_t t = pool.size() + 1; t < threads; t++) run(t, threads);
  }
  run(0, threads);
  for (std::thread& th : pool) th.join();
}

}  // namespace

void mkdir_many(const Worktree& wt, const std::vector<const char*>& paths, size_t threads,
                std::vector<int32_t>* errors) {
  errors->assign(paths.size(), 0);
  spread(paths.size(), threads, [&](size_t i) { (*errors)[i] = wt.mkdir(paths[i], 0777); });
}

void unlink_many(const Worktree& wt, const std::vector<const char*>& paths, size_t threads,
                 std::vector<int32_t>* errors) {
  errors->assign(paths.size(), 0);
  spread(paths.size(), threads, [&](size_t i) { (*errors)[i] = wt.unlink(paths[i]); });
}

}  // namespace pc
