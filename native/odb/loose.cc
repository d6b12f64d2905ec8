#include "odb/loose.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/fd.h"
#include "odb/odb.h"

// Loose objects (gitformat: "objects/xx/yyyy…", one zlib stream of "<type> <size>\0<data>"):
// finding, reading and streaming them for the object database.
namespace pc {

namespace {
// Up to `cap` bytes from the start of a file into `out`, and its size; false when it cannot be
// opened or read, or is empty. A file that shrank meanwhile reads short.
bool read_head(const std::string& path, size_t cap, std::vector<uint8_t>* out, uint64_t* size) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || fstat(fd.get(), &st) != 0 || st.st_size <= 0) return false;
  *size = static_cast<uint64_t>(st.st_size);
  out->resize(static_cast<size_t>(std::min<uint64_t>(cap, *size)));
  size_t have = 0;
  while (have < out->size()) {
    ssize_t n = pread(fd.get(), out->data() + have, out->size() - have, static_cast<off_t>(have));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  out->resize(have);
  return have > 0;
}

}  // namespace

// Parses "<type> <size>\0" at the start of a loose object. Returns the header length.
size_t parse_loose_header(const uint8_t* p, size_t n, int* type, uint64_t* size) {
  size_t i = 0;
  while (i < n && p[i] != ' ') i++;
  if (i == n) return 0;
  std::string t(reinterpret_cast<const char*>(p), i);
  if (t == "blob") *type = kBlob;
  else if (t == "tree") *type = kTree;
  else if (t == "commit") *type = kCommit;
  else if (t == "tag") *type = kTag;
  else return 0;
  i++;
  uint64_t v = 0;
  size_t digits = 0;
  while (i < n && p[i] >= '0' && p[i] <= '9') {
    if (v > (UINT64_MAX - 9) / 10) return 0;
    v = v * 10 + (p[i] - '0');
    i++;
    digits++;
  }
  if (digits == 0 || i >= n || p[i] != 0) return 0;
  *size = v;
  return i + 1;
}

// The type and size of a loose object from the first bytes of its file (no mapping: a plan
// locates hundreds of loose blobs, and mapping each cost ~10 µs more). False when those bytes do
// not give a well-formed, plausible header: the caller then reads the object as a stream, which
// decides (and reports a corrupt one).
bool loose_header(const std::string& path, int* type, uint64_t* size) {
  std::vector<uint8_t> in;
  uint64_t file_size = 0;
  if (!read_head(path, 4096, &in, &file_size)) return false;
  InflateStream z(in.data(), in.size());
  uint8_t hdr[64];
  long got = z.read(hdr, sizeof hdr);
  return got > 0 && parse_loose_header(hdr, static_cast<size_t>(got), type, size) != 0 &&
         plausible_size(*size, static_cast<size_t>(file_size));
}

LooseStream::LooseStream(const std::string& path, const uint8_t* oid) {
  // A small file is read, a large one mapped: mapping a few-KB tree (a switch reads ~1,000
  // loose ones) costs more than reading it.
  const uint8_t* data = nullptr;
  size_t len = 0;
  uint64_t file_size = 0;
  if (read_head(path, kSmall, &small_, &file_size) && file_size <= kSmall) {
    data = small_.data();
    len = small_.size();
  } else {
    std::vector<uint8_t>().swap(small_);  // a large one: its head was read for nothing
    map_.open(path);
    data = map_.data();
    len = map_.size();
  }
  z_ = std::make_unique<InflateStream>(data, len);
  uint8_t hdr[64];
  long got = z_->read(hdr, sizeof hdr);
  size_t h = got > 0 ? parse_loose_header(hdr, static_cast<size_t>(got), &type, &size) : 0;
  if (h == 0) throw Error(Code::CorruptObject, "loose object " + to_hex(oid, 20) + ": bad header");
  if (!plausible_size(size, len))
    throw Error(Code::CorruptObject, "loose object " + to_hex(oid, 20) + ": implausible size");
  pending_.assign(hdr + h, hdr + got);
  oid_ = to_hex(oid, 20);
}

size_t LooseStream::read(uint8_t* out, size_t cap) {
  size_t n = 0;
  if (!pending_.empty()) {
    n = std::min(cap, pending_.size());
    std::memcpy(out, pending_.data(), n);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(n));
    if (n == cap) return n;
  }
  long got = z_->read(out + n, cap - n);
  if (got < 0) throw Error(Code::CorruptObject, "loose object " + oid_ + ": corrupt zlib data");
  return n + static_cast<size_t>(got);
}

std::string Odb::loose_path(const std::string& dir, const uint8_t* oid) const {
  std::string hex = to_hex(oid, 20);
  return dir + "/" + hex.substr(0, 2) + "/" + hex.substr(2);
}

bool Odb::find_loose(const uint8_t* oid, std::string* path) {
  if (is_bad(oid, -1)) return false;
  for (const std::string& dir : dirs_) {
    std::string p = loose_path(dir, oid);
    struct stat st;
    if (stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (path != nullptr) *path = p;
      return true;
    }
  }
  return false;
}

Object Odb::read_loose(const std::string& path, const uint8_t* oid) {
  LooseStream s(path, oid);
  if (s.size > SIZE_MAX) throw Error(Code::TooLarge, to_hex(oid, 20));
  Object obj{s.type, alloc_bytes(static_cast<size_t>(s.size))};
  stats_.inflations++;
  stats_.inflated_bytes += s.size;
  size_t have = 0;
  while (have < obj.bytes->size) {
    size_t got = s.read(obj.bytes->data.get() + have, obj.bytes->size - have);
    if (got == 0) break;
    have += got;
  }
  uint8_t extra;
  if (have != obj.bytes->size || s.read(&extra, 1) != 0)
    throw Error(Code::CorruptObject, "loose object " + to_hex(oid, 20) + ": size mismatch");
  return obj;
}

void Odb::loose_prefix_matches(const OidPrefix& prefix, std::set<std::string>* matches,
                               uint8_t* out) const {
  if (prefix.nibbles < 2) return;
  std::string hex = to_hex(prefix.bytes, 20).substr(0, prefix.nibbles);
  struct CloseDir {
    void operator()(DIR* d) const { closedir(d); }
  };
  for (const std::string& dir : dirs_) {
    std::string sub = dir + "/" + hex.substr(0, 2);
    std::unique_ptr<DIR, CloseDir> d(opendir(sub.c_str()));
    if (!d) continue;
    while (struct dirent* ent = readdir(d.get())) {
      std::string name = ent->d_name;
      if (name.size() != 38 || name.compare(0, hex.size() - 2, hex, 2, std::string::npos) != 0)
        continue;
      std::string full = hex.substr(0, 2) + name;
      uint8_t bin[20];
      bool ok = true;
      for (int i = 0; i < 20 && ok; i++) {
        int hi = hex_digit(full[2 * i]);
        int lo = hex_digit(full[2 * i + 1]);
        ok = hi >= 0 && lo >= 0;
        bin[i] = static_cast<uint8_t>(hi * 16 + lo);
      }
      if (!ok) continue;
      matches->insert(std::string(reinterpret_cast<char*>(bin), 20));
      std::memcpy(out, bin, 20);
    }
  }
}

}  // namespace pc
