#include "sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include "beneath.h"
#include "common.h"

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
  if (threads <= 1) {
    fsync_range(root.get(), req, 0, n, errors);
    return;
  }
  std::vector<std::thread> pool;
  size_t per = (n + threads - 1) / threads;
  size_t started = 1;
  try {
    for (; started < threads; started++) {
      size_t from = std::min(n, started * per), to = std::min(n, from + per);
      pool.emplace_back(fsync_range, root.get(), std::cref(req), from, to, errors);
    }
  } catch (const std::system_error&) {
    // No more threads: this one does the slices that did not get one.
    for (size_t t = started; t < threads; t++)
      fsync_range(root.get(), req, std::min(n, t * per), std::min(n, t * per + per), errors);
  }
  fsync_range(root.get(), req, 0, std::min(n, per), errors);
  for (std::thread& th : pool) th.join();
}

}  // namespace pc
