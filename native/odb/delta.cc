#include "odb/delta.h"

#include <cstring>

namespace pc {

namespace {
bool read_varint(const uint8_t* p, size_t len, size_t* pos, uint64_t* out) {
  uint64_t v = 0;
  unsigned shift = 0;
  for (;;) {
    if (*pos >= len || shift > 63) return false;
    uint8_t c = p[(*pos)++];
    v |= uint64_t{c & 0x7fu} << shift;
    shift += 7;
    if ((c & 0x80) == 0) break;
  }
  *out = v;
  return true;
}

[[noreturn]] void bad(const char* why) { throw Error(Code::CorruptObject, why); }

// Reads the header, checks the source size, and returns where the ops start.
size_t read_header(size_t base_len, const uint8_t* delta, size_t len, uint64_t* target) {
  size_t pos = 0;
  uint64_t src_size = 0;
  if (!read_varint(delta, len, &pos, &src_size) || !read_varint(delta, len, &pos, target))
    bad("delta header is truncated");
  if (src_size != base_len) bad("delta does not apply to its base (size mismatch)");
  return pos;
}

// Runs the ops from pos: copies into dst when it is given, else only counts. Every op is
// checked against the base, the delta and the cap; returns the bytes produced.
size_t run_ops(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len, size_t pos,
               uint8_t* dst, size_t cap) {
  size_t written = 0;
  while (pos < len) {
    uint8_t cmd = delta[pos++];
    if (cmd & 0x80) {
      uint64_t off = 0, size = 0;
      for (int i = 0; i < 4; i++) {
        if (cmd & (1u << i)) {
          if (pos >= len) bad("delta copy op is truncated");
          off |= uint64_t{delta[pos++]} << (8 * i);
        }
      }
      for (int i = 0; i < 3; i++) {
        if (cmd & (0x10u << i)) {
          if (pos >= len) bad("delta copy op is truncated");
          size |= uint64_t{delta[pos++]} << (8 * i);
        }
      }
      if (size == 0) size = 0x10000;
      if (off > base_len || size > base_len - off) bad("delta copies from outside its base");
      if (size > cap - written) bad("delta writes past its declared size");
      if (dst != nullptr) std::memcpy(dst + written, base + off, static_cast<size_t>(size));
      written += static_cast<size_t>(size);
    } else if (cmd != 0) {
      if (cmd > len - pos) bad("delta insert op is truncated");
      if (cmd > cap - written) bad("delta writes past its declared size");
      if (dst != nullptr) std::memcpy(dst + written, delta + pos, cmd);
      pos += cmd;
      written += cmd;
    } else {
      bad("delta has a reserved op");
    }
  }
  return written;
}
}  // namespace

bool delta_target_size(const uint8_t* delta, size_t len, uint64_t* target) {
  size_t pos = 0;
  uint64_t src = 0;
  return read_varint(delta, len, &pos, &src) && read_varint(delta, len, &pos, target);
}

size_t delta_result_size(size_t base_len, const uint8_t* delta, size_t len) {
  uint64_t target = 0;
  size_t pos = read_header(base_len, delta, len, &target);
  if (target > SIZE_MAX) bad("delta result too large");
  size_t cap = static_cast<size_t>(target);
  if (run_ops(nullptr, base_len, delta, len, pos, nullptr, cap) != cap)
    bad("delta result is shorter than declared");
  return cap;
}

BytesPtr apply_delta(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len) {
  BytesPtr out = alloc_bytes(delta_result_size(base_len, delta, len));
  apply_delta_into(base, base_len, delta, len, out->data.get(), out->size);
  return out;
}

void apply_delta_into(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len,
                      uint8_t* dst, size_t cap) {
  uint64_t target = 0;
  size_t pos = read_header(base_len, delta, len, &target);
  if (target != cap) bad("delta target size differs from the space given");
  if (run_ops(base, base_len, delta, len, pos, dst, cap) != cap)
    bad("delta result is shorter than declared");
}

}  // namespace pc
