// git's delta format: source size, target size, then copy (from base) and insert (literal) ops.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/common.h"

namespace pc {

// Reads the target size from the start of delta data. Returns false if the header is invalid.
bool delta_target_size(const uint8_t* delta, size_t len, uint64_t* target);

// The size of the result, proven by walking the ops without writing: the source size must be
// base_len and the ops must stay inside the base and add up to exactly the declared target.
// Call it before allocating the result, so a header that claims gigabytes costs nothing.
// Throws Error(CorruptObject) otherwise.
size_t delta_result_size(size_t base_len, const uint8_t* delta, size_t len);

// Applies delta to base, writing exactly out_len bytes (the target size in the delta header)
// to out. Throws Error(CorruptObject) on any op that leaves its bounds, a source size that
// differs from base_len, or a result that is not exactly out_len bytes.
void apply_delta_into(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len,
                      uint8_t* out, size_t out_len);

// delta_result_size, then apply_delta_into a new buffer of that size.
BytesPtr apply_delta(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len);

}  // namespace pc
