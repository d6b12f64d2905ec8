// The index entry reader (native/index/index_entries.cc): the input is an index file. The harness does
// what src/index/read.ts and the binding do around the parser (version 2-4, an entry count the
// file can hold, arrays of exactly the entry count, the path buffer grown for version 4), and
// checks what the parser hands back: path starts in order, each path ending in its NUL within
// the bytes used, the extensions starting inside the file.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/common.h"
#include "harness.h"
#include "index/index_entries.h"
#include "worktree/stat.h"

namespace {
constexpr size_t kHeader = 12, kHash = 20, kMinEntry = 64;  // as in src/index/read.ts
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kHeader + kHash || std::memcmp(data, "DIRC", 4) != 0) return 0;
  uint32_t version = fz::be32(data + 4);
  if (version < 2 || version > 4) return 0;
  size_t end = size - kHash;
  uint32_t count = fz::be32(data + 8);
  if (count > (end - kHeader) / kMinEntry) return 0;
  // An exactly sized copy of the file, so that a read past its end is reported.
  std::vector<uint8_t> file(data, data + size);
  size_t n = count;
  std::vector<uint8_t> oids(n * 20), stages(n), assume_valid(n);
  std::vector<uint32_t> modes(n), stats(n * pc::kStatWords), offsets(n), starts(n + 1);
  std::vector<uint16_t> ext_flags(n);
  size_t cap = pc::index_path_bound(end, count);
  if (version == 4) cap = std::max<size_t>(4096, 4 * cap);
  for (;;) {
    std::vector<uint8_t> paths(cap);
    pc::IndexEntries e;
    e.oids = oids.data();
    e.modes = modes.data();
    e.stats = stats.data();
    e.stages = stages.data();
    e.ext_flags = ext_flags.data();
    e.assume_valid = assume_valid.data();
    e.offsets = offsets.data();
    e.starts = starts.data();
    e.paths = paths.data();
    e.paths_cap = cap;
    bool fit;
    try {
      fit = pc::parse_index_entries(file.data(), end, version, count, &e);
    } catch (const pc::Error&) {
      return 0;
    }
    if (!fit) {
      FZ_CHECK(version == 4);
      cap *= 2;
      continue;
    }
    FZ_CHECK(e.paths_len <= cap && starts[n] == e.paths_len);
    FZ_CHECK(e.end_of_entries >= kHeader && e.end_of_entries <= end);
    for (size_t i = 0; i < n; i++) {
      FZ_CHECK(starts[i] < starts[i + 1] && paths[starts[i + 1] - 1] == 0);
      FZ_CHECK(std::memchr(&paths[starts[i]], 0, starts[i + 1] - 1 - starts[i]) == nullptr);
      FZ_CHECK(offsets[i] >= kHeader && offsets[i] < e.end_of_entries);
      FZ_CHECK(i == 0 || offsets[i - 1] < offsets[i]);
    }
    return 0;
  }
}
