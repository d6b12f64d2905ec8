// The pack reader end to end (native/odb/odb.cc over pack_index, pack, inflate, delta and the
// delta-base cache): the input is an index and its pack, "<u32 LE index length><.idx><.pack>".
// Every object the index lists is read three ways, whole (read), borrowed (read_view) and,
// for whole objects, streamed; info() gives its type and size without inflating. Where two of
// them succeed they must agree byte for byte.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/common.h"
#include "harness.h"
#include "odb/odb.h"
#include "odb/pack_index.h"

namespace {
constexpr uint32_t kMaxReads = 256;
constexpr size_t kCacheBudget = 64 * 1024;  // small, so that bases are evicted and re-read
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  size_t idx_len = std::min<size_t>(fz::le32(data), size - 4);
  const std::string objects = fz::scratch_dir() + "/objects";
  fz::make_dirs(objects + "/pack");
  const std::string base = objects + "/pack/pack-fuzz";
  fz::write_file(base + ".idx", data + 4, idx_len);
  fz::write_file(base + ".pack", data + 4 + idx_len, size - 4 - idx_len);

  std::vector<std::string> oids;
  try {
    pc::PackIndex idx;
    idx.open(base + ".idx");
    for (uint32_t i = 0; i < std::min(idx.count(), kMaxReads); i++)
      oids.emplace_back(reinterpret_cast<const char*>(idx.oid_at(i)), 20);
  } catch (const pc::Error&) {
    return 0;
  }
  std::unique_ptr<pc::Odb> odb;
  try {
    odb = std::make_unique<pc::Odb>(std::vector<std::string>{objects},
                                     std::make_shared<pc::BaseCache>(kCacheBudget));
  } catch (const pc::Error&) {
    return 0;
  }
  for (const std::string& s : oids) {
    const uint8_t* oid = reinterpret_cast<const uint8_t*>(s.data());
    pc::Object whole;
    bool have_whole = false;
    try {
      whole = odb->read(oid);
      have_whole = true;
    } catch (const pc::Error&) {
    }
    try {
      pc::ObjectView view = odb->read_view(oid);
      if (have_whole) {
        FZ_CHECK(view.type == whole.type && view.size == whole.bytes->size);
        FZ_CHECK(view.size == 0 || std::memcmp(view.data, whole.bytes->data.get(), view.size) == 0);
      }
    } catch (const pc::Error&) {
    }
    try {
      pc::Location loc;
      int type = 0;
      uint64_t osize = 0;
      if (odb->info(oid, &loc, &type, &osize) && have_whole) {
        FZ_CHECK(osize == whole.bytes->size);
        FZ_CHECK(type == whole.type || type == pc::kOfsDelta || type == pc::kRefDelta);
      }
    } catch (const pc::Error&) {
    }
    try {
      std::unique_ptr<pc::ObjectStream> stream = odb->stream(oid);
      if (stream) {
        std::string got;
        uint8_t buf[4096];
        for (;;) {
          size_t n = stream->read(buf, 1 + got.size() % sizeof buf);
          if (n == 0 || (!have_whole && got.size() > (1u << 24))) break;
          got.append(reinterpret_cast<const char*>(buf), n);
        }
        if (have_whole) {
          FZ_CHECK(stream->type == whole.type && stream->size == whole.bytes->size);
          FZ_CHECK(got.size() == whole.bytes->size);
          FZ_CHECK(got.empty() || std::memcmp(got.data(), whole.bytes->data.get(), got.size()) == 0);
        }
      }
    } catch (const pc::Error&) {
    }
  }
  return 0;
}
