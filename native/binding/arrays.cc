#include "binding/arrays.h"

#include "base/memory.h"
#include "binding/util.h"

namespace pc::binding {

// releaseArrays(views) -> bytes: gives back the memory under each view of 2 MiB or more now,
// rather than whenever the collector finds its buffer: its pages are dropped at once and its
// ArrayBuffer detached (a huge-page block is unmapped on the next turn of the event loop, where
// node runs an external buffer's finalizer). Every view of a detached buffer has length 0 from
// then on. Smaller buffers are left alone: they may share a pool with others, and are not worth
// it. Never called while a native task still reads one of them (the caller's rule: between
// phases).
Napi::Value ReleaseArrays(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) throw_arg(env, "releaseArrays(views: array)");
  Napi::Array views = info[0].As<Napi::Array>();
  double released = 0;
  for (uint32_t k = 0; k < views.Length(); k++) {
    Napi::Value v = views.Get(k);
    if (!v.IsTypedArray()) throw_arg(env, "releaseArrays: every view must be a typed array");
    Napi::ArrayBuffer ab = v.As<Napi::TypedArray>().ArrayBuffer();
    if (ab.IsDetached() || ab.ByteLength() < kHugeBlockMin) continue;
    released += static_cast<double>(ab.ByteLength());
    drop_pages(ab.Data(), ab.ByteLength());
    ab.Detach();
  }
  return Napi::Number::New(env, released);
}

}  // namespace pc::binding
