// Arrays handed to JavaScript: zeroed Buffers and typed arrays, those of 2 MiB and more in
// memory of huge pages (base/huge_pages.h) that the array owns and unmaps when collected, the
// smaller ones V8's own; and a HugeBuffer's memory handed over as it is.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/huge_buffer.h"
#include "base/huge_pages.h"

namespace pc::binding {

namespace arrays_detail {
struct Mapping {
  void* data;
  std::size_t mapped;
};
inline void unmap(Napi::Env, void*, Mapping* m) {
  huge_free(m->data, m->mapped);
  delete m;
}
inline void free_handed(Napi::Env, void*, HugeBuffer::Block* b) {
  HugeBuffer::free_block(*b);
  delete b;
}
// A block for `bytes` of huge pages, or null (then the caller takes V8's memory).
inline Mapping* map(std::size_t bytes) {
  if (bytes < kHugeBlockMin) return nullptr;
  std::size_t mapped = 0;
  void* data = huge_alloc(bytes, &mapped);
  return data == nullptr ? nullptr : new Mapping{data, mapped};
}
}  // namespace arrays_detail

// A zeroed Buffer of n bytes.
inline Napi::Buffer<uint8_t> new_bytes(Napi::Env env, std::size_t n) {
  arrays_detail::Mapping* m = arrays_detail::map(n);
  if (m == nullptr) return Napi::Buffer<uint8_t>::New(env, n);
  return Napi::Buffer<uint8_t>::New(env, static_cast<uint8_t*>(m->data), n, arrays_detail::unmap,
                                    m);
}

// A zeroed typed array of n elements (Array: Napi::Uint32Array, Napi::Int32Array, …).
template <typename Array>
Array new_array(Napi::Env env, std::size_t n) {
  using T = std::remove_pointer_t<decltype(std::declval<Array>().Data())>;
  arrays_detail::Mapping* m = arrays_detail::map(n * sizeof(T));
  if (m == nullptr) return Array::New(env, n);
  Napi::ArrayBuffer ab =
      Napi::ArrayBuffer::New(env, m->data, n * sizeof(T), arrays_detail::unmap, m);
  return Array::New(env, n, ab, 0);
}

// A HugeBuffer's memory as a JS Buffer, without a copy (buf is empty afterwards; an empty
// one gives V8's own).
inline Napi::Buffer<uint8_t> hand_over_bytes(Napi::Env env, HugeBuffer* buf) {
  if (buf->empty()) return Napi::Buffer<uint8_t>::New(env, 0);
  auto* b = new HugeBuffer::Block(buf->release());
  return Napi::Buffer<uint8_t>::New(env, static_cast<uint8_t*>(b->data), b->size,
                                    arrays_detail::free_handed, b);
}

// A HugeBuffer of 32-bit words as a JS Uint32Array, without a copy.
inline Napi::Uint32Array hand_over_words(Napi::Env env, HugeBuffer* buf) {
  if (buf->empty()) return Napi::Uint32Array::New(env, 0);
  auto* b = new HugeBuffer::Block(buf->release());
  Napi::ArrayBuffer ab =
      Napi::ArrayBuffer::New(env, b->data, b->size, arrays_detail::free_handed, b);
  return Napi::Uint32Array::New(env, b->size / 4, ab, 0);
}

// A Buffer holding a copy of `len` bytes.
inline Napi::Buffer<uint8_t> copy_buffer(Napi::Env env, const void* data, std::size_t len) {
  Napi::Buffer<uint8_t> out = new_bytes(env, len);
  if (len > 0) std::memcpy(out.Data(), data, len);
  return out;
}

// releaseArrays(views) -> bytes (arrays.cc).
Napi::Value ReleaseArrays(const Napi::CallbackInfo& info);

// A typed array holding a copy of a vector.
template <typename Array, typename T>
Array copy_out(Napi::Env env, const std::vector<T>& v) {
  Array out = new_array<Array>(env, v.size());
  if (!v.empty()) std::memcpy(out.Data(), v.data(), v.size() * sizeof(T));
  return out;
}

}  // namespace pc::binding
