#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "base/common.h"
#include "base/fd.h"

namespace pc {

MappedFile::~MappedFile() {
  if (data_ != nullptr && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
}

void MappedFile::touched(uint64_t bytes) const {
  if (touched_.fetch_add(bytes, std::memory_order_relaxed) + bytes < kReleaseEvery) return;
  // Of the threads that crossed the mark, the one that takes the count releases.
  if (touched_.exchange(0, std::memory_order_relaxed) >= kReleaseEvery) release();
}

void MappedFile::touched_at(uint64_t offset) const {
  // Per thread: the window this thread reported last, and in which mapping. A mapping freed
  // and another made at the same address only skews the count once.
  thread_local const MappedFile* last_map = nullptr;
  thread_local uint64_t last_window = 0;
  uint64_t window = offset / kFaultAroundBytes;
  if (last_map == this && last_window == window) return;
  last_map = this;
  last_window = window;
  touched(kFaultAroundBytes);
}

void MappedFile::release() const {
  // Advice only: a failure (none is expected for a mapping we made) just keeps the pages.
  if (data_ != nullptr && size_ > 0)
    (void)madvise(const_cast<uint8_t*>(data_), size_, MADV_DONTNEED);
}

namespace {

// Nanoseconds since the epoch, as Node's bigint stat gives them (64 bits hold them until the
// year 2554; a time before 1970 is not a file this project writes: its identity then only
// fails to match).
std::string nanoseconds(const struct timespec& t) {
  return std::to_string(static_cast<uint64_t>(t.tv_sec) * 1000000000u +
                        static_cast<uint64_t>(t.tv_nsec));
}

std::string identity_of(const struct stat& st) {
  return std::to_string(static_cast<uint64_t>(st.st_dev)) + ':' +
         std::to_string(static_cast<uint64_t>(st.st_ino)) + ':' +
         std::to_string(static_cast<uint64_t>(st.st_size)) + ':' + nanoseconds(st.st_mtim) +
         ':' + nanoseconds(st.st_ctim);
}

}  // namespace

void MappedFile::open(const std::string& path) {
  if (!open_if_exists(path)) throw Error(Code::Io, "open " + path + ": " + std::strerror(ENOENT));
}

bool MappedFile::open_if_exists(const std::string& path) {
  path_ = path;
  // Closed on every path out (the mapping, once made, does not need it).
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid() && errno == ENOENT) return false;
  if (!fd.valid()) throw Error(Code::Io, "open " + path + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    int e = errno;
    throw Error(Code::Io, "stat " + path + ": " + std::strerror(e));
  }
  size_ = static_cast<size_t>(st.st_size);
  mtime_sec_ = static_cast<int64_t>(st.st_mtim.tv_sec);
  mtime_nsec_ = static_cast<int64_t>(st.st_mtim.tv_nsec);
  identity_ = identity_of(st);
  if (size_ > 0) {
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) {
      int e = errno;
      size_ = 0;
      throw Error(Code::Io, "mmap " + path + ": " + std::strerror(e));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  return true;
}

std::shared_ptr<const MappedFile> MappedFile::shared(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw Error(Code::Io, "stat " + path + ": " + std::strerror(errno));
  std::string key = path + '\0' + std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) +
                    ':' + std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) +
                    '.' + std::to_string(st.st_mtim.tv_nsec);
  // Leaked on purpose: worker threads may drop their last reference during process exit,
  // after static destructors would have run.
  static std::mutex* lock = new std::mutex;
  static auto* registry = new std::map<std::string, std::weak_ptr<const MappedFile>>;
  std::lock_guard<std::mutex> guard(*lock);
  auto it = registry->find(key);
  if (it != registry->end()) {
    if (auto live = it->second.lock()) return live;
  }
  auto fresh = std::make_shared<MappedFile>();
  fresh->open(path);
  (*registry)[key] = fresh;
  // Drop entries whose mappings are gone, so the registry does not grow without bound.
  for (auto e = registry->begin(); e != registry->end();) {
    if (e->second.expired())
      e = registry->erase(e);
    else
      ++e;
  }
  return fresh;
}

}  // namespace pc
