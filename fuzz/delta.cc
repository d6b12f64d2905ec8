// Delta application (native/odb/delta.cc): the input is "<u16 LE base length><base><delta>".
// The delta is applied into a new buffer (apply_delta) and, when its header is readable, into
// a buffer of exactly the declared size (apply_delta_into); both must agree.
#include <algorithm>
#include <cstring>
#include <memory>

#include "base/common.h"
#include "odb/delta.h"
#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  size_t base_len = std::min<size_t>(data[0] | (data[1] << 8), size - 2);
  // Exactly sized heap copies, so that a read one byte past either is reported.
  std::unique_ptr<uint8_t[]> base(new uint8_t[base_len]);
  std::memcpy(base.get(), data + 2, base_len);
  size_t delta_len = size - 2 - base_len;
  std::unique_ptr<uint8_t[]> delta(new uint8_t[delta_len]);
  std::memcpy(delta.get(), data + 2 + base_len, delta_len);

  pc::BytesPtr whole;
  try {
    whole = pc::apply_delta(base.get(), base_len, delta.get(), delta_len);
  } catch (const pc::Error&) {
  }
  uint64_t target = 0;
  if (!pc::delta_target_size(delta.get(), delta_len, &target)) {
    FZ_CHECK(!whole);
    return 0;
  }
  if (whole) FZ_CHECK(whole->size == target);
  if (target > (1u << 20)) return 0;
  std::unique_ptr<uint8_t[]> out(new uint8_t[target]);
  try {
    pc::apply_delta_into(base.get(), base_len, delta.get(), delta_len, out.get(), target);
    FZ_CHECK(whole && (target == 0 || std::memcmp(out.get(), whole->data.get(), target) == 0));
  } catch (const pc::Error&) {
    FZ_CHECK(!whole);
  }
  return 0;
}
