// Helpers shared by the N-API glue files (one per concept, native/binding/): coded errors,
// argument checks of last resort (TypeScript validates first), buffers out.
#pragma once

#include <napi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/common.h"
#include "binding/arrays.h"

namespace pc::binding {

inline Napi::Error make_error(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  return err;
}

[[noreturn]] inline void throw_native(Napi::Env env, const pc::Error& e) {
  throw make_error(env, pc::code_name(e.code()), e.what());
}

// A request TypeScript validates first never gets here; if one does, it is a bug, reported as
// such rather than cast into undefined behaviour.
[[noreturn]] inline void throw_arg(Napi::Env env, const std::string& what) {
  throw make_error(env, pc::code_name(pc::Code::Internal), what);
}

// A JS number that must be an integer in [lo, hi], checked before it is cast: a NaN, an
// infinity or an out-of-range double converted to an integer type is undefined behaviour.
inline double integer_arg(Napi::Env env, const Napi::Value& v, double lo, double hi,
                          const char* what) {
  if (!v.IsNumber()) throw_arg(env, std::string(what) + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= lo && d <= hi) || d != static_cast<double>(static_cast<int64_t>(d)))
    throw_arg(env, std::string(what) + " must be an integer from " + std::to_string(lo) + " to " +
                       std::to_string(hi));
  return d;
}

constexpr double kMaxSafeInteger = 9007199254740991.0;  // 2^53 - 1

// The napi_typedarray_type of each typed-array class typed_arg takes.
template <typename Array>
struct ArrayType;
template <>
struct ArrayType<Napi::Uint8Array> {
  static constexpr napi_typedarray_type value = napi_uint8_array;
};
template <>
struct ArrayType<Napi::Uint16Array> {
  static constexpr napi_typedarray_type value = napi_uint16_array;
};
template <>
struct ArrayType<Napi::Uint32Array> {
  static constexpr napi_typedarray_type value = napi_uint32_array;
};
template <>
struct ArrayType<Napi::Int32Array> {
  static constexpr napi_typedarray_type value = napi_int32_array;
};
template <>
struct ArrayType<Napi::Float64Array> {
  static constexpr napi_typedarray_type value = napi_float64_array;
};

// How many elements typed_arg requires: any number, exactly n, or at least n.
struct Length {
  enum Kind { kAny, kExactly, kAtLeast };
  Kind kind = kAny;
  size_t n = 0;
};
inline Length exactly(size_t n) { return {Length::kExactly, n}; }
inline Length at_least(size_t n) { return {Length::kAtLeast, n}; }

// A typed array of that class (a Buffer is a Uint8Array) holding the elements `len` asks for,
// or a last-resort error with the given message.
template <typename Array>
Array typed_arg(Napi::Env env, const Napi::Value& v, const char* error, Length len = {}) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != ArrayType<Array>::value)
    throw_arg(env, error);
  Array a = v.As<Array>();
  const size_t have = a.ElementLength();
  if ((len.kind == Length::kExactly && have != len.n) ||
      (len.kind == Length::kAtLeast && have < len.n))
    throw_arg(env, error);
  return a;
}

// A 20-byte object id.
inline const uint8_t* oid_arg(const Napi::Value& v, Napi::Env env) {
  if (!v.IsBuffer() || v.As<Napi::Buffer<uint8_t>>().Length() != 20)
    throw_arg(env, "expected a 20-byte object id");
  return v.As<Napi::Buffer<uint8_t>>().Data();
}

// Splits a Buffer of NUL-terminated paths into pointers into it.
inline void split_paths(Napi::Env env, const Napi::Value& v, std::vector<const char*>* out) {
  if (!v.IsBuffer()) throw_arg(env, "paths must be a Buffer");
  auto buf = v.As<Napi::Buffer<char>>();
  const char* p = buf.Data();
  size_t len = buf.Length();
  if (len > 0 && p[len - 1] != '\0') throw_arg(env, "paths must end with a NUL");
  for (size_t start = 0; start < len;) {
    out->push_back(p + start);
    start += std::strlen(p + start) + 1;
  }
}

// The { root, paths, threads? } part shared by the path-batch requests (statFiles, fsyncPaths).
inline void parse_path_batch(Napi::Env env, const Napi::Object& o, std::string* root,
                             std::vector<const char*>* paths, size_t* threads) {
  Napi::Value r = o.Get("root");
  if (!r.IsString()) throw_arg(env, "root must be a string");
  *root = r.As<Napi::String>().Utf8Value();
  split_paths(env, o.Get("paths"), paths);
  Napi::Value t = o.Get("threads");
  if (t.IsUndefined()) return;
  *threads = static_cast<size_t>(integer_arg(env, t, 1, 1024, "threads"));
}

}  // namespace pc::binding
