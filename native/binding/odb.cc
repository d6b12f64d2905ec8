#include "binding/odb.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "binding/paths.h"
#include "binding/rows.h"
#include "binding/util.h"
#include "index/cache_tree.h"
#include "index/index_lender.h"

namespace pc::binding {

namespace {

// A walk's directories for JS (see walkTree).
Napi::Object dirs_to_js(Napi::Env env, const pc::WalkDirs& dirs) {
  auto paths = new_bytes(env, dirs.path_bytes());
  auto oids = new_bytes(env, 20 * dirs.size());
  auto ranges = new_array<Napi::Uint32Array>(env, 3 * dirs.size());
  size_t at = 0;
  for (size_t j = 0; j < dirs.size(); j++) {
    const pc::WalkDir& d = dirs[j];
    const std::string_view path = dirs.path(j);
    std::memcpy(paths.Data() + at, path.data(), path.size());
    at += path.size();
    paths[at++] = 0;
    std::memcpy(oids.Data() + 20 * j, d.oid, 20);
    ranges[3 * j] = static_cast<uint32_t>(d.entry_begin);
    ranges[3 * j + 1] = static_cast<uint32_t>(d.entry_end);
    ranges[3 * j + 2] = d.subtrees;
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("count", Napi::Number::New(env, static_cast<double>(dirs.size())));
  out.Set("paths", paths);
  out.Set("oids", oids);
  out.Set("ranges", ranges);
  return out;
}

}  // namespace

Napi::Function OdbWrap::Define(Napi::Env env) {
  return DefineClass(env, "Odb",
                     {
                         InstanceMethod<&OdbWrap::Read>("read"),
                         InstanceMethod<&OdbWrap::WalkTree>("walkTree"),
                         InstanceMethod<&OdbWrap::LendIndex>("lendIndex"),
                         InstanceMethod<&OdbWrap::Info>("info"),
                         InstanceMethod<&OdbWrap::SetCancel>("setCancel"),
                         InstanceMethod<&OdbWrap::ResolvePrefix>("resolvePrefix"),
                         InstanceMethod<&OdbWrap::WriteFiles>("writeFiles"),
                         InstanceMethod<&OdbWrap::WriteFilesAsync>("writeFilesAsync"),
                         InstanceMethod<&OdbWrap::ReleaseCache>("releaseCache"),
                         InstanceMethod<&OdbWrap::ReleaseWalks>("releaseWalks"),
                         InstanceMethod<&OdbWrap::Close>("close"),
                     });
}

OdbWrap::OdbWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<OdbWrap>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsArray())
    throw_arg(env, "new Odb(objectDirs: string[], cacheBytes: number | Odb)");
  Napi::Array arr = info[0].As<Napi::Array>();
  std::vector<std::string> dirs;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value d = arr.Get(i);
    if (!d.IsString()) throw_arg(env, "object directories must be strings");
    dirs.push_back(d.As<Napi::String>().Utf8Value());
  }
  // A number: a new delta-base cache of that many bytes; another reader: share its cache.
  std::shared_ptr<pc::BaseCache> cache;
  if (info[1].IsObject()) {
    Napi::Object other = info[1].As<Napi::Object>();
    // Only an Odb is unwrapped as one (any other wrapped object would be a type confusion).
    if (!other.InstanceOf(info.NewTarget().As<Napi::Function>()))
      throw_arg(env, "cacheBytes must be a number or an Odb to share the cache of");
    OdbWrap* w = OdbWrap::Unwrap(other);
    if (w == nullptr || !w->odb_) throw_arg(env, "the Odb to share a cache with is closed");
    cache = w->odb_->cache();
  } else {
    double budget = integer_arg(env, info[1], 0, kMaxSafeInteger, "cacheBytes");
    cache = std::make_shared<pc::BaseCache>(static_cast<size_t>(budget));
  }
  try {
    odb_ = std::make_unique<pc::Odb>(std::move(dirs), std::move(cache));
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
}

Napi::Value OdbWrap::Read(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint8_t* oid = oid_arg(info[0], env);
  try {
    pc::Object obj = odb(env).read(oid);
    Napi::Object out = Napi::Object::New(env);
    out.Set("type", Napi::String::New(env, pc::type_name(obj.type)));
    out.Set("data", copy_buffer(env, obj.bytes->data.get(), obj.bytes->size));
    return out;
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
}

// walkTree(oid, protect, keep?) -> { count, paths, starts, oids, modes, dirs }: with keep, the
// walk is kept for the next walks on this reader (until releaseCache), which copy the subtrees
// it shares with them, as they copy those the index lent (lendIndex). dirs: every directory, in
// pre-order: { count, paths (each with its final '/' and a NUL), oids, ranges (entry begin,
// entry end, subtrees: three words per directory) }.
Napi::Value OdbWrap::WalkTree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint8_t* oid = oid_arg(info[0], env);
  pc::PathProtection protect = protection_arg(env, info[1]);
  const bool keep = info.Length() > 2 && info[2].ToBoolean().Value();
  pc::FlatTree tree;
  pc::WalkDirs dirs;
  try {
    pc::walk_tree(odb(env), oid, protect, &tree, &dirs, {memo_.get(), lender_.get()});
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
  // The walk's arrays become the JS arrays as they are (huge_buffer.h): no copy.
  Napi::Object out = Napi::Object::New(env);
  out.Set("count", Napi::Number::New(env, static_cast<double>(tree.count)));
  Napi::Buffer<uint8_t> paths = hand_over_bytes(env, &tree.paths);
  Napi::Buffer<uint8_t> oids = hand_over_bytes(env, &tree.oids);
  Napi::Uint32Array modes = hand_over_words(env, &tree.modes.bytes());
  Napi::Uint32Array starts = hand_over_words(env, &tree.starts.bytes());
  if (starts.ElementLength() != tree.count + 1 || modes.ElementLength() != tree.count)
    throw_arg(env, "walkTree: the walk's lists disagree");  // not reached: walk_tree fills all
  out.Set("paths", paths);
  out.Set("oids", oids);
  out.Set("modes", modes);
  out.Set("starts", starts);
  out.Set("dirs", dirs_to_js(env, dirs));
  if (keep) {
    auto record = std::make_unique<pc::WalkMemo>();
    pc::keep_walk(reinterpret_cast<const char*>(paths.Data()), modes.Data(),
                  reinterpret_cast<const char*>(oids.Data()), starts.Data(), std::move(dirs),
                  protect, record.get());
    memo_refs_.clear();
    for (Napi::Object o : {paths.As<Napi::Object>(), oids.As<Napi::Object>(),
                           modes.As<Napi::Object>(), starts.As<Napi::Object>()})
      memo_refs_.push_back(Napi::Persistent(o));
    memo_ = std::move(record);
  }
  return out;
}

// lendIndex(index, stages, extFlags, cacheTree: Buffer, protect) -> { lent, root }: the
// index's entries under the directories its cache-tree (the TREE extension's data) names, for
// later walks on this reader until releaseCache (see index_lender.h). The index's arrays are
// held, not copied, until then; `root` is the id of the tree the whole index holds, when it
// may all be lent (else null). The caller has checked its paths under `protect`.
Napi::Value OdbWrap::LendIndex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  odb(env);
  lender_.reset();
  lender_refs_.clear();
  pc::PathList index = path_list_arg(env, info[0], "index");
  auto stages = typed_arg<Napi::Uint8Array>(
      env, info[1], "stages must be a Uint8Array, one per entry", at_least(index.count));
  auto ext_flags = typed_arg<Napi::Uint16Array>(
      env, info[2], "extFlags must be a Uint16Array, one per entry", at_least(index.count));
  if (!info[3].IsBuffer()) throw_arg(env, "cacheTree must be a Buffer");
  auto data = info[3].As<Napi::Buffer<uint8_t>>();
  std::vector<pc::CacheTreeDir> dirs;
  Napi::Object out = Napi::Object::New(env);
  out.Set("lent", Napi::Number::New(env, 0));
  out.Set("root", env.Null());
  if (!pc::parse_cache_tree(data.Data(), data.Length(), &dirs)) return out;
  auto lender = std::make_unique<pc::WalkMemo>();
  size_t lent = pc::lend_index(index, stages.Data(), ext_flags.Data(), std::move(dirs),
                               protection_arg(env, info[4]), lender.get());
  if (lent > 0) {
    Napi::Object list = info[0].As<Napi::Object>();
    for (const char* key : {"paths", "modes", "oids", "starts"})
      lender_refs_.push_back(Napi::Persistent(list.Get(key).As<Napi::Object>()));
    // The whole index lendable: it holds exactly the tree its root names.
    if (lender->dirs[0].lendable)
      out.Set("root", copy_buffer(env, lender->dirs[0].oid, 20));
    lender_ = std::move(lender);
  }
  out.Set("lent", Napi::Number::New(env, static_cast<double>(lent)));
  return out;
}

// For each 20-byte id: [pack (-1 loose, -2 missing), offset, inflated size, type].
Napi::Value OdbWrap::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer() || info[0].As<Napi::Buffer<uint8_t>>().Length() % 20 != 0)
    throw_arg(env, "info expects a Buffer of 20-byte ids");
  auto ids = info[0].As<Napi::Buffer<uint8_t>>();
  size_t n = ids.Length() / 20;
  if (n > static_cast<size_t>(INT32_MAX)) throw_arg(env, "info: too many ids");
  // Optional: an Int32Array of n filled with the positions in the order they were read.
  int32_t* order = nullptr;
  if (info.Length() > 1 && !info[1].IsUndefined()) {
    auto given = typed_arg<Napi::Int32Array>(
        env, info[1], "info: order must be an Int32Array with one element per id", exactly(n));
    order = given.Data();
  }
  auto out = new_array<Napi::Float64Array>(env, n * 4);
  pc::Odb& db = odb(env);
  try {
    std::vector<pc::Odb::InfoRow> rows(n);
    db.info_many(ids.Data(), n, rows.data(), order);
    for (size_t i = 0; i < n; i++) {
      double* row = out.Data() + i * 4;
      const pc::Odb::InfoRow& r = rows[i];
      if (!r.found) {
        row[0] = -2;
        row[1] = row[2] = row[3] = 0;
        continue;
      }
      row[0] = r.loc.pack;
      row[1] = static_cast<double>(r.loc.offset);
      row[2] = static_cast<double>(r.size);
      row[3] = r.type;
    }
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
  return out;
}

// setCancel(flag: Int32Array over a SharedArrayBuffer | null): the flag this reader's long
// steps (info, walkTree) look at; nonzero in slot 0 stops them with ERR_ABORTED.
Napi::Value OdbWrap::SetCancel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Odb& db = odb(env);
  if (info.Length() < 1 || info[0].IsNull() || info[0].IsUndefined()) {
    db.cancel().set(nullptr);
    cancel_ref_.Reset();
    return env.Undefined();
  }
  auto flag = typed_arg<Napi::Int32Array>(env, info[0], "setCancel expects an Int32Array or null",
                                          at_least(1));
  cancel_ref_ = Napi::Persistent(flag);
  db.cancel().set(flag.Data());
  return env.Undefined();
}

// Returns { count: 0 | 1 | 2, oid?: Buffer } for a hex prefix (2 = ambiguous).
Napi::Value OdbWrap::ResolvePrefix(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw_arg(env, "resolvePrefix expects a hex string");
  std::string hex = info[0].As<Napi::String>().Utf8Value();
  if (hex.size() < 4 || hex.size() > 40) throw_arg(env, "prefix must be 4 to 40 hex digits");
  pc::OidPrefix prefix;
  for (size_t i = 0; i < hex.size(); i++) {
    int v = pc::hex_digit(hex[i]);
    if (v < 0) throw_arg(env, "prefix must be hex");
    prefix.bytes[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? v << 4 : v);
  }
  prefix.nibbles = hex.size();
  uint8_t found[20];
  int count = 0;
  try {
    count = odb(env).resolve_prefix(prefix, found);
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("count", Napi::Number::New(env, count));
  if (count == 1) out.Set("oid", copy_buffer(env, found, 20));
  return out;
}

void OdbWrap::forget_walks() {
  memo_.reset();
  memo_refs_.clear();
  lender_.reset();
  lender_refs_.clear();
}

Napi::Value OdbWrap::ReleaseCache(const Napi::CallbackInfo& info) {
  odb(info.Env()).release_cache();
  forget_walks();
  cancel_ref_.Reset();
  return info.Env().Undefined();
}

Napi::Value OdbWrap::ReleaseWalks(const Napi::CallbackInfo& info) {
  forget_walks();
  return info.Env().Undefined();
}

Napi::Value OdbWrap::Close(const Napi::CallbackInfo& info) {
  if (busy_) throw_arg(info.Env(), "the object database is busy writing");
  odb_.reset();
  forget_walks();
  return info.Env().Undefined();
}

std::vector<OdbWrap*> reader_list(Napi::Env env, Napi::Value value,
                                  const Napi::FunctionReference& odb_class,
                                  std::vector<Napi::Object>* keep) {
  if (!value.IsArray()) throw_arg(env, "readers must be an array of Odb objects");
  Napi::Array readers = value.As<Napi::Array>();
  if (readers.Length() < 1 || readers.Length() > 1024) throw_arg(env, "1 to 1024 readers");
  std::vector<OdbWrap*> owners;
  for (uint32_t i = 0; i < readers.Length(); i++) {
    Napi::Value r = readers.Get(i);
    // Only an Odb is unwrapped as one (any other wrapped object would be a type confusion).
    if (!r.IsObject() || !r.As<Napi::Object>().InstanceOf(odb_class.Value()))
      throw_arg(env, "readers must be Odb objects");
    OdbWrap* w = OdbWrap::Unwrap(r.As<Napi::Object>());
    w->odb(env);  // throws if closed or busy
    if (std::find(owners.begin(), owners.end(), w) != owners.end())
      throw_arg(env, "a reader is given twice");
    owners.push_back(w);
    if (keep) keep->push_back(r.As<Napi::Object>());
  }
  return owners;
}

Napi::Value DecodeStats(const Napi::CallbackInfo& info, const Napi::FunctionReference& odb_class) {
  Napi::Env env = info.Env();
  std::vector<OdbWrap*> owners = reader_list(env, info[0], odb_class, nullptr);
  pc::DecodeTally tally;
  for (OdbWrap* w : owners) {
    pc::Odb& odb = w->odb(env);
    pc::DecodeStats stats = odb.take_stats();
    tally.add(stats, [&](uint32_t k) -> const std::string& { return odb.pack_name(k); });
  }
  Napi::Object out = Napi::Object::New(env);
  auto num = [&](const char* key, uint64_t v) {
    out.Set(key, Napi::Number::New(env, static_cast<double>(v)));
  };
  num("inflations", tally.inflations);
  num("inflatedBytes", tally.inflated_bytes);
  num("deltas", tally.deltas);
  num("cacheHits", tally.cache_hits);
  num("baseDecodes", tally.base_decodes);
  num("baseBytes", tally.base_bytes);
  num("repeatedBaseDecodes", tally.repeated_decodes);
  num("repeatedBaseBytes", tally.repeated_bytes);
  out.Set("complete", Napi::Boolean::New(env, tally.complete));
  return out;
}

}  // namespace pc::binding
