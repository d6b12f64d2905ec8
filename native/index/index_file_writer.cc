#include "index/index_file_writer.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "base/write_all.h"

namespace pc {

namespace {

// Entries per part: ~1 MB of a typical index, in the caches while it is hashed and written.
constexpr size_t kPartEntries = 8192;

struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

}  // namespace

int write_index_file(const IndexWrite& in, int fd) {
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha1(), nullptr) != 1) return EIO;
  IndexWrite part = in;
  const size_t count = in.entries.count;
  std::string buf;
  for (size_t from = 0;;) {
    part.from = from;
    part.to = count - from > kPartEntries ? from + kPartEntries : count;
    buf.clear();
    append_index(part, &buf);
    const bool last = part.to == count;
    // The last part ends with the checksum's room (20 zero bytes): hashed up to it, then filled.
    const size_t hashed = last ? buf.size() - 20 : buf.size();
    if (EVP_DigestUpdate(ctx.get(), buf.data(), hashed) != 1) return EIO;
    if (last) {
      unsigned char md[EVP_MAX_MD_SIZE];
      unsigned int len = 0;
      if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1 || len != 20) return EIO;
      std::memcpy(&buf[hashed], md, 20);
    }
    if (!write_all(fd, reinterpret_cast<const uint8_t*>(buf.data()), buf.size())) return errno;
    if (last) return 0;
    from = part.to;
  }
}

}  // namespace pc
