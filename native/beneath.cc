#include "beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common.h"

namespace pc {

Fd open_root(const std::string& root) {
  Fd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) throw Error(Code::Io, "open " + root + ": " + std::strerror(errno));
  return fd;
}

int open_beneath(int rootfd, const char* rel, int flags, mode_t mode) {
  static std::atomic<bool> have_openat2{true};  // shared by worker threads; only flips off
  flags |= O_NOFOLLOW | O_CLOEXEC;
  if (have_openat2.load(std::memory_order_relaxed)) {
    struct open_how how;
    std::memset(&how, 0, sizeof how);
    how.flags = static_cast<uint64_t>(flags);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
    for (;;) {
      long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      if (errno == EINTR || errno == EAGAIN) continue;  // EAGAIN: a rename raced the lookup
      if (errno != ENOSYS && errno != EPERM) return -1;  // EPERM: a seccomp filter blocks it
      have_openat2.store(false);
      break;
    }
  }
  int fd;
  do fd = openat(rootfd, rel, flags, mode);
  while (fd < 0 && errno == EINTR);
  return fd;
}

int unlink_beneath(int rootfd, const char* rel) {
  const char* slash = std::strrchr(rel, '/');
  if (slash == nullptr) return unlinkat(rootfd, rel, 0) == 0 ? 0 : errno;
  std::string parent(rel, static_cast<size_t>(slash - rel));
  Fd dir(open_beneath(rootfd, parent.c_str(), O_PATH | O_DIRECTORY, 0));
  if (!dir.valid()) return errno == ENOTDIR || errno == ELOOP || errno == EXDEV ? ENOENT : errno;
  return unlinkat(dir.get(), slash + 1, 0) == 0 ? 0 : errno;
}

}  // namespace pc
