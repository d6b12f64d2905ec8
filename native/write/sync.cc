#include "write/sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "worktree/beneath.h"
#include "base/common.h"
#include "base/slices.h"

namespace pc {

bool sync_file(int fd, SyncMode mode) {
  if (mode == kSyncFile) {
    int rc;
    do rc = ::fsync(fd);
    while (rc != 0 && errno == EINTR);
    return rc == 0;
  }
  if (mode == kSyncStart) {
    // Starts writeback of the whole file without waiting: the I/O of many files overlaps, and the
    // barrier (syncfs, or a second fsync) finds the data already on its way or written.
    if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0) return true;
    return errno != EIO && errno != ENOSPC;  // EINVAL/ESPIPE/ENOSYS: left to the barrier
  }
  return true;
}

void sync_filesystem(const std::string& root) {
  Fd fd = open_root(root);
  if (::syncfs(fd.get()) != 0) throw Error(Code::Io, "syncfs " + root + ": " + std::strerror(errno));
}

namespace {

void fsync_range(int rootfd, const FsyncRequest& req, size_t from, size_t to,
                 std::vector<int32_t>* errors) {
  for (size_t i = from; i < to; i++) {
    const char* rel = req.paths[i];
    // fsync needs no write access; O_RDONLY opens directories too.
    Fd fd(std::strcmp(rel, ".") == 0 ? ::dup(rootfd) : open_beneath(rootfd, rel, O_RDONLY, 0));
    if (!fd.valid()) {
      (*errors)[i] = errno;
      continue;
    }
    int rc;
    do rc = ::fsync(fd.get());
    while (rc != 0 && errno == EINTR);
    (*errors)[i] = rc == 0 ? 0 : errno;
  }
}

}  // namespace

void fsync_paths(const FsyncRequest& req, std::vector<int32_t>* errors) {
  size_t n = req.paths.size();
  errors->assign(n, 0);
  Fd root = open_root(req.root);
  // Each fsync mostly waits (for the disk, or a server's reply): threads overlap the waits.
  size_t threads = std::min(std::max<size_t>(req.threads, 1), std::max<size_t>(n, 1));
  run_in_slices(n, threads,
                [&](size_t from, size_t to) { fsync_range(root.get(), req, from, to, errors); });
}

}  // namespace pc
