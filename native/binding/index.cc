#include "binding/index.h"

#include <cstring>
#include <string>
#include <vector>

#include "binding/rows.h"
#include "binding/util.h"
#include "index/cache_tree.h"
#include "index/index_writer.h"
#include "worktree/stat.h"

namespace pc::binding {

namespace {

// The Buffer's own memory, handed over without a copy.
Napi::Buffer<char> to_buffer(Napi::Env env, std::string bytes) {
  auto* held = new std::string(std::move(bytes));
  return Napi::Buffer<char>::New(env, held->data(), held->size(),
                                 [](Napi::Env, char*, std::string* s) { delete s; }, held);
}

template <typename Array>
Array typed_arg(Napi::Env env, const Napi::Value& v, napi_typedarray_type type, size_t min,
                const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type ||
      v.As<Array>().ElementLength() < min)
    throw_arg(env, std::string(what) + " has the wrong type or is too short");
  return v.As<Array>();
}

}  // namespace

Napi::Value SerializeIndex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5) throw_arg(env, "serializeIndex(list, stats, extFlags, version, extensions)");
  IndexWrite in;
  in.entries = path_list_arg(env, info[0], "list");
  in.stats = typed_arg<Napi::Uint32Array>(env, info[1], napi_uint32_array,
                                          in.entries.count * kStatWords, "stats")
                 .Data();
  in.ext_flags = info[2].IsNull() ? nullptr
                                  : typed_arg<Napi::Uint16Array>(env, info[2], napi_uint16_array,
                                                                 in.entries.count, "extFlags")
                                        .Data();
  in.version = static_cast<uint32_t>(integer_arg(env, info[3], 2, 4, "version"));
  if (!info[4].IsArray()) throw_arg(env, "extensions must be an array of Buffers");
  Napi::Array exts = info[4].As<Napi::Array>();
  for (uint32_t k = 0; k < exts.Length(); k++) {
    Napi::Value x = exts.Get(k);
    if (!x.IsBuffer()) throw_arg(env, "extensions must be an array of Buffers");
    auto b = x.As<Napi::Buffer<char>>();
    in.extensions.emplace_back(b.Data(), b.Length());
  }
  return to_buffer(env, serialize_index(in));
}

Napi::Value CacheTreeExtension(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsBuffer())
    throw_arg(env, "cacheTreeExtension(dirs, differing: Buffer)");
  Napi::Object d = info[0].As<Napi::Object>();
  std::vector<const char*> paths;
  split_paths(env, d.Get("paths"), &paths);
  Napi::Value oids = d.Get("oids");
  if (!oids.IsBuffer() || oids.As<Napi::Buffer<char>>().Length() != 20 * paths.size())
    throw_arg(env, "dirs.oids must hold 20 bytes per directory");
  auto ranges = typed_arg<Napi::Uint32Array>(env, d.Get("ranges"), napi_uint32_array,
                                             3 * paths.size(), "dirs.ranges");
  std::vector<CacheTreeDir> dirs(paths.size());
  for (size_t j = 0; j < paths.size(); j++) {
    dirs[j].path = paths[j];
    uint32_t begin = ranges[3 * j], end = ranges[3 * j + 1];
    if (end < begin || end - begin > INT32_MAX) throw_arg(env, "dirs.ranges out of order");
    dirs[j].entries = static_cast<int32_t>(end - begin);
    dirs[j].oid.assign(oids.As<Napi::Buffer<char>>().Data() + 20 * j, 20);
  }
  auto differing = info[1].As<Napi::Buffer<char>>();
  invalidate_above(&dirs, differing.Data(), differing.Length());
  return to_buffer(env, write_cache_tree(dirs));
}

}  // namespace pc::binding
