#include "binding/rows.h"

#include <cstring>

#include "binding/util.h"
#include "plan/dirs.h"
#include "plan/gather.h"
#include "plan/rows.h"
#include "worktree/stat.h"

namespace pc::binding {

PathList path_list_arg(Napi::Env env, const Napi::Value& v, const char* what) {
  PathList list;
  if (v.IsNull() || v.IsUndefined()) return list;
  if (!v.IsObject()) throw_arg(env, std::string(what) + " must be an object or null");
  Napi::Object o = v.As<Napi::Object>();
  Napi::Value paths = o.Get("paths"), starts = o.Get("starts");
  if (!paths.IsBuffer() || !starts.IsTypedArray() ||
      starts.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    throw_arg(env, std::string(what) + " needs paths (Buffer) and starts (Uint32Array)");
  list.count = static_cast<size_t>(integer_arg(env, o.Get("count"), 0, 4294967294.0, what));
  auto p = paths.As<Napi::Buffer<uint8_t>>();
  auto s = starts.As<Napi::Uint32Array>();
  if (s.ElementLength() < list.count + 1) throw_arg(env, std::string(what) + ": starts too short");
  list.paths = p.Data();
  list.paths_len = p.Length();
  list.starts = s.Data();
  Napi::Value oids = o.Get("oids"), modes = o.Get("modes");
  if (!oids.IsBuffer() || !modes.IsTypedArray() ||
      modes.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    throw_arg(env, std::string(what) + " needs oids (Buffer) and modes (Uint32Array)");
  if (oids.As<Napi::Buffer<uint8_t>>().Length() / 20 < list.count ||
      modes.As<Napi::Uint32Array>().ElementLength() < list.count)
    throw_arg(env, std::string(what) + ": oids or modes too short");
  list.oids = oids.As<Napi::Buffer<uint8_t>>().Data();
  list.modes = modes.As<Napi::Uint32Array>().Data();
  if (!valid_path_list(list)) throw_arg(env, std::string(what) + ": starts outside its paths");
  return list;
}

Napi::Value JoinRows(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4) throw_arg(env, "joinRows(index, stages, head, target)");
  PathList index = path_list_arg(env, info[0], "index");
  PathList head = path_list_arg(env, info[2], "head");
  PathList target = path_list_arg(env, info[3], "target");
  const uint8_t* stages = nullptr;
  if (index.count > 0) {
    stages = typed_arg<Napi::Uint8Array>(env, info[1],
                                         "stages must be a Uint8Array, one per index entry",
                                         at_least(index.count))
                 .Data();
  }
  Rows rows;
  join_rows(index, stages, head, target, &rows);
  Napi::Object out = Napi::Object::New(env);
  out.Set("count", Napi::Number::New(env, static_cast<double>(rows.i.size())));
  out.Set("i", copy_out<Napi::Int32Array>(env, rows.i));
  out.Set("h", copy_out<Napi::Int32Array>(env, rows.h));
  out.Set("m", copy_out<Napi::Int32Array>(env, rows.m));
  out.Set("unmerged", copy_out<Napi::Uint8Array>(env, rows.unmerged));
  out.Set("same", copy_out<Napi::Uint8Array>(env, rows.same));
  return out;
}

Napi::Value GatherEntries(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4) throw_arg(env, "gatherEntries(index, target, src, idx)");
  PathList index = path_list_arg(env, info[0], "index");
  PathList target = path_list_arg(env, info[1], "target");
  auto src = typed_arg<Napi::Uint8Array>(env, info[2], "src has the wrong type");
  auto idx = typed_arg<Napi::Int32Array>(env, info[3], "idx has the wrong type");
  if (src.ElementLength() != idx.ElementLength())
    throw_arg(env, "gatherEntries: src and idx differ in length");
  GatherRequest req;
  req.lists[0] = index.count > 0 ? &index : nullptr;
  req.lists[1] = target.count > 0 ? &target : nullptr;
  req.src = src.Data();
  req.idx = idx.Data();
  req.count = src.ElementLength();
  if (gather_is_whole(req)) return env.Null();
  // The same entries as the target's (a switch that kept the rest): that list, not a copy.
  if (gather_same_as(req, 1)) return Napi::Number::New(env, 1);
  size_t bytes = 0;
  if (!gather_path_bytes(req, &bytes))
    throw_arg(env, "gatherEntries: an entry outside its list");
  auto paths = new_bytes(env, bytes);
  auto starts = new_array<Napi::Uint32Array>(env, req.count + 1);
  auto oids = new_bytes(env, 20 * req.count);
  auto modes = new_array<Napi::Uint32Array>(env, req.count);
  gather_entries(req, paths.Data(), starts.Data(), oids.Data(), modes.Data());
  Napi::Object out = Napi::Object::New(env);
  out.Set("count", Napi::Number::New(env, static_cast<double>(req.count)));
  out.Set("paths", paths);
  out.Set("starts", starts);
  out.Set("oids", oids);
  out.Set("modes", modes);
  return out;
}

Napi::Value GatherStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsObject()) throw_arg(env, "gatherStats(result, old, fresh)");
  Napi::Object r = info[0].As<Napi::Object>();
  auto src = typed_arg<Napi::Uint8Array>(env, r.Get("src"), "src has the wrong type");
  auto idx = typed_arg<Napi::Int32Array>(env, r.Get("idx"), "idx has the wrong type");
  auto write = typed_arg<Napi::Uint8Array>(env, r.Get("write"), "write has the wrong type");
  auto slot =
      typed_arg<Napi::Int32Array>(env, r.Get("freshSlot"), "freshSlot has the wrong type");
  auto smudge = typed_arg<Napi::Uint8Array>(env, r.Get("smudge"), "smudge has the wrong type");
  auto old = typed_arg<Napi::Uint32Array>(env, info[1], "old has the wrong type");
  auto fresh = typed_arg<Napi::Uint32Array>(env, info[2], "fresh has the wrong type");
  const size_t n = src.ElementLength();
  if (idx.ElementLength() < n || write.ElementLength() < n || slot.ElementLength() < n ||
      smudge.ElementLength() < n)
    throw_arg(env, "gatherStats: the per-position arrays differ in length");
  StatGather req;
  req.src = src.Data();
  req.idx = idx.Data();
  req.write = write.Data();
  req.fresh_slot = slot.Data();
  req.smudge = smudge.Data();
  req.count = n;
  req.old = old.Data();
  req.old_count = old.ElementLength() / kStatWords;
  req.fresh = fresh.Data();
  req.fresh_count = fresh.ElementLength() / kStatWords;
  auto out = new_array<Napi::Uint32Array>(env, n * kStatWords);
  if (!gather_stats(req, out.Data())) throw_arg(env, "gatherStats: an entry outside its array");
  return out;
}

Napi::Value NewStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1) throw_arg(env, "newStats(count)");
  const double count = integer_arg(env, info[0], 0, 268435455.0, "count");
  return new_array<Napi::Uint32Array>(env, static_cast<size_t>(count) * kStatWords);
}

Napi::Value RowsToDecide(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsObject()) throw_arg(env, "rowsToDecide(rows, stats, racySeconds)");
  Napi::Object o = info[0].As<Napi::Object>();
  auto i = typed_arg<Napi::Int32Array>(env, o.Get("i"), "i has the wrong type");
  auto unmerged =
      typed_arg<Napi::Uint8Array>(env, o.Get("unmerged"), "unmerged has the wrong type");
  auto same = typed_arg<Napi::Uint8Array>(env, o.Get("same"), "same has the wrong type");
  auto stats = typed_arg<Napi::Uint32Array>(env, info[1], "stats has the wrong type");
  const double racy = integer_arg(env, info[2], 0, 4294967295.0, "racySeconds");
  const size_t n = i.ElementLength();
  if (unmerged.ElementLength() != n || same.ElementLength() != n)
    throw_arg(env, "rowsToDecide: the row arrays differ in length");
  RowsView rows{i.Data(), unmerged.Data(), same.Data(), n};
  std::vector<int32_t> out = rows_to_decide(rows, stats.Data(), stats.ElementLength() / kStatWords,
                                            static_cast<uint32_t>(racy));
  return copy_out<Napi::Int32Array>(env, out);
}

Napi::Value DirsOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2) throw_arg(env, "dirsOf(list, select)");
  PathList list = path_list_arg(env, info[0], "list");
  const uint8_t* select = nullptr;
  if (!info[1].IsNull() && !info[1].IsUndefined()) {
    auto s = typed_arg<Napi::Uint8Array>(env, info[1], "select has the wrong type");
    if (s.ElementLength() < list.count) throw_arg(env, "dirsOf: select shorter than the list");
    select = s.Data();
  }
  std::string dirs = dirs_of(list, select);
  return Napi::Buffer<char>::Copy(env, dirs.data(), dirs.size());
}

}  // namespace pc::binding
