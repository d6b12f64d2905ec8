// A read-only mmap of a whole file, unmapped on destruction.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace pc {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Throws Error(Io) when the file cannot be opened or mapped.
  void open(const std::string& path);
  // As open, but returns false (and maps nothing) when the file does not exist.
  bool open_if_exists(const std::string& path);

  // One mapping per file per process, shared by every thread's reader: the pages are shared
  // by the kernel anyway, and one mapping keeps them from being counted once per thread.
  // Keyed by path, device, inode, size and mtime, so a rewritten file gets a new mapping.
  // The registry lock is taken only here, never on the read path.
  static std::shared_ptr<const MappedFile> shared(const std::string& path);
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Touched pages of a mapping count in this process's RSS, although the kernel could drop
  // and re-read them at will. Readers report roughly what they touch (the compressed bytes an
  // inflation consumed, a page for a header); every kReleaseEvery bytes reported, the
  // mapping's pages are dropped from the process. Safe while other threads read it: the
  // mapping is private, read-only and never written, so a later access faults the same bytes
  // back in from the page cache. Cheap for the access order readers use (pack order); random
  // access would re-fault, so callers that look many objects up sort them first.
  static constexpr uint64_t kReleaseEvery = 32u << 20;
  void touched(uint64_t bytes) const;
  // A read fault on a file mapping maps the pages around it that are in the page cache too
  // (the kernel's fault_around_bytes, 64 KiB by default), all counted in RSS. A reader that
  // jumps to a new window reports that window whole: 15,000 small objects scattered over a
  // 1 GB pack mapped ~300 MB that 15,000 reported pages never released. Moves within the
  // window the calling thread last reported add nothing (pack order stays cheap).
  static constexpr uint64_t kFaultAroundBytes = 64u << 10;
  void touched_at(uint64_t offset) const;
  // Drops the mapping's pages from this process now (a reader going idle).
  void release() const;
  // The file's modification time when it was opened.
  int64_t mtime_sec() const { return mtime_sec_; }
  int64_t mtime_nsec() const { return mtime_nsec_; }
  // The file's identity when it was opened, from the descriptor mapped: "dev:ino:size:mtime
  // ns:ctime ns" in decimal (Node's statSync bigint fields, so the two compare as strings). A
  // rename over the file changes its inode, any write its ctime.
  const std::string& identity() const { return identity_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
  int64_t mtime_sec_ = 0;
  int64_t mtime_nsec_ = 0;
  std::string identity_;
  mutable std::atomic<uint64_t> touched_{0};
};

}  // namespace pc
