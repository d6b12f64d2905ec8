#include "write/store.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <openssl/evp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "base/common.h"
#include "base/write_all.h"
#include "worktree/beneath.h"

namespace pc {

namespace {

// The attribute holding an entry's size as written: 8 bytes, little-endian.
constexpr char kSizeAttr[] = "user.pcheckout.size";
constexpr time_t kTouchAfter = 3600;  // an entry's time is refreshed at most once an hour
constexpr size_t kCopyChunk = 1 << 20;

// What is known of each pair of filesystems (by device: the store's and a tree's), for the
// life of the process: the method reached, and whether the store's refused the size attribute.
struct PairState {
  std::atomic<int32_t> method{kStoreReflink};
  std::atomic<bool> attrs_refused{false};
};

PairState* state_for(dev_t store, dev_t tree) {
  static std::mutex* mu = new std::mutex;
  static auto* states = new std::map<std::pair<dev_t, dev_t>, PairState>;
  std::lock_guard<std::mutex> lock(*mu);
  return &(*states)[std::make_pair(store, tree)];
}

// The errors that mean "this method does not work between these filesystems", as opposed
// to a failure of this one file.
bool unsupported(int err) {
  return err == EOPNOTSUPP || err == ENOTTY || err == EINVAL || err == EXDEV || err == ENOSYS ||
         err == ENOTSUP;
}

void step_down(std::atomic<int32_t>* method, int32_t from) {
  int32_t expected = from;
  method->compare_exchange_strong(expected, from + 1);
}

int copy_range(int dst, int src, uint64_t size) {
  loff_t in = 0, out = 0;
  while (static_cast<uint64_t>(out) < size) {
    uint64_t left = size - static_cast<uint64_t>(out);
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, 1u << 30));
    ssize_t n = copy_file_range(src, &in, dst, &out, want, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // the source is shorter than it should be
  }
  return 0;
}

// dst is a new file whose offset is still 0 (a refused reflink or copy_file_range moves none).
int copy_plain(int dst, int src, uint64_t size) {
  thread_local std::unique_ptr<uint8_t[]> buf;
  if (!buf) buf.reset(new uint8_t[kCopyChunk]);
  uint64_t off = 0;
  while (off < size) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(size - off, kCopyChunk));
    ssize_t got = pread(src, buf.get(), want, static_cast<off_t>(off));
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return EIO;
    if (!write_all(dst, buf.get(), static_cast<size_t>(got))) return errno;
    off += static_cast<uint64_t>(got);
  }
  return 0;
}

bool read_size_attr(int fd, uint64_t* out) {
  uint8_t b[8];
  if (fgetxattr(fd, kSizeAttr, b, sizeof b) != static_cast<ssize_t>(sizeof b)) return false;
  uint64_t v = 0;
  for (int k = 7; k >= 0; k--) v = (v << 8) | b[k];
  *out = v;
  return true;
}

int write_size_attr(int fd, uint64_t size) {
  uint8_t b[8];
  for (int k = 0; k < 8; k++) b[k] = static_cast<uint8_t>(size >> (8 * k));
  return fsetxattr(fd, kSizeAttr, b, sizeof b, 0) == 0 ? 0 : errno;
}

// A temporary name unique in this process and, by its pid, among processes on one machine.
std::string temp_name(const std::string& name) {
  static std::atomic<uint64_t> counter{0};
  std::string t = "tmp/";
  for (char c : name) t += c == '/' ? '-' : c;
  t += "." + std::to_string(static_cast<long>(getpid())) + "." +
       std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
  return t;
}

// Makes the directory holding `rel` (one level) under dirfd.
void make_parent(int dirfd, const std::string& rel) {
  size_t slash = rel.rfind('/');
  if (slash == std::string::npos) return;
  mkdirat(dirfd, rel.substr(0, slash).c_str(), 0755);
}

}  // namespace

std::string store_name(const uint8_t* oid, const Conversion* conv, bool exec_link) {
  std::string hex = to_hex(oid, 20);
  std::string name = hex.substr(0, 2) + "/" + hex.substr(2);
  if (exec_link) name += ".x";
  if (conv == nullptr) return name;
  // Everything that changes the bytes, in a fixed layout.
  std::string desc = "pcheckout-store-conversion-1";
  desc += static_cast<char>(conv->crlf);
  desc += conv->ident ? '1' : '0';
  desc += conv->ident_in_core ? '1' : '0';
  desc += conv->encoding;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(desc.data(), desc.size(), md, &len, EVP_sha1(), nullptr) != 1 || len < 8)
    throw Error(Code::Internal, "SHA-1 unavailable");
  return name + "." + to_hex(md, 8);
}

StoreDir::StoreDir(const std::string& dir, int rootfd, std::string* error) {
  fd_ = Fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd_.valid()) {
    *error = "cannot open the store " + dir + ": " + std::strerror(errno);
    return;
  }
  struct stat a, b;
  if (fstat(fd_.get(), &a) != 0 || fstat(rootfd, &b) != 0) {
    *error = std::string("cannot stat the store: ") + std::strerror(errno);
    fd_.reset();
    return;
  }
  PairState* state = state_for(a.st_dev, b.st_dev);
  method_ = &state->method;
  attrs_refused_ = &state->attrs_refused;
}

Fd StoreDir::open_entry(const std::string& name, uint64_t expect, uint64_t* size,
                        bool* damaged) const {
  *damaged = false;
  // No symlink in any component: an entry is a regular file in the store's own directories.
  Fd f(open_beneath(fd_.get(), name.c_str(), O_RDONLY | O_CLOEXEC, 0));
  if (!f.valid()) {
    // Not there, or not a file reached without a symlink: such a name is removed (a later
    // insert could not replace it).
    if (errno != ENOENT && errno != ENOTDIR) {
      unlinkat(fd_.get(), name.c_str(), 0);
      *damaged = true;
    }
    return f;
  }
  struct stat st;
  uint64_t recorded = 0;
  // The blob's own size when the pack gave it, else the one recorded when it was added.
  bool ok = fstat(f.get(), &st) == 0 && S_ISREG(st.st_mode);
  if (ok && expect != 0) {
    recorded = expect;
  } else if (ok && !read_size_attr(f.get(), &recorded)) {
    ok = false;
  }
  ok = ok && recorded == static_cast<uint64_t>(st.st_size);
  if (!ok) {
    f.reset();
    unlinkat(fd_.get(), name.c_str(), 0);
    *damaged = true;
    return f;
  }
  if (st.st_mtime < time(nullptr) - kTouchAfter) futimens(f.get(), nullptr);
  *size = recorded;
  return f;
}

int StoreDir::transfer(int dst, int src, uint64_t size, StoreMethod* used) const {
  int32_t m = method_->load(std::memory_order_relaxed);
  if (m == kStoreReflink) {
    if (ioctl(dst, FICLONE, src) == 0) {
      *used = kStoreReflink;
      return 0;
    }
    int err = errno;
    if (!unsupported(err)) return err;
    step_down(method_, kStoreReflink);
    m = kStoreCopy;
  }
  if (m == kStoreCopy) {
    int err = copy_range(dst, src, size);
    if (err == 0) {
      *used = kStoreCopy;
      return 0;
    }
    if (!unsupported(err)) return err;
    // Nothing useful was copied when the call is refused outright: start again in place.
    if (ftruncate(dst, 0) != 0) return errno;
    step_down(method_, kStoreCopy);
  }
  *used = kStoreWrite;
  return copy_plain(dst, src, size);
}

namespace {

// A file with no name yet in the entry's directory (O_TMPFILE), or, where the filesystem has
// none, under a temporary name in tmp/ (*tmp set).
Fd create_unnamed(int dirfd, const std::string& name, mode_t mode, std::string* tmp) {
  std::string dir = name.substr(0, name.find('/'));
  for (int attempt = 0; attempt < 2; attempt++) {
    Fd t(openat(dirfd, dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode));
    if (t.valid() || errno != ENOENT) {
      if (t.valid() || !(errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) return t;
      break;
    }
    mkdirat(dirfd, dir.c_str(), 0755);
  }
  *tmp = temp_name(name);
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  Fd t(openat(dirfd, tmp->c_str(), flags, mode));
  if (!t.valid() && errno == ENOENT) {
    mkdirat(dirfd, "tmp", 0755);
    t = Fd(openat(dirfd, tmp->c_str(), flags, mode));
  }
  return t;
}

// Gives the file its final name: a link of the unnamed file (another process linking the same
// entry first is as good), or the rename of the temporary one.
int name_entry(int dirfd, int fd, const std::string& tmp, const std::string& name) {
  if (tmp.empty()) {
    std::string self = "/proc/self/fd/" + std::to_string(fd);
    if (linkat(AT_FDCWD, self.c_str(), dirfd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
    return errno == EEXIST ? 0 : errno;
  }
  if (renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) == 0) return 0;
  int err = errno;
  if (err == ENOENT) {
    make_parent(dirfd, name);
    err = renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) == 0 ? 0 : errno;
  }
  return err;
}

}  // namespace

int StoreDir::link_into(const std::string& name, int dirfd, const char* base) const {
  return linkat(fd_.get(), name.c_str(), dirfd, base, 0) == 0 ? 0 : errno;
}

int StoreDir::insert(const std::string& name, const uint8_t* data, int src, uint64_t size,
                     mode_t mode, bool sync, const char** what, StoreMethod* used) const {
  if (attrs_refused_->load(std::memory_order_relaxed)) {
    *what = "record the size of";
    return ENOTSUP;
  }
  std::string tmp;
  Fd t = create_unnamed(fd_.get(), name, mode, &tmp);
  if (!t.valid()) {
    *what = "create";
    return errno;
  }
  int err = 0;
  if (data != nullptr) {
    // The bytes in memory: written, not cloned from the tree's file, whose dirty pages a
    // reflink would first have to write back.
    if (!write_all(t.get(), data, static_cast<size_t>(size))) err = errno;
  } else {
    err = transfer(t.get(), src, size, used);
  }
  if (err != 0) *what = "copy";
  if (err == 0 && (err = write_size_attr(t.get(), size)) != 0) {
    *what = "record the size of";
    if (err == ENOTSUP || err == EOPNOTSUPP) attrs_refused_->store(true);
  }
  if (err == 0 && sync && fsync(t.get()) != 0) {
    err = errno;
    *what = "sync";
  }
  if (err == 0 && tmp.empty() && (err = name_entry(fd_.get(), t.get(), tmp, name)) != 0)
    *what = "link";
  if (t.close() != 0 && err == 0) {
    err = errno;
    *what = "close";
  }
  if (err == 0 && !tmp.empty() && (err = name_entry(fd_.get(), -1, tmp, name)) != 0)
    *what = "rename";
  if (err != 0 && !tmp.empty()) unlinkat(fd_.get(), tmp.c_str(), 0);
  return err;
}

}  // namespace pc
