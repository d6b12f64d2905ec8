#include "odb/inflate.h"

#include <climits>
#include <cstring>

#ifdef PCHECKOUT_LIBDEFLATE
#include <libdeflate.h>
#endif

namespace pc {

namespace {
// zlib counts in uInt; feed it in slices no larger than this.
constexpr size_t kZChunk = static_cast<size_t>(UINT_MAX);

inline uInt clamp_uint(size_t n) { return static_cast<uInt>(n < kZChunk ? n : kZChunk); }

bool zlib_inflate_exact(const uint8_t* src, size_t avail, uint8_t* out, size_t out_len,
                        size_t* consumed) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return false;
  size_t in_off = 0, out_off = 0;
  uint8_t scratch = 0;  // catches a stream that is longer than out_len
  int ret = Z_OK;
  for (;;) {
    if (zs.avail_in == 0 && in_off < avail) {
      zs.next_in = const_cast<Bytef*>(src + in_off);
      zs.avail_in = clamp_uint(avail - in_off);
      in_off += zs.avail_in;
    }
    bool spare = out_off >= out_len;
    zs.next_out = spare ? &scratch : out + out_off;
    zs.avail_out = spare ? 1 : clamp_uint(out_len - out_off);
    uInt before = zs.avail_out;
    ret = inflate(&zs, Z_NO_FLUSH);
    size_t produced = before - zs.avail_out;
    if (spare && produced > 0) {
      ret = Z_DATA_ERROR;
      break;
    }
    out_off += produced;
    if (ret != Z_OK) break;  // Z_STREAM_END, corruption, or no progress possible
  }
  if (consumed != nullptr) *consumed = in_off - zs.avail_in;
  inflateEnd(&zs);
  return ret == Z_STREAM_END && out_off == out_len;
}
}  // namespace

const char* inflater_name() {
#ifdef PCHECKOUT_LIBDEFLATE
  return "libdeflate";
#else
  return "zlib";
#endif
}

Inflater::Inflater() {
#ifdef PCHECKOUT_LIBDEFLATE
  libdeflate_ = libdeflate_alloc_decompressor();
#endif
}

Inflater::~Inflater() {
  if (prefix_ready_) inflateEnd(&prefix_zs_);
#ifdef PCHECKOUT_LIBDEFLATE
  if (libdeflate_ != nullptr)
    libdeflate_free_decompressor(static_cast<libdeflate_decompressor*>(libdeflate_));
#endif
}

bool Inflater::inflate_exact(const uint8_t* src, size_t avail, uint8_t* out, size_t out_len,
                             size_t* consumed) {
#ifdef PCHECKOUT_LIBDEFLATE
  if (libdeflate_ != nullptr) {
    size_t used_in = 0;
    // A null actual_out makes libdeflate demand exactly out_len bytes; it checks the adler32.
    libdeflate_result r =
        libdeflate_zlib_decompress_ex(static_cast<libdeflate_decompressor*>(libdeflate_), src,
                                      avail, out, out_len, &used_in, nullptr);
    if (consumed != nullptr) *consumed = used_in;
    return r == LIBDEFLATE_SUCCESS;
  }
#endif
  return zlib_inflate_exact(src, avail, out, out_len, consumed);
}

long Inflater::inflate_prefix(const uint8_t* src, size_t avail, uint8_t* out, size_t cap) {
  if (!prefix_ready_) {
    if (inflateInit(&prefix_zs_) != Z_OK) return -1;
    prefix_ready_ = true;
  } else if (inflateReset(&prefix_zs_) != Z_OK) {
    return -1;
  }
  z_stream& zs = prefix_zs_;
  zs.next_in = const_cast<Bytef*>(src);
  zs.avail_in = clamp_uint(avail);
  zs.next_out = out;
  zs.avail_out = clamp_uint(cap);
  int ret = Z_OK;
  while (zs.avail_out > 0) {
    ret = inflate(&zs, Z_SYNC_FLUSH);
    if (ret != Z_OK) break;
  }
  long produced = static_cast<long>(zs.total_out);
  if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) return -1;
  return produced;
}

InflateStream::InflateStream(const uint8_t* src, size_t avail) : src_(src), remaining_(avail) {
  ok_ = inflateInit(&zs_) == Z_OK;
}

InflateStream::~InflateStream() {
  if (ok_) inflateEnd(&zs_);
}

long InflateStream::read(uint8_t* out, size_t cap) {
  if (!ok_) return -1;
  if (finished_ || cap == 0) return 0;
  zs_.next_out = out;
  zs_.avail_out = clamp_uint(cap);
  uInt start = zs_.avail_out;
  while (zs_.avail_out > 0) {
    if (zs_.avail_in == 0) {
      if (remaining_ == 0) return -1;  // truncated stream
      zs_.next_in = const_cast<Bytef*>(src_);
      zs_.avail_in = clamp_uint(remaining_);
      src_ += zs_.avail_in;
      remaining_ -= zs_.avail_in;
    }
    int ret = inflate(&zs_, Z_NO_FLUSH);
    if (ret == Z_STREAM_END) {
      finished_ = true;
      break;
    }
    if (ret != Z_OK) return -1;
  }
  return static_cast<long>(start - zs_.avail_out);
}

}  // namespace pc
