// What the fuzz targets share: a private scratch directory for the parsers that read files
// (packs and indexes are mapped from a path, loose objects are found by path), splitting one
// input into parts, and a check that stops the run when an invariant does not hold.
#pragma once

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace fz {

// An invariant of the code under test, checked by the harness: a failure is a finding.
#define FZ_CHECK(cond)                                                            \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                               \
    }                                                                             \
  } while (0)

inline int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path);
}

// One directory per process, under $PCHECKOUT_FUZZ_TMP (the run script's, on tmpfs), else
// /dev/shm or /tmp; removed at a normal exit (a crash leaves it for the script to remove).
inline const std::string& scratch_dir() {
  static const std::string* dir = [] {
    const char* base = std::getenv("PCHECKOUT_FUZZ_TMP");
    if (base == nullptr) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    auto* path = new std::string(std::string(base) + "/pcheckout-fuzz-XXXXXX");
    if (mkdtemp(&(*path)[0]) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    return path;
  }();
  static const bool cleanup = std::atexit([] {
    nftw(dir->c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }) == 0;
  (void)cleanup;
  return *dir;
}

inline void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); i++) {
    if (i == path.size() || path[i] == '/') mkdir(path.substr(0, i).c_str(), 0700);
  }
}

// A new file (a new inode, so a mapping of the previous input is never reused).
inline void write_file(const std::string& path, const uint8_t* data, size_t n) {
  unlink(path.c_str());
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror(path.c_str());
    std::abort();
  }
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w <= 0) {
      std::perror("write");
      std::abort();
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  close(fd);
}

// A loose object "<type> <size>\0<data>", zlib-compressed, at objects/xx/yyyy for `oid`.
inline void write_loose(const std::string& objects, const uint8_t* oid, const char* type,
                        const uint8_t* data, size_t n) {
  std::string raw = std::string(type) + ' ' + std::to_string(n) + '\0';
  raw.append(reinterpret_cast<const char*>(data), n);
  uLongf cap = compressBound(raw.size());
  std::vector<uint8_t> z(cap);
  if (compress2(z.data(), &cap, reinterpret_cast<const Bytef*>(raw.data()), raw.size(), 1) !=
      Z_OK)
    std::abort();
  static const char hex[] = "0123456789abcdef";
  std::string name;
  for (int i = 0; i < 20; i++) {
    name.push_back(hex[oid[i] >> 4]);
    name.push_back(hex[oid[i] & 15]);
  }
  std::string dir = objects + "/" + name.substr(0, 2);
  make_dirs(dir);
  write_file(dir + "/" + name.substr(2), z.data(), cap);
}

// Splits an input at every occurrence of `sep` (at most max_parts parts; the last takes the rest).
inline std::vector<std::string> split(const uint8_t* data, size_t size, const std::string& sep,
                                      size_t max_parts) {
  std::vector<std::string> parts;
  std::string s(reinterpret_cast<const char*>(data), size);
  size_t from = 0;
  while (parts.size() + 1 < max_parts) {
    size_t at = s.find(sep, from);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(from, at - from));
    from = at + sep.size();
  }
  parts.push_back(s.substr(from));
  return parts;
}

// Turns a value into coverage the fuzzer can see (one branch per bucket of its bit length), for
// outcomes decided inside libraries that are not instrumented (zlib, libdeflate).
inline void signal(uint64_t v) {
  static volatile int sink [[maybe_unused]];
  switch (v == 0 ? 0 : 64 - __builtin_clzll(v)) {
#define FZ_BUCKET(n) \
  case n:            \
    sink = n;        \
    break;
    FZ_BUCKET(0) FZ_BUCKET(1) FZ_BUCKET(2) FZ_BUCKET(3) FZ_BUCKET(4) FZ_BUCKET(5) FZ_BUCKET(6)
    FZ_BUCKET(7) FZ_BUCKET(8) FZ_BUCKET(9) FZ_BUCKET(10) FZ_BUCKET(11) FZ_BUCKET(12)
    FZ_BUCKET(13) FZ_BUCKET(14) FZ_BUCKET(15) FZ_BUCKET(16) FZ_BUCKET(17) FZ_BUCKET(18)
    FZ_BUCKET(19) FZ_BUCKET(20)
#undef FZ_BUCKET
    default:
      sink = -1;
  }
}

inline uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

inline uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace fz
