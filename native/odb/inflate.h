// zlib-stream decompression: libdeflate's one-shot decoder when built with it (pack objects
// carry their inflated size, which is what it needs), zlib otherwise and for streaming.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>

namespace pc {

const char* inflater_name();

// One per thread of use; owns the decoder state so nothing is shared between workers.
class Inflater {
 public:
  Inflater();
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates the zlib stream at src (at most avail bytes readable) into exactly out_len bytes.
  // Returns false when the stream is corrupt or does not inflate to exactly out_len bytes.
  // When consumed is given, it receives the compressed bytes the stream took.
  bool inflate_exact(const uint8_t* src, size_t avail, uint8_t* out, size_t out_len,
                     size_t* consumed = nullptr);

  // Inflates at most cap bytes from the start of a zlib stream (for headers). Returns the
  // number of bytes produced, or -1 if the stream is corrupt before that. Reuses one zlib
  // state: setting one up per call costs more than the few bytes it inflates.
  long inflate_prefix(const uint8_t* src, size_t avail, uint8_t* out, size_t cap);

 private:
#ifdef PCHECKOUT_LIBDEFLATE
  void* libdeflate_ = nullptr;  // its decompressor
#endif
  z_stream prefix_zs_{};
  bool prefix_ready_ = false;
};

// Incremental zlib inflation from a memory region, for objects too large to hold whole.
class InflateStream {
 public:
  InflateStream(const uint8_t* src, size_t avail);
  ~InflateStream();
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;

  // Produces up to cap bytes. Returns the count (0 at the end of the stream) or -1 on corruption.
  long read(uint8_t* out, size_t cap);
  bool finished() const { return finished_; }
  // The compressed bytes taken so far.
  uint64_t consumed() const { return zs_.total_in; }

 private:
  z_stream zs_{};
  bool ok_ = false;
  bool finished_ = false;
  const uint8_t* src_;
  size_t remaining_;
};

// deflate cannot expand input by more than ~1032x; a header that claims more is corrupt, and
// checking keeps a hostile store from asking for a huge allocation.
inline bool plausible_size(uint64_t size, size_t avail) {
  return size <= uint64_t{avail} * 1100 + 64;
}

}  // namespace pc
