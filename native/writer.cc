#include "writer.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace pc {

namespace {
constexpr size_t kStreamChunk = 1 << 20;

// openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH refuses a symlink anywhere in the path,
// so a link planted in a leading directory can never redirect a write. Kernels before 5.6
// lack it; then plain openat with O_NOFOLLOW guards the last component.
int open_exclusive(int rootfd, const char* rel, mode_t perm) {
  static std::atomic<bool> have_openat2{true};  // shared by worker threads; only flips off
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  if (have_openat2) {
    struct open_how how;
    std::memset(&how, 0, sizeof how);
    how.flags = static_cast<uint64_t>(flags);
    how.mode = perm;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
    for (;;) {
      long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      if (errno == EINTR) continue;
      if (errno == EAGAIN) continue;  // RESOLVE_* lookups may ask for a retry under rename races
      if (errno != ENOSYS && errno != EPERM) return -1;  // EPERM: seccomp filters may block it
      have_openat2.store(false);
      break;
    }
  }
  int fd;
  do fd = openat(rootfd, rel, flags, perm);
  while (fd < 0 && errno == EINTR);
  return fd;
}

bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool is_collision(int err) {
  // EXDEV: RESOLVE_BENEATH saw the path leave the root; ELOOP: a symlink in the way.
  return err == EEXIST || err == EISDIR || err == ENOTDIR || err == ELOOP || err == EXDEV;
}

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

class FileWriter {
 public:
  FileWriter(Odb& odb, const WriteRequest& req, WriteResult* res, int rootfd)
      : odb_(odb), req_(req), res_(res), rootfd_(rootfd) {}

  void write(size_t i) {
    const char* rel = req_.paths[i];
    const uint8_t* oid = req_.oids + 20 * i;
    mode_t perm = (req_.modes[i] & 0100) ? 0777 : 0666;  // the umask applies, as for git
    try {
      bool big = req_.sizes != nullptr && req_.sizes[i] > static_cast<double>(req_.stream_threshold);
      std::unique_ptr<ObjectStream> stream = big ? odb_.stream(oid) : nullptr;
      if (stream) {
        expect_blob(stream->type, oid);
        write_stream(i, rel, perm, *stream);
      } else {
        ObjectView obj = odb_.read_view(oid);
        expect_blob(obj.type, oid);
        write_bytes(i, rel, perm, obj.data, obj.size);
      }
    } catch (const Error& e) {
      fail(i, code_name(e.code()), e.what());
    }
  }

 private:
  void expect_blob(int type, const uint8_t* oid) {
    if (type != kBlob)
      throw Error(Code::CorruptObject,
                  to_hex(oid, 20) + " is a " + type_name(type) + ", expected a blob");
  }

  void fail(size_t i, const char* code, const std::string& message) {
    res_->status[i] = kFailed;
    res_->errors.push_back(FileError{i, code, message});
  }

  void fail_errno(size_t i, const char* what, int err) {
    fail(i, "ERR_IO", std::string(what) + " " + req_.paths[i] + ": " + std::strerror(err));
  }

  // Opens the file; on failure records the outcome and returns -1.
  int open_file(size_t i, const char* rel, mode_t perm) {
    int fd = open_exclusive(rootfd_, rel, perm);
    if (fd >= 0) return fd;
    int err = errno;
    if (is_collision(err))
      res_->status[i] = kCollided;
    else
      fail_errno(i, "open", err);
    return -1;
  }

  // fstat then close; any failure unlinks the half-written file.
  void finish(size_t i, int fd, const char* rel, bool ok, int err, uint64_t size) {
    struct stat st;
    if (ok && fstat(fd, &st) != 0) {
      ok = false;
      err = errno;
    }
    if (::close(fd) != 0 && ok) {  // NFS reports write-back errors at close
      ok = false;
      err = errno;
    }
    if (!ok) {
      unlinkat(rootfd_, rel, 0);
      fail_errno(i, "write", err);
      return;
    }
    fill_stat(st, &res_->stats[i * kStatWords]);
    res_->bytes += size;
  }

  void write_bytes(size_t i, const char* rel, mode_t perm, const uint8_t* data, size_t size) {
    int fd = open_file(i, rel, perm);
    if (fd < 0) return;
    bool ok = write_all(fd, data, size);
    finish(i, fd, rel, ok, ok ? 0 : errno, size);
  }

  void write_stream(size_t i, const char* rel, mode_t perm, ObjectStream& stream) {
    if (!buf_) buf_.reset(new uint8_t[kStreamChunk]);
    int fd = open_file(i, rel, perm);
    if (fd < 0) return;
    uint64_t total = 0;
    bool ok = true;
    int err = 0;
    try {
      for (;;) {
        size_t got = stream.read(buf_.get(), kStreamChunk);
        if (got == 0) break;
        total += got;
        if (total > stream.size) break;
        if (!write_all(fd, buf_.get(), got)) {
          ok = false;
          err = errno;
          break;
        }
      }
    } catch (const Error&) {
      ::close(fd);
      unlinkat(rootfd_, rel, 0);
      throw;
    }
    if (ok && total != stream.size) {
      ::close(fd);
      unlinkat(rootfd_, rel, 0);
      throw Error(Code::CorruptObject,
                  to_hex(req_.oids + 20 * i, 20) + ": inflated size differs from its header");
    }
    finish(i, fd, rel, ok, err, total);
  }

  Odb& odb_;
  const WriteRequest& req_;
  WriteResult* res_;
  int rootfd_;
  std::unique_ptr<uint8_t[]> buf_;
};
}  // namespace

void write_files(Odb& odb, const WriteRequest& req, WriteResult* result) {
  size_t n = req.paths.size();
  result->stats.assign(n * kStatWords, 0);
  result->status.assign(n, kWritten);
  int rootfd = open(req.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) throw Error(Code::Io, "open " + req.root + ": " + std::strerror(errno));
  FileWriter writer(odb, req, result, rootfd);
  for (size_t i = 0; i < n; i++) writer.write(i);
  close(rootfd);
}

}  // namespace pc
