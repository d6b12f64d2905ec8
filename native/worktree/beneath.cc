#include "worktree/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "base/common.h"

namespace pc {

namespace {

long openat2_call(int dirfd, const char* rel, int flags, mode_t mode) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<uint64_t>(flags);
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
  return syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
}

// Once per process: whether openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH works here
// (Linux 5.6+, and no seccomp filter refusing it). PCHECKOUT_NO_OPENAT2=1 pretends it does not,
// so the fallback can be tested on any kernel.
bool probe_openat2() {
  const char* off = std::getenv("PCHECKOUT_NO_OPENAT2");
  if (off != nullptr && off[0] != '\0' && std::strcmp(off, "0") != 0) return false;
  int root = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return false;
  long fd;
  do fd = openat2_call(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  ::close(root);
  if (fd < 0) return false;
  ::close(static_cast<int>(fd));
  return true;
}

int openat_retry(int dirfd, const char* name, int flags, mode_t mode) {
  int fd;
  do fd = openat(dirfd, name, flags, mode);
  while (fd < 0 && errno == EINTR);
  return fd;
}

// Without openat2: one component at a time, each leading one opened as a directory without
// following a link (O_NOFOLLOW|O_DIRECTORY, checked with fstat), the last with O_NOFOLLOW.
// "." and ".." and empty components are refused: nothing may climb out of the root.
int open_by_components(int rootfd, const char* rel, int flags, mode_t mode) {
  Fd dir;
  int at = rootfd;
  const char* p = rel;
  for (;;) {
    const char* slash = std::strchr(p, '/');
    size_t len = slash == nullptr ? std::strlen(p) : static_cast<size_t>(slash - p);
    if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
      errno = EXDEV;  // what RESOLVE_BENEATH reports for an escape
      return -1;
    }
    std::string name(p, len);
    if (slash == nullptr) return openat_retry(at, name.c_str(), flags, mode);
    Fd next(openat_retry(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0));
    if (!next.valid()) return -1;
    struct stat st;
    if (fstat(next.get(), &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
      errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
      return -1;
    }
    dir = std::move(next);
    at = dir.get();
    p = slash + 1;
  }
}

}  // namespace

bool have_openat2() {
  static const bool available = probe_openat2();  // thread-safe, once per process
  return available;
}

Fd open_root(const std::string& root) {
  Fd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) throw Error(Code::Io, "open " + root + ": " + std::strerror(errno));
  return fd;
}

int open_beneath(int rootfd, const char* rel, int flags, mode_t mode) {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  if (!have_openat2()) return open_by_components(rootfd, rel, flags, mode);
  for (;;) {
    long fd = openat2_call(rootfd, rel, flags, mode);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != EINTR && errno != EAGAIN) return -1;  // EAGAIN: a rename raced the lookup
  }
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
