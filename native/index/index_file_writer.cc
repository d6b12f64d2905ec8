#include "index/index_file_writer.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "base/memory.h"
#include "base/write_all.h"

namespace pc {

namespace {

// Entries per part: ~1 MB of a typical index, in the caches while it is hashed and written.
constexpr size_t kPartEntries = 8192;

struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// Each part of the whole file in turn into `buf`, with the room for the checksum (20 zero
// bytes) at the end of the last, then `part(last)`, which reads `buf` and returns false to
// stop there.
template <typename Part>
bool serialize_parts(const IndexWrite& in, std::string* buf, Part part) {
  IndexWrite each = in;
  const size_t count = in.entries.count;
  for (size_t from = 0;;) {
    each.from = from;
    each.to = count - from > kPartEntries ? from + kPartEntries : count;
    buf->clear();
    append_index(each, buf);
    const bool last = each.to == count;
    if (!part(last)) return false;
    if (last) return true;
    from = each.to;
  }
}

}  // namespace

int write_index_file(const IndexWrite& in, int fd) {
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha1(), nullptr) != 1) return EIO;
  std::string buf;
  int error = 0;
  serialize_parts(in, &buf, [&](bool last) {
    // The last part: hashed up to the checksum's room, which then gets it.
    const size_t hashed = last ? buf.size() - 20 : buf.size();
    if (EVP_DigestUpdate(ctx.get(), buf.data(), hashed) != 1) return (error = EIO), false;
    if (last) {
      unsigned char md[EVP_MAX_MD_SIZE];
      unsigned int len = 0;
      if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1 || len != 20) return (error = EIO), false;
      std::memcpy(&buf[hashed], md, 20);
    }
    if (!write_all(fd, reinterpret_cast<const uint8_t*>(buf.data()), buf.size()))
      return (error = errno), false;
    return true;
  });
  return error;
}

bool index_file_equals(const IndexWrite& in, const uint8_t* file, size_t len,
                       bool drop_compared) {
  if (len < 20) return false;
  static const uint8_t kZeros[20] = {};
  if (std::memcmp(file + len - 20, kZeros, 20) == 0) return false;
  std::string buf;
  size_t at = 0;
  return serialize_parts(in, &buf, [&](bool last) {
           // The checksum's room is not compared (see the header).
           const size_t n = last ? buf.size() - 20 : buf.size();
           if (n > len - 20 - at || std::memcmp(file + at, buf.data(), n) != 0) return false;
           if (drop_compared) drop_pages(file + at, n);
           at += n;
           return true;
         }) &&
         at == len - 20;
}

}  // namespace pc
