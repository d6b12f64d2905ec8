// The inflate wrapper (native/odb/inflate.cc): the input is "<u32 LE expected size><zlib stream>".
// The one-shot decoder (libdeflate when built with it, else zlib), the header-prefix reader and
// the incremental stream (zlib) all read the same bytes, and must agree: a stream that the
// incremental reader inflates to exactly N bytes and ends is accepted whole for N bytes, with
// the same bytes, and one the one-shot decoder accepts streams to the same bytes.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "harness.h"
#include "odb/inflate.h"

namespace {
constexpr size_t kMaxOut = 1 << 20;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  size_t want = fz::le32(data) % (kMaxOut + 1);
  size_t avail = size - 4;
  std::unique_ptr<uint8_t[]> src(new uint8_t[avail]);  // exactly sized: overreads are reported
  std::memcpy(src.get(), data + 4, avail);

  static pc::Inflater inflater;  // reused across inputs, as each thread's reader reuses its own
  std::unique_ptr<uint8_t[]> exact(new uint8_t[want]);
  bool exact_ok = inflater.inflate_exact(src.get(), avail, exact.get(), want);

  uint8_t prefix[64];
  size_t cap = want % (sizeof prefix + 1);
  long got = inflater.inflate_prefix(src.get(), avail, prefix, cap);
  FZ_CHECK(got <= static_cast<long>(cap));
  if (exact_ok) FZ_CHECK(got == static_cast<long>(std::min(cap, want)) &&
                         std::memcmp(prefix, exact.get(), static_cast<size_t>(got)) == 0);

  pc::InflateStream stream(src.get(), avail);
  std::string streamed;
  bool stream_ok = true;
  uint8_t buf[4096];
  while (!stream.finished() && streamed.size() <= kMaxOut) {
    long n = stream.read(buf, 1 + (streamed.size() * 7 + want) % sizeof buf);
    if (n < 0) {
      stream_ok = false;
      break;
    }
    if (n == 0 && !stream.finished()) break;
    streamed.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
  }
  // What zlib made of the stream, visible to the fuzzer: how far it got, and how it ended.
  fz::signal(streamed.size());
  fz::signal(uint64_t{1} << ((stream_ok ? 1 : 0) | (stream.finished() ? 2 : 0) |
                             (exact_ok ? 4 : 0) | (got >= 0 ? 8 : 0)));
  bool stream_whole = stream_ok && stream.finished() && streamed.size() == want;
  if (exact_ok) FZ_CHECK(stream_whole && std::memcmp(streamed.data(), exact.get(), want) == 0);
  if (stream_whole) FZ_CHECK(exact_ok);
  return 0;
}
