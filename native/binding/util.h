// Helpers shared by the N-API glue files: coded errors, argument checks of last resort.
#pragma once

#include <napi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/common.h"

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

}  // namespace pc::binding
