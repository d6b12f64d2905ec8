#include "write/writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "base/write_all.h"
#include "worktree/beneath.h"
#include "write/parallel_write.h"
#include "worktree/stat.h"

namespace pc {

namespace {
constexpr size_t kStreamChunk = 1 << 20;
constexpr size_t kKeepConverted = 16u << 20;

bool is_collision(int err) {
  // EXDEV: RESOLVE_BENEATH saw the path leave the root; ELOOP: a symlink in the way.
  return err == EEXIST || err == EISDIR || err == ENOTDIR || err == ELOOP || err == EXDEV;
}

class FileWriter {
 public:
  FileWriter(Odb& odb, const WriteRequest& req, WriteResult* res, int rootfd,
             const StoreDir* store)
      : odb_(odb), req_(req), res_(res), rootfd_(rootfd), store_(store) {}

  void write(size_t i) {
    const char* rel = req_.paths[i];
    const uint8_t* oid = req_.oids + 20 * i;
    mode_t perm = (req_.modes[i] & 0100) ? 0777 : 0666;  // the umask applies, as for git
    if (store_ != nullptr && req_.store_link) perm &= ~0222;  // a link-mode tree is read-only
    insert_as_.clear();
    current_ = i;
    if (req_.flags != nullptr && (req_.flags[i] & kReplace)) {
      // An update: the old file goes first, and the new one gets a new inode, as with git.
      int err = unlink_beneath(rootfd_, rel);
      if (err != 0 && err != ENOENT) {
        if (is_collision(err) || err == EPERM) res_->status[i] = kCollided;  // EPERM: a directory
        else fail_errno(i, "unlink", err);
        return;
      }
    }
    if (!req_.contents.empty()) {
      write_bytes(i, rel, perm, req_.contents[i].first, req_.contents[i].second);
      return;
    }
    try {
      const Conversion* conv = conversion(i);
      if (store_ != nullptr && import(i, rel, perm, oid, conv)) return;
      bool big = req_.sizes != nullptr && req_.sizes[i] > static_cast<double>(req_.stream_threshold);
      // A converted blob is held whole, as git holds it for every conversion but the
      // streamable ones (ident, eol=crlf), which it could stream.
      std::unique_ptr<ObjectStream> stream = big && !conv ? odb_.stream(oid) : nullptr;
      if (conv) {
        ObjectView obj = odb_.read_view(oid);
        expect_blob(obj.type, oid);
        std::string warning;
        bool changed = to_worktree(*conv, oid, obj.data, obj.size, rel, &converted_, &warning);
        // git's complaint comes with every checkout of it: such a file is not taken from the store.
        if (!warning.empty()) insert_as_.clear();
        if (changed) {
          write_bytes(i, rel, perm, converted_.data(), converted_.size());
        } else {
          write_bytes(i, rel, perm, obj.data, obj.size);
        }
        if (!warning.empty()) res_->warnings.push_back(FileError{i, "ERR_ENCODING", warning});
        if (converted_.capacity() > kKeepConverted) std::vector<uint8_t>().swap(converted_);
      } else if (stream) {
        expect_blob(stream->type, oid);
        write_stream(i, rel, perm, *stream);
      } else {
        ObjectView obj = odb_.read_view(oid);
        expect_blob(obj.type, oid);
        write_bytes(i, rel, perm, obj.data, obj.size);
      }
    } catch (const Error& e) {
      fail(i, code_name(e.code()), e.what());
    } catch (const std::bad_alloc&) {
      fail(i, code_name(Code::TooLarge), to_hex(oid, 20) + ": out of memory");
    } catch (const std::exception& e) {
      fail(i, code_name(Code::Internal), to_hex(oid, 20) + ": " + e.what());
    }
  }

 private:
  // Takes the file from the store when it holds it; true when that settled the file (written,
  // or an outcome recorded). Otherwise the file is written from the pack, and added to the
  // store as it is closed (insert_as_) unless the store has it and only the copy failed.
  bool import(size_t i, const char* rel, mode_t perm, const uint8_t* oid, const Conversion* conv) {
    bool link = req_.store_link;
    std::string name = store_name(oid, conv, link && (req_.modes[i] & 0100));
    double known = conv == nullptr && req_.sizes != nullptr ? req_.sizes[i] : 0;
    uint64_t size = 0;
    bool damaged = false;
    Fd src = store_->open_entry(name, static_cast<uint64_t>(known), &size, &damaged);
    if (damaged) res_->store.repaired++;
    if (!src.valid()) {
      insert_as_ = std::move(name);
      return false;
    }
    if (link && link_entry(i, rel, name, src.get(), size)) return true;
    Fd fd = open_file(i, rel, perm);
    if (!fd.valid()) return true;
    StoreMethod used = kStoreUnused;
    int err = store_->transfer(fd.get(), src.get(), size, &used);
    if (err != 0) {
      fd.reset();
      unlink_beneath(rootfd_, rel);
      store_failed(std::string("cannot import ") + name + ": " + std::strerror(err));
      return false;
    }
    res_->store.method = used;
    res_->store.imported++;
    finish(i, std::move(fd), rel, true, 0, size);
    return true;
  }

  // The link mode's import: the entry linked under the file's name; its stat data is the
  // entry's (after the link). False when the filesystem will not link it there (another
  // filesystem, too many links): the caller copies it instead.
  bool link_entry(size_t i, const char* rel, const std::string& name, int src, uint64_t size) {
    const char* slash = std::strrchr(rel, '/');
    Fd parent;
    int dirfd = rootfd_;
    if (slash != nullptr) {
      std::string dir(rel, static_cast<size_t>(slash - rel));
      parent = Fd(open_beneath(rootfd_, dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
      if (!parent.valid()) {
        int err = errno;
        if (is_collision(err)) res_->status[i] = kCollided;
        else fail_errno(i, "open the directory of", err);
        return true;
      }
      dirfd = parent.get();
    }
    int err = store_->link_into(name, dirfd, slash != nullptr ? slash + 1 : rel);
    if (err == EEXIST) {
      res_->status[i] = kCollided;
      return true;
    }
    if (err != 0) {
      store_failed(std::string("cannot link ") + name + ": " + std::strerror(err));
      return false;
    }
    struct stat st;
    if (fstat(src, &st) != 0) {
      fail_errno(i, "stat", errno);
      return true;
    }
    fill_stat(st, &res_->stats[i * kStatWords]);
    res_->bytes += size;
    res_->store.method = kStoreHardlink;
    res_->store.imported++;
    return true;
  }

  void store_failed(const std::string& why) {
    if (res_->store.failed++ == 0) res_->store.first_error = why;
  }

  // Adds the file just written to the store under insert_as_: its bytes when still in memory
  // (insert_data_), else from fd (open for reading).
  void insert(int fd, uint64_t size) {
    const char* what = "";
    StoreMethod used = kStoreUnused;
    mode_t mode = req_.store_link && (req_.modes[current_] & 0100) ? 0555 : 0444;
    int err = store_->insert(insert_as_, insert_data_, fd, size, mode, req_.sync != kSyncNone,
                             &what, &used);
    if (err != 0) {
      store_failed(std::string("cannot ") + what + " " + insert_as_ + ": " + std::strerror(err));
      return;
    }
    if (used != kStoreUnused) res_->store.method = used;
    res_->store.inserted++;
    res_->store.inserted_bytes += size;
  }

  // The entry's conversion, or null when its bytes go to disk as they are.
  const Conversion* conversion(size_t i) const {
    if (req_.convert == nullptr || req_.convert[i] == 0) return nullptr;
    const Conversion& c = req_.conversions[req_.convert[i] - 1];
    return c.checkout_is_noop() ? nullptr : &c;
  }

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
    // The path is not repeated: TypeScript names it.
    fail(i, code_name(Code::Io), std::string("cannot ") + what + ": " + std::strerror(err));
  }

  // Opens the file; on failure records the outcome and returns an invalid Fd.
  Fd open_file(size_t i, const char* rel, mode_t perm) {
    // Readable too with a store, which copies from it.
    int access = store_ != nullptr ? O_RDWR : O_WRONLY;
    Fd fd(open_beneath(rootfd_, rel, access | O_CREAT | O_EXCL, perm));
    if (fd.valid()) return fd;
    int err = errno;
    if (is_collision(err))
      res_->status[i] = kCollided;
    else
      fail_errno(i, "open", err);
    return fd;
  }

  // The sync mode's step, the store's copy, fstat, then close; any failure unlinks the
  // half-written file. The copy comes before fstat: a reflink may touch the file's inode.
  void finish(size_t i, Fd fd, const char* rel, bool ok, int err, uint64_t size) {
    if (ok && !sync_file(fd.get(), req_.sync)) {
      ok = false;
      err = errno;
    }
    if (ok && !insert_as_.empty()) insert(fd.get(), size);
    struct stat st;
    if (ok && fstat(fd.get(), &st) != 0) {
      ok = false;
      err = errno;
    }
    if (fd.close() != 0 && ok) {  // NFS reports write-back errors at close
      ok = false;
      err = errno;
    }
    if (!ok) {
      unlink_beneath(rootfd_, rel);
      fail_errno(i, "write", err);
      return;
    }
    fill_stat(st, &res_->stats[i * kStatWords]);
    res_->bytes += size;
  }

  void write_bytes(size_t i, const char* rel, mode_t perm, const uint8_t* data, size_t size) {
    Fd fd = open_file(i, rel, perm);
    if (!fd.valid()) return;
    bool ok = write_all(fd.get(), data, size);
    int err = ok ? 0 : errno;
    insert_data_ = data;
    finish(i, std::move(fd), rel, ok, err, size);
    insert_data_ = nullptr;
  }

  void write_stream(size_t i, const char* rel, mode_t perm, ObjectStream& stream) {
    if (!buf_) buf_.reset(new uint8_t[kStreamChunk]);
    Fd fd = open_file(i, rel, perm);
    if (!fd.valid()) return;
    uint64_t total = 0;
    bool ok = true;
    int err = 0;
    try {
      for (;;) {
        size_t got = stream.read(buf_.get(), kStreamChunk);
        if (got == 0) break;
        total += got;
        if (total > stream.size) break;
        if (!write_all(fd.get(), buf_.get(), got)) {
          ok = false;
          err = errno;
          break;
        }
      }
    } catch (const Error&) {
      fd.reset();
      unlink_beneath(rootfd_, rel);
      throw;
    }
    if (ok && total != stream.size) {
      fd.reset();
      unlink_beneath(rootfd_, rel);
      throw Error(Code::CorruptObject,
                  to_hex(req_.oids + 20 * i, 20) + ": inflated size differs from its header");
    }
    finish(i, std::move(fd), rel, ok, err, total);
  }

  Odb& odb_;
  const WriteRequest& req_;
  WriteResult* res_;
  int rootfd_;
  const StoreDir* store_;  // null: no store
  std::string insert_as_;  // the store's name for the file being written, to add it
  const uint8_t* insert_data_ = nullptr;  // its bytes, while write_bytes holds them
  size_t current_ = 0;                    // the file being written
  std::unique_ptr<uint8_t[]> buf_;
  std::vector<uint8_t> converted_;  // reused across files; released when it grew large
};
}  // namespace

void write_files(Odb& odb, const WriteRequest& req, WriteResult* result) {
  size_t n = req.paths.size();
  result->stats.assign(n * kStatWords, 0);
  result->status.assign(n, kWritten);
  Fd root = open_root(req.root);
  std::unique_ptr<StoreDir> store;
  if (!req.store.empty()) {
    std::string error;
    store = std::make_unique<StoreDir>(req.store, root.get(), &error);
    if (!store->valid()) {
      // Written without it; the summary says why.
      result->store.failed = 1;
      result->store.first_error = error;
      store.reset();
    }
  }
  FileWriter writer(odb, req, result, root.get(), store.get());
  for (size_t i = 0; i < n; i++) {
    if (write_cancelled(req)) {
      std::fill(result->status.begin() + static_cast<std::ptrdiff_t>(i), result->status.end(),
                kFailed);
      result->cancelled = true;
      return;
    }
    writer.write(i);
  }
}

bool write_cancelled(const WriteRequest& req) {
  return exit_requested() ||
         (req.cancel != nullptr && __atomic_load_n(req.cancel, __ATOMIC_RELAXED) != 0);
}

}  // namespace pc
