// Pack entry headers (native/odb/pack.cc): the input is a packfile. The harness writes an index that
// matches its header (object count, trailing checksum) so that the pack opens, then walks the
// entries as index-pack does (a header, then its zlib stream skipped with zlib to find the next
// one), parses a header at each of the first 64 offsets as well, follows offset-delta bases, and
// touches the first and last byte of the data each entry points at (ASan reports any read
// outside the mapping).
#include <algorithm>
#include <cstring>
#include <vector>

#include <zlib.h>

#include "base/common.h"
#include "harness.h"
#include "odb/pack.h"

namespace {
constexpr uint32_t kMaxObjects = 4096;

void put32(std::vector<uint8_t>* out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<uint8_t>(v >> s));
}

// A version 2 index for `count` objects (ids and offsets zero) naming the pack's checksum.
std::vector<uint8_t> index_for(const uint8_t* pack, size_t size, uint32_t count) {
  std::vector<uint8_t> idx = {0xff, 't', 'O', 'c'};
  put32(&idx, 2);
  for (int i = 0; i < 256; i++) put32(&idx, count);
  idx.resize(idx.size() + size_t{count} * (20 + 4 + 4), 0);
  idx.insert(idx.end(), pack + size - 20, pack + size);
  idx.resize(idx.size() + 20, 0);
  return idx;
}

volatile uint8_t sink;

// The length of the zlib stream at p (at most avail bytes), or 0 if it does not end cleanly.
size_t stream_length(const uint8_t* p, size_t avail) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return 0;
  static uint8_t discard[1 << 16];
  zs.next_in = const_cast<Bytef*>(p);
  zs.avail_in = static_cast<uInt>(avail);
  int ret = Z_OK;
  while (ret == Z_OK) {
    zs.next_out = discard;
    zs.avail_out = sizeof discard;
    ret = inflate(&zs, Z_NO_FLUSH);
  }
  size_t used = ret == Z_STREAM_END ? zs.total_in : 0;
  inflateEnd(&zs);
  return used;
}

// Parses the entry at `at` and its offset-delta bases. Returns the entry's data offset, or 0.
uint64_t visit(pc::Pack& pack, uint64_t at, size_t size) {
  uint64_t first = 0;
  try {
    for (int depth = 0; depth < 8; depth++) {
      pc::PackEntry e = pack.entry_at(at);
      size_t avail = 0;
      const uint8_t* p = pack.data_at(e.data_off, &avail);
      FZ_CHECK(avail > 0 && e.data_off > at && e.data_off + avail <= size - 20);
      sink = p[0];
      sink = p[avail - 1];
      if (depth == 0) first = e.data_off;
      if (e.type == pc::kRefDelta) sink = e.base_oid[19];
      if (e.type != pc::kOfsDelta) break;
      FZ_CHECK(e.base_off < at);
      at = e.base_off;
    }
  } catch (const pc::Error&) {
  }
  return first;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 20) return 0;
  uint32_t count = size >= 12 ? fz::be32(data + 8) : 0;
  if (count > kMaxObjects) return 0;
  const std::string base = fz::scratch_dir() + "/pack-fuzz";
  std::vector<uint8_t> idx = index_for(data, size, count);
  fz::write_file(base + ".idx", idx.data(), idx.size());
  fz::write_file(base + ".pack", data, size);
  pc::Pack pack(base + ".idx");
  try {
    size_t avail = 0;
    pack.data_at(12, &avail);  // opens the pack: a header it refuses ends the run here
  } catch (const pc::Error&) {
    return 0;
  }
  for (uint64_t off = 0; off < std::min<uint64_t>(size, 64); off++) visit(pack, off, size);
  uint64_t at = 12;
  for (uint32_t i = 0; i < count; i++) {
    uint64_t data_off = visit(pack, at, size);
    if (data_off == 0) break;
    size_t used = stream_length(data + data_off, size - 20 - data_off);
    if (used == 0) break;
    at = data_off + used;
  }
  return 0;
}
