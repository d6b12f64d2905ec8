#include "delta.h"

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
}  // namespace

bool delta_target_size(const uint8_t* delta, size_t len, uint64_t* target) {
  size_t pos = 0;
  uint64_t src = 0;
  return read_varint(delta, len, &pos, &src) && read_varint(delta, len, &pos, target);
}

BytesPtr apply_delta(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len) {
  uint64_t target = 0;
  if (!delta_target_size(delta, len, &target)) bad("delta header is truncated");
  if (target > SIZE_MAX) bad("delta result too large");
  BytesPtr out = alloc_bytes(static_cast<size_t>(target));
  apply_delta_into(base, base_len, delta, len, out->data.get(), out->size);
  return out;
}

void apply_delta_into(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len,
                      uint8_t* dst, size_t cap) {
  size_t pos = 0;
  uint64_t src_size = 0, dst_size = 0;
  if (!read_varint(delta, len, &pos, &src_size) || !read_varint(delta, len, &pos, &dst_size))
    bad("delta header is truncated");
  if (src_size != base_len) bad("delta does not apply to its base (size mismatch)");
  if (dst_size != cap) bad("delta target size differs from the space given");
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
      std::memcpy(dst + written, base + off, static_cast<size_t>(size));
      written += static_cast<size_t>(size);
    } else if (cmd != 0) {
      if (cmd > len - pos) bad("delta insert op is truncated");
      if (cmd > cap - written) bad("delta writes past its declared size");
      std::memcpy(dst + written, delta + pos, cmd);
      pos += cmd;
      written += cmd;
    } else {
      bad("delta has a reserved op");
    }
  }
  if (written != cap) bad("delta result is shorter than declared");
}

}  // namespace pc
