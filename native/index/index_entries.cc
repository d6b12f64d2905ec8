#include "index/index_entries.h"

#include <cstdint>
#include <cstring>

#include "base/common.h"
#include "worktree/stat.h"

namespace pc {

namespace {

constexpr size_t kHeader = 12;
constexpr size_t kEntryFixed = 62;  // 10 stat words, 20-byte id, 16-bit flags
constexpr uint32_t kNameMask = 0xfff;
constexpr uint16_t kAssumeValid = 0x8000;
constexpr uint16_t kExtended = 0x4000;
constexpr uint16_t kKnownExtFlags = 0x6000;  // skip-worktree, intent-to-add
constexpr uint16_t kSkipWorktree = 0x4000;

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

[[noreturn]] void corrupt(const std::string& what) { throw Error(Code::CorruptIndex, what); }

// memcmp order, shorter first on a tie.
int compare_paths(const uint8_t* a, size_t alen, const uint8_t* b, size_t blen) {
  int c = std::memcmp(a, b, alen < blen ? alen : blen);
  if (c != 0) return c;
  return alen < blen ? -1 : alen > blen ? 1 : 0;
}

bool valid_mode(uint32_t mode) {
  uint32_t type = mode & 0170000;
  return type == 0100000 || type == 0120000 || type == 0160000;
}

}  // namespace

size_t index_path_bound(size_t end, uint32_t count) {
  size_t fixed = kHeader + kEntryFixed * size_t{count};
  return end > fixed ? end - fixed : 0;
}

namespace {

std::string entry_name(uint32_t i) { return "entry " + std::to_string(i); }

// The path already read before this entry (v4 paths are stored against it).
struct PrevPath {
  size_t start = 0, len = 0;
  uint8_t stage = 0;
};

// A version 4 path at p: the bytes to strip from the previous path (an offset varint), then
// the new suffix and its NUL. Copies it to out->paths at `start`; returns its length and sets
// *next past it, or returns SIZE_MAX when the paths buffer is too small.
size_t read_v4_path(const uint8_t* data, size_t p, size_t end, size_t field_len, uint32_t i,
                    const PrevPath& prev, size_t start, IndexEntries* out, size_t* next) {
  if (p >= end) corrupt(entry_name(i) + " runs past the end of the file");
  uint8_t c = data[p++];
  uint64_t strip = c & 0x7f;
  while (c & 0x80) {
    if (p >= end || strip > prev.len) break;
    c = data[p++];
    strip = (strip + 1) * 128 + (c & 0x7f);
  }
  if (strip > prev.len) corrupt(entry_name(i) + " strips more than the previous path holds");
  if (c & 0x80) corrupt(entry_name(i) + " runs past the end of the file");
  size_t same = prev.len - static_cast<size_t>(strip);
  const void* nul = std::memchr(data + p, 0, end - p);
  if (nul == nullptr) corrupt("the path of " + entry_name(i) + " has no end");
  size_t suffix = static_cast<const uint8_t*>(nul) - (data + p);
  if (field_len == kNameMask ? same + suffix < kNameMask : same + suffix != field_len)
    corrupt(entry_name(i) + "'s name length field is wrong");
  size_t len = same + suffix;
  if (out->paths_cap - start < len + 1) return SIZE_MAX;
  std::memmove(out->paths + start, out->paths + prev.start, same);
  std::memcpy(out->paths + start + same, data + p, suffix);
  *next = p + suffix + 1;
  return len;
}

// A version 2/3 path at p (the entry began at `pos`): its name, then 1-8 NULs padding the
// entry to a multiple of 8 bytes. Copies it to out->paths at `start`; returns its length and
// sets *next past the padding.
size_t read_padded_path(const uint8_t* data, size_t pos, size_t p, size_t end, size_t len,
                        uint32_t i, size_t start, IndexEntries* out, size_t* next) {
  if (p >= end) corrupt("the path of " + entry_name(i) + " runs past the end of the file");
  if (len == kNameMask) {
    const void* nul = std::memchr(data + p, 0, end - p);
    if (nul == nullptr) corrupt("the path of " + entry_name(i) + " has no end");
    len = static_cast<const uint8_t*>(nul) - (data + p);
    if (len < kNameMask) corrupt(entry_name(i) + "'s name length field is wrong");
  } else if (end - p <= len) {
    corrupt("the path of " + entry_name(i) + " runs past the end of the file");
  } else if (data[p + len] != 0) {
    corrupt(entry_name(i) + "'s name length field is wrong");
  } else if (std::memchr(data + p, 0, len) != nullptr) {
    corrupt("the path of " + entry_name(i) + " contains a NUL byte");
  }
  *next = pos + ((p - pos + len + 8) & ~size_t{7});
  if (*next > end) corrupt(entry_name(i) + " runs past the end of the file");
  if (out->paths_cap - start < len + 1) corrupt(entry_name(i) + "'s path does not fit the file");
  std::memcpy(out->paths + start, data + p, len);
  return len;
}

// Entry i's own problem, if any (kept as data, like the order's below: a split index's own
// entries break these rules, and its reader decides): an empty path, a bad mode, a malformed
// sparse directory entry.
std::string shape_problem(const IndexEntries& out, uint32_t i, size_t start, size_t len,
                          uint32_t mode, uint8_t stage) {
  if (len == 0) return entry_name(i) + " has an empty path";
  if ((mode & 0170000) == 0040000) {
    // A sparse directory entry (gitformat-index, "Sparse Directory Entries"): exactly
    // mode 040000, its path with a final '/', skip-worktree, merged.
    if (mode != 0040000) return entry_name(i) + " is a directory with an invalid mode";
    if (out.paths[start + len - 1] != '/')
      return entry_name(i) + " is a directory whose path does not end in '/'";
    if ((out.ext_flags[i] & kSkipWorktree) == 0)
      return entry_name(i) + " is a directory without the skip-worktree bit";
    if (stage != 0) return entry_name(i) + " is a directory at stage " + std::to_string(stage);
  } else if (!valid_mode(mode)) {
    return entry_name(i) + " has an invalid mode";
  }
  return "";
}

// Entry i after entry i-1: sorted by path, and one path's stages in order, none merged.
std::string order_problem(const IndexEntries& out, uint32_t i, size_t start, size_t len,
                          uint8_t stage, const PrevPath& prev) {
  int cmp = compare_paths(out.paths + prev.start, prev.len, out.paths + start, len);
  if (cmp > 0)
    return "entries " + std::to_string(i - 1) + " and " + std::to_string(i) +
           " are not sorted by path";
  if (cmp == 0 && (prev.stage == 0 || stage <= prev.stage))
    return "entries " + std::to_string(i - 1) + " and " + std::to_string(i) +
           " have the same path and " +
           (prev.stage == 0 || stage == 0 ? "a merged stage" : "unordered stages");
  return "";
}

}  // namespace

bool parse_index_entries(const uint8_t* data, size_t end, uint32_t version, uint32_t count,
                         IndexEntries* out) {
  size_t pos = kHeader;
  PrevPath prev;
  for (uint32_t i = 0; i < count; i++) {
    if (pos > end || end - pos < kEntryFixed)
      corrupt(entry_name(i) + " runs past the end of the file");
    out->offsets[i] = static_cast<uint32_t>(pos);
    const uint8_t* e = data + pos;
    uint32_t* stats = out->stats + size_t{i} * kStatWords;
    for (size_t w = 0; w < kStatWords; w++) stats[w] = be32(e + 4 * w);
    uint32_t mode = stats[6];
    out->modes[i] = mode;
    std::memcpy(out->oids + size_t{i} * 20, e + 40, 20);
    uint16_t flags = be16(e + 60);
    uint8_t stage = static_cast<uint8_t>((flags >> 12) & 3);
    out->stages[i] = stage;
    if (stage != 0) out->unmerged = true;
    if (flags & kAssumeValid) out->assume_valid[i] = 1;
    size_t p = pos + kEntryFixed;
    if (flags & kExtended) {
      if (version == 2) corrupt(entry_name(i) + " has extended flags in a version 2 index");
      if (end - p < 2) corrupt(entry_name(i) + " runs past the end of the file");
      uint16_t ext = be16(data + p);
      if (ext & ~kKnownExtFlags) corrupt(entry_name(i) + " has unknown extended flags");
      out->ext_flags[i] = ext;
      p += 2;
    }
    size_t start = out->paths_len;
    out->starts[i] = static_cast<uint32_t>(start);
    size_t next = 0;
    size_t len = version == 4
                     ? read_v4_path(data, p, end, flags & kNameMask, i, prev, start, out, &next)
                     : read_padded_path(data, pos, p, end, flags & kNameMask, i, start, out, &next);
    if (len == SIZE_MAX) return false;
    pos = next;
    out->paths[start + len] = 0;
    out->paths_len = start + len + 1;
    if (out->problem.empty()) {
      out->problem = shape_problem(*out, i, start, len, mode, stage);
      if (out->problem.empty() && mode == 0040000) {
        if (out->sparse_dir < 0) out->sparse_dir = static_cast<long>(i);
        out->sparse_dirs++;
      }
      if (out->problem.empty() && i > 0)
        out->problem = order_problem(*out, i, start, len, stage, prev);
    }
    prev = PrevPath{start, len, stage};
  }
  out->starts[count] = static_cast<uint32_t>(out->paths_len);
  out->end_of_entries = pos;
  return true;
}

}  // namespace pc
