#include "worktree/blob_hash.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "base/fd.h"
#include "base/slices.h"

namespace pc {

namespace {

constexpr size_t kChunk = 1 << 20;
constexpr size_t kFilesPerThread = 64;  // hashing a file costs tens of microseconds

struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_MD_CTX, CtxFree>;

bool same_blob(const Worktree& wt, const char* rel, const uint8_t* want, EVP_MD_CTX* ctx,
               std::string* buf) {
  int raw = wt.open(rel, O_RDONLY, 0);
  if (raw < 0) return false;
  Fd fd(raw);
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::string header = "blob " + std::to_string(size);
  header.push_back('\0');
  if (EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx, header.data(), header.size()) != 1)
    return false;
  uint64_t total = 0;
  buf->resize(static_cast<size_t>(std::min<uint64_t>(std::max<uint64_t>(size, 1), kChunk)));
  for (;;) {
    ssize_t n = read(fd.get(), buf->data(), buf->size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > size) return false;  // grew while read: not what was stat'ed
    if (EVP_DigestUpdate(ctx, buf->data(), static_cast<size_t>(n)) != 1) return false;
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (total != size || EVP_DigestFinal_ex(ctx, md, &len) != 1 || len != 20) return false;
  return std::memcmp(md, want, 20) == 0;
}

void hash_range(const Worktree& wt, const std::vector<const char*>& paths, const uint8_t* oids,
                size_t from, size_t to, uint8_t* same) {
  Ctx ctx(EVP_MD_CTX_new());
  std::string buf;
  for (size_t i = from; i < to; i++) {
    same[i] = ctx && same_blob(wt, paths[i], oids + 20 * i, ctx.get(), &buf) ? 1 : 0;
  }
}

}  // namespace

void same_blobs(const Worktree& wt, const std::vector<const char*>& paths, const uint8_t* oids,
                size_t threads, uint8_t* same) {
  const size_t n = paths.size();
  threads = std::min<size_t>(std::max<size_t>(threads, 1), n / kFilesPerThread + 1);
  run_in_slices(n, threads,
                [&](size_t from, size_t to) { hash_range(wt, paths, oids, from, to, same); });
}

}  // namespace pc
