#include "index/index_writer.h"

#include <cstring>

#include "worktree/stat.h"

namespace pc {

namespace {

constexpr size_t kEntryFixed = 62;  // 10 stat words, 20-byte id, 16-bit flags
constexpr uint16_t kExtended = 0x4000;
constexpr size_t kNameMax = 0xfff;

void put32(std::string* out, uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  out->append(b, 4);
}
void put16(std::string* out, uint16_t v) {
  char b[2] = {static_cast<char>(v >> 8), static_cast<char>(v)};
  out->append(b, 2);
}

// The varint of version 4's strip lengths (as OFS_DELTA offsets): big-endian groups of 7 bits,
// each continued group biased by 1.
void put_varint(std::string* out, size_t n) {
  char buf[16];
  size_t at = sizeof buf - 1;
  buf[at] = static_cast<char>(n & 0x7f);
  while (n >= 128) {
    n = (n >> 7) - 1;
    buf[--at] = static_cast<char>(0x80 | (n & 0x7f));
  }
  out->append(buf + at, sizeof buf - at);
}

}  // namespace

std::string serialize_index(const IndexWrite& in) {
  std::string out;
  append_index(in, &out);
  return out;
}

void append_index(const IndexWrite& in, std::string* buf) {
  std::string& out = *buf;
  const PathList& e = in.entries;
  const size_t to = in.to < e.count ? in.to : e.count;
  const size_t from = in.from < to ? in.from : to;
  const bool first = from == 0, last = to == e.count;
  size_t ext_bytes = 0;
  if (last)
    for (std::string_view x : in.extensions) ext_bytes += x.size();
  out.reserve(out.size() + 12 + (to - from) * (kEntryFixed + 10) +
              (e.starts[to] - e.starts[from]) + ext_bytes + 20);
  if (first) {
    out.append("DIRC", 4);
    put32(&out, in.version);
    put32(&out, static_cast<uint32_t>(e.count));
  }
  size_t prev_start = 0, prev_len = 0;
  if (from > 0) {
    prev_start = e.starts[from - 1];
    prev_len = e.starts[from] - prev_start - 1;
  }
  for (size_t i = from; i < to; i++) {
    size_t entry_at = out.size();
    const uint32_t* st = in.stats + i * kStatWords;
    for (size_t w = 0; w < kStatWords; w++) put32(&out, w == 6 ? e.modes[i] : st[w]);
    out.append(reinterpret_cast<const char*>(e.oids) + 20 * i, 20);
    const size_t start = e.starts[i];
    const size_t len = e.starts[i + 1] - start - 1;
    uint16_t ext = in.ext_flags != nullptr && in.version >= 3 ? in.ext_flags[i] : 0;
    uint16_t name = static_cast<uint16_t>(len < kNameMax ? len : kNameMax);
    put16(&out, ext != 0 ? static_cast<uint16_t>(kExtended | name) : name);
    if (ext != 0) put16(&out, ext);
    const char* path = reinterpret_cast<const char*>(e.paths) + start;
    if (in.version == 4) {
      // Bytes to strip from the previous path, then the new suffix and its NUL; no padding.
      size_t m = len < prev_len ? len : prev_len;
      const char* prev = reinterpret_cast<const char*>(e.paths) + prev_start;
      size_t k = 0;
      while (k < m && prev[k] == path[k]) k++;
      put_varint(&out, prev_len - k);
      out.append(path + k, len - k);
      out.push_back('\0');
      prev_start = start;
      prev_len = len;
    } else {
      out.append(path, len);
      // 1 to 8 NULs pad the entry to a multiple of 8.
      size_t size = out.size() - entry_at;
      out.append(8 - size % 8, '\0');
    }
  }
  if (!last) return;
  for (std::string_view x : in.extensions) out.append(x.data(), x.size());
  out.append(20, '\0');
}

}  // namespace pc
