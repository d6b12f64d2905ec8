#include "base/common.h"

#include <sys/mman.h>

#include <new>

namespace pc {

const char* code_name(Code code) {
  switch (code) {
    case Code::CorruptPack: return "ERR_CORRUPT_PACK";
    case Code::CorruptObject: return "ERR_CORRUPT_OBJECT";
    case Code::MissingObject: return "ERR_MISSING_OBJECT";
    case Code::Io: return "ERR_IO";
    case Code::UnsafePath: return "ERR_UNSAFE_PATH";
    case Code::Unsupported: return "ERR_UNSUPPORTED";
    case Code::TooLarge: return "ERR_TOO_LARGE";
    case Code::CorruptIndex: return "ERR_CORRUPT_INDEX";
    case Code::Internal: return "ERR_INTERNAL";
    case Code::Aborted: return "ERR_ABORTED";
  }
  return "ERR_INTERNAL";
}

const char* type_name(int type) {
  switch (type) {
    case kCommit: return "commit";
    case kTree: return "tree";
    case kBlob: return "blob";
    case kTag: return "tag";
    case kOfsDelta: return "ofs-delta";
    case kRefDelta: return "ref-delta";
    default: return "unknown";
  }
}

std::string to_hex(const uint8_t* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

namespace {
constexpr size_t kMapFrom = 1u << 20;  // blocks this large are mapped (glibc maps from 128 KiB)
}

void BufferRelease::operator()(uint8_t* p) const {
  if (p == nullptr) return;
  if (mapped != 0)
    munmap(p, mapped);
  else
    delete[] p;
}

Buffer allocate_buffer(size_t n) {
  if (n == 0) return Buffer();
  if (n < kMapFrom) return Buffer(new uint8_t[n]);
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return Buffer(static_cast<uint8_t*>(p), BufferRelease{n});
}

BytesPtr alloc_bytes(size_t n) {
  try {
    return std::make_shared<Bytes>(n);
  } catch (const std::bad_alloc&) {
    throw Error(Code::TooLarge, "cannot allocate " + std::to_string(n) + " bytes");
  }
}

}  // namespace pc
