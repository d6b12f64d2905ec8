#include "worktree/watch.h"

#include <fcntl.h>
#include <sys/inotify.h>

#include <cerrno>
#include <cstring>

#include "worktree/beneath.h"
#include "base/common.h"

namespace pc {

uint32_t watch_mask() {
  return IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
         IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
}

Watch::Watch() : inotify_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
  if (!inotify_.valid())
    throw Error(Code::Io, std::string("inotify_init1: ") + std::strerror(errno));
}

int Watch::add(const std::string& root, const char* rel) {
  auto known = roots_.find(root);
  if (known == roots_.end()) {
    Fd opened(open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!opened.valid()) return -errno;
    known = roots_.emplace(root, std::move(opened)).first;
  }
  const int rootfd = known->second.get();
  Fd dir;
  int fd = rootfd;
  if (rel[0] != '\0') {
    dir = Fd(open_beneath(rootfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
    if (!dir.valid()) return -errno;
    fd = dir.get();
  }
  // The descriptor's own directory: /proc resolves the magic link to exactly that inode.
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  int wd = inotify_add_watch(inotify_.get(), self.c_str(), watch_mask());
  return wd >= 0 ? wd : -errno;
}

void Watch::forget_root(const std::string& root) { roots_.erase(root); }

void Watch::remove(int wd) const { inotify_rm_watch(inotify_.get(), wd); }

bool Watch::drain(std::vector<WatchEvent>* out) const {
  alignas(struct inotify_event) char buf[64 * 1024];
  bool complete = true;
  for (;;) {
    ssize_t n = read(inotify_.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return complete;
      throw Error(Code::Io, std::string("reading inotify events: ") + std::strerror(errno));
    }
    if (n == 0) return complete;
    size_t len = static_cast<size_t>(n);
    for (size_t at = 0; at < len;) {
      if (len - at < sizeof(struct inotify_event))
        throw Error(Code::Io, "a truncated inotify event");
      struct inotify_event ev;
      std::memcpy(&ev, buf + at, sizeof ev);
      size_t name_at = at + sizeof ev;
      if (ev.len > len - name_at) throw Error(Code::Io, "an inotify event longer than its read");
      if (ev.mask & IN_Q_OVERFLOW) complete = false;
      // The name is NUL-padded to an alignment boundary.
      const char* name = buf + name_at;
      out->push_back({ev.wd, ev.mask, std::string(name, strnlen(name, ev.len))});
      at = name_at + ev.len;
    }
  }
}

}  // namespace pc
