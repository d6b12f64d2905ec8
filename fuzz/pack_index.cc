// .idx lookup (native/odb/pack_index.cc): the input is a pack index file. Opening validates it; then
// every entry's offset is read, every id is looked up whole and by a prefix of 1 to 40 digits.
// When the ids are sorted and the fan-out table agrees with them, as in any index git writes,
// each lookup must find its entry.
#include <algorithm>
#include <cstring>

#include "base/common.h"
#include "harness.h"
#include "odb/pack_index.h"

namespace {
// Sorted ids, each in the fan-out bucket of its first byte (read from the file by the harness).
bool well_formed(const uint8_t* data, const pc::PackIndex& idx) {
  uint32_t n = idx.count();
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t* oid = idx.oid_at(i);
    if (i > 0 && std::memcmp(idx.oid_at(i - 1), oid, 20) >= 0) return false;
    uint32_t lo = oid[0] == 0 ? 0 : fz::be32(data + 8 + 4 * (oid[0] - 1));
    uint32_t hi = fz::be32(data + 8 + 4 * oid[0]);
    if (i < lo || i >= hi) return false;
  }
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fz::scratch_dir() + "/fuzz.idx";
  fz::write_file(path, data, size);
  pc::PackIndex idx;
  try {
    idx.open(path);
  } catch (const pc::Error&) {
    return 0;
  }
  const bool sorted = well_formed(data, idx);
  const uint32_t n = std::min<uint32_t>(idx.count(), 4096);
  for (uint32_t i = 0; i < n; i++) {
    uint8_t oid[20];
    std::memcpy(oid, idx.oid_at(i), 20);
    uint64_t at = 0, found_at = 0;
    bool offset_ok = true;
    try {
      at = idx.offset_at(i);
    } catch (const pc::Error&) {
      offset_ok = false;
    }
    try {
      bool found = idx.find(oid, &found_at);
      if (sorted) FZ_CHECK(found && (!offset_ok || found_at == at));
    } catch (const pc::Error&) {
      if (sorted) FZ_CHECK(!offset_ok);
    }
    pc::OidPrefix prefix;
    prefix.nibbles = 1 + i % 40;
    std::memcpy(prefix.bytes, oid, (prefix.nibbles + 1) / 2);
    if (prefix.nibbles % 2 == 1) prefix.bytes[prefix.nibbles / 2] &= 0xf0;
    uint8_t out[20];
    int matches = idx.find_prefix(prefix, out);
    if (sorted) FZ_CHECK(matches >= 1 && pc::compare_prefix(out, prefix) == 0);
  }
  // An id taken from the input itself, usually absent.
  if (size >= 20) {
    uint64_t off = 0;
    try {
      idx.find(data + size - 20, &off);
    } catch (const pc::Error&) {
    }
  }
  return 0;
}
