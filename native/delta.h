// git's delta format: source size, target size, then copy (from base) and insert (literal) ops.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common.h"

namespace pc {

// Reads the target size from the start of delta data. Returns false if the header is invalid.
bool delta_target_size(const uint8_t* delta, size_t len, uint64_t* target);

// Applies delta to base, writing exactly out_len bytes (the target size in the delta header)
// to out. Throws Error(CorruptObject) on any op that leaves its bounds, a source size that
// differs from base_len, or a result that is not exactly out_len bytes.
void apply_delta_into(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len,
                      uint8_t* out, size_t out_len);

// The same into a new buffer of the declared size.
BytesPtr apply_delta(const uint8_t* base, size_t base_len, const uint8_t* delta, size_t len);

}  // namespace pc
