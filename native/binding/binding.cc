// N-API glue: argument checks of last resort (TypeScript validates first), conversion of
// results to typed arrays, and pc::Error -> JS Error with a `code`. Per-environment state
// lives in the Addon instance, so the module loads safely in many worker threads.
#include <napi.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/common.h"
#include "convert/convert.h"
#include "index/index_entries.h"
#include "index/cache_tree.h"
#include "index/index_lender.h"
#include "base/mapped_file.h"
#include "odb/inflate.h"
#include "worktree/beneath.h"
#include "binding/util.h"
#include "binding/index.h"
#include "binding/rows.h"
#include "binding/watch.h"
#include "binding/worktree.h"
#include "odb/odb.h"
#include "write/parallel_write.h"
#include "plan/path_rules.h"
#include "plan/rows.h"
#include "worktree/stat.h"
#include "write/sync.h"
#include "plan/tree.h"
#include "write/writer.h"

namespace {

using pc::Code;
using pc::binding::integer_arg;
using pc::binding::kMaxSafeInteger;
using pc::binding::make_error;
using pc::binding::split_paths;
using pc::binding::throw_arg;
using pc::binding::throw_native;

const uint8_t* oid_arg(const Napi::Value& v, Napi::Env env) {
  if (!v.IsBuffer() || v.As<Napi::Buffer<uint8_t>>().Length() != 20)
    throw_arg(env, "expected a 20-byte object id");
  return v.As<Napi::Buffer<uint8_t>>().Data();
}

Napi::Buffer<uint8_t> copy_buffer(Napi::Env env, const void* data, size_t len) {
  return Napi::Buffer<uint8_t>::Copy(env, static_cast<const uint8_t*>(data), len);
}

// The { root, paths, threads? } part shared by the path-batch requests (statFiles, fsyncPaths).
void parse_path_batch(Napi::Env env, const Napi::Object& o, std::string* root,
                      std::vector<const char*>* paths, size_t* threads) {
  Napi::Value r = o.Get("root");
  if (!r.IsString()) throw_arg(env, "root must be a string");
  *root = r.As<Napi::String>().Utf8Value();
  split_paths(env, o.Get("paths"), paths);
  Napi::Value t = o.Get("threads");
  if (t.IsUndefined()) return;
  *threads = static_cast<size_t>(integer_arg(env, t, 1, 1024, "threads"));
}

// statFiles({ root, paths, threads? }) -> { stats: Uint32Array, status: Int32Array }: lstat of
// each path, never through a symlinked leading directory (see stat.h).
Napi::Value StatFiles(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw_arg(env, "expected a stat request object");
  Napi::Object o = info[0].As<Napi::Object>();
  pc::StatRequest req;
  parse_path_batch(env, o, &req.root, &req.paths, &req.threads);
  // An expectation to judge against: { compare: Uint8Array, modes: Uint32Array,
  // stats: Uint32Array, racySeconds, fileMode }, one element (stats: kStatWords) per path.
  Napi::Value expect = o.Get("expect");
  if (!expect.IsUndefined()) {
    if (!expect.IsObject()) throw_arg(env, "expect must be an object");
    Napi::Object e = expect.As<Napi::Object>();
    size_t n = req.paths.size();
    Napi::Value compare = e.Get("compare"), modes = e.Get("modes"), stats = e.Get("stats"),
                racy = e.Get("racySeconds"), file_mode = e.Get("fileMode");
    if (!compare.IsTypedArray() ||
        compare.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
        compare.As<Napi::Uint8Array>().ElementLength() != n)
      throw_arg(env, "expect.compare must be a Uint8Array, one per path");
    if (!modes.IsTypedArray() ||
        modes.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
        modes.As<Napi::Uint32Array>().ElementLength() != n)
      throw_arg(env, "expect.modes must be a Uint32Array, one per path");
    if (!stats.IsTypedArray() ||
        stats.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
        stats.As<Napi::Uint32Array>().ElementLength() != n * pc::kStatWords)
      throw_arg(env, "expect.stats must be a Uint32Array, statWords per path");
    double r = integer_arg(env, racy, 0, 4294967295.0, "expect.racySeconds");
    req.expect.compare = compare.As<Napi::Uint8Array>().Data();
    req.expect.modes = modes.As<Napi::Uint32Array>().Data();
    req.expect.stats = stats.As<Napi::Uint32Array>().Data();
    req.expect.racy_seconds = static_cast<uint32_t>(r);
    req.expect.file_mode = file_mode.ToBoolean().Value();
    Napi::Value symlinks = e.Get("symlinks");
    req.expect.symlinks = symlinks.IsUndefined() || symlinks.ToBoolean().Value();
    req.expect.stat_change_is_dirty = e.Get("statChangeIsDirty").ToBoolean().Value();
  }
  // JavaScript's arrays from the start (zeroed by V8): the threads write into them directly.
  size_t n = req.paths.size();
  auto stats = Napi::Uint32Array::New(env, n * pc::kStatWords);
  auto status = Napi::Int32Array::New(env, n);
  auto verdict = Napi::Uint8Array::New(env, n);
  pc::StatResult res;
  res.stats = stats.Data();
  res.status = status.Data();
  res.verdict = verdict.Data();
  try {
    pc::stat_files(req, &res);
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("stats", stats);
  out.Set("status", status);
  out.Set("verdict", verdict);
  return out;
}


// parseIndexEntries(file: Buffer, end, version, count) -> the entries as flat arrays (see
// index_entries.h); the header, checksum and extensions are read in TypeScript.
Napi::Value ParseIndexEntries(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsBuffer())
    throw_arg(env, "parseIndexEntries(file: Buffer, end, version, count)");
  auto file = info[0].As<Napi::Buffer<uint8_t>>();
  double end = integer_arg(env, info[1], 0, static_cast<double>(file.Length()), "end");
  double version = integer_arg(env, info[2], 2, 4, "version");
  double count = integer_arg(env, info[3], 0, 4294967295.0, "count");
  size_t n = static_cast<size_t>(count);
  size_t fileEnd = static_cast<size_t>(end);
  // The arrays are JavaScript's from the start: the parser writes into them, nothing is copied.
  auto oids = Napi::Buffer<uint8_t>::New(env, n * 20);
  auto modes = Napi::Uint32Array::New(env, n);
  auto stats = Napi::Uint32Array::New(env, n * pc::kStatWords);
  auto stages = Napi::Uint8Array::New(env, n);
  auto ext_flags = Napi::Uint16Array::New(env, n);
  auto assume_valid = Napi::Uint8Array::New(env, n);
  auto offsets = Napi::Uint32Array::New(env, n);
  auto starts = Napi::Uint32Array::New(env, n + 1);
  size_t cap = pc::index_path_bound(fileEnd, static_cast<uint32_t>(n));
  if (version == 4) cap = std::max<size_t>(4096, 4 * cap);
  for (;;) {
    auto paths = Napi::Buffer<uint8_t>::New(env, cap);
    pc::IndexEntries entries;
    entries.oids = oids.Data();
    entries.modes = modes.Data();
    entries.stats = stats.Data();
    entries.stages = stages.Data();
    entries.ext_flags = ext_flags.Data();
    entries.assume_valid = assume_valid.Data();
    entries.offsets = offsets.Data();
    entries.starts = starts.Data();
    entries.paths = paths.Data();
    entries.paths_cap = cap;
    bool fit;
    try {
      fit = pc::parse_index_entries(file.Data(), fileEnd, static_cast<uint32_t>(version),
                                    static_cast<uint32_t>(n), &entries);
    } catch (const pc::Error& e) {
      throw_native(env, e);
    }
    if (!fit) {
      cap *= 2;  // version 4 paths longer than guessed
      continue;
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("paths", paths);
    out.Set("pathsLength", Napi::Number::New(env, static_cast<double>(entries.paths_len)));
    out.Set("oids", oids);
    out.Set("modes", modes);
    out.Set("stats", stats);
    out.Set("stages", stages);
    out.Set("extFlags", ext_flags);
    out.Set("assumeValid", assume_valid);
    out.Set("offsets", offsets);
    out.Set("starts", starts);
    out.Set("endOfEntries", Napi::Number::New(env, static_cast<double>(entries.end_of_entries)));
    out.Set("unmerged", Napi::Boolean::New(env, entries.unmerged));
    if (!entries.problem.empty()) out.Set("problem", Napi::String::New(env, entries.problem));
    out.Set("sparseDir", Napi::Number::New(env, static_cast<double>(entries.sparse_dir)));
    return out;
  }
}

// mapFile(path) -> { data: Buffer, mtimeSec, mtimeNsec } | null: the whole file as a read-only
// mapping, with the modification time of the file mapped (null when it does not exist).
// Reading a file into fresh memory faults in every page of it; mapping a file that is in the
// page cache costs far fewer faults. The Buffer owns the mapping.
Napi::Value MapFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw_arg(env, "mapFile(path: string)");
  std::string path = info[0].As<Napi::String>().Utf8Value();
  auto file = std::make_unique<pc::MappedFile>();
  try {
    if (!file->open_if_exists(path)) return env.Null();
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("mtimeSec", Napi::Number::New(env, static_cast<double>(file->mtime_sec())));
  out.Set("mtimeNsec", Napi::Number::New(env, static_cast<double>(file->mtime_nsec())));
  if (file->size() == 0) {
    out.Set("data", Napi::Buffer<uint8_t>::New(env, 0));
    return out;
  }
  // PROT_READ: the Buffer must never be written to (a write would fault).
  uint8_t* data = const_cast<uint8_t*>(file->data());
  size_t size = file->size();
  out.Set("data", Napi::Buffer<uint8_t>::New(
                      env, data, size, [](Napi::Env, uint8_t*, pc::MappedFile* f) { delete f; },
                      file.release()));
  return out;
}

// The protection bits of verifyPath(s)/walkTree: core.protectNTFS, core.protectHFS.
constexpr int kProtectNtfs = 1;
constexpr int kProtectHfs = 2;

pc::PathProtection protection_arg(Napi::Env env, const Napi::Value& v) {
  auto bits = static_cast<uint32_t>(
      integer_arg(env, v, 0, kProtectNtfs | kProtectHfs, "protect (1 NTFS | 2 HFS)"));
  pc::PathProtection p;
  p.ntfs = (bits & kProtectNtfs) != 0;
  p.hfs = (bits & kProtectHfs) != 0;
  return p;
}

Napi::Value rule_to_js(Napi::Env env, pc::PathRule rule, size_t index) {
  if (rule == pc::PathRule::kOk) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  out.Set("index", Napi::Number::New(env, static_cast<double>(index)));
  out.Set("rule", Napi::String::New(env, pc::path_rule_name(rule)));
  out.Set("text", Napi::String::New(env, pc::path_rule_text(rule)));
  return out;
}

// verifyPath(path: Buffer, mode: number, protect: number) -> null | { index: 0, rule, text }
Napi::Value VerifyPath(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer()) throw_arg(env, "verifyPath(path, mode, protect)");
  auto buf = info[0].As<Napi::Buffer<char>>();
  std::string path(buf.Data(), buf.Length());  // NUL-terminated copy: the rules look ahead
  auto mode = static_cast<uint32_t>(integer_arg(env, info[1], 0, 4294967295.0, "mode"));
  return rule_to_js(env, pc::verify_path(path.c_str(), path.size(), mode,
                                         protection_arg(env, info[2])), 0);
}

// verifyPaths(paths: Buffer of NUL-terminated paths, modes: Uint32Array, protect: number)
//   -> null, or { index, rule, text } for the first path refused.
Napi::Value VerifyPaths(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<const char*> paths;
  split_paths(env, info[0], &paths);
  if (!info[1].IsTypedArray() ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
      info[1].As<Napi::Uint32Array>().ElementLength() != paths.size())
    throw_arg(env, "modes must be a Uint32Array with one mode per path");
  auto modes = info[1].As<Napi::Uint32Array>();
  pc::PathProtection protect = protection_arg(env, info[2]);
  for (size_t i = 0; i < paths.size(); i++) {
    pc::PathRule rule = pc::verify_path(paths[i], std::strlen(paths[i]), modes[i], protect);
    if (rule != pc::PathRule::kOk) return rule_to_js(env, rule, i);
  }
  return env.Null();
}

// syncFilesystem(root): syncfs(2) of the filesystem holding root.
Napi::Value SyncFilesystem(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw_arg(env, "expected a root directory");
  try {
    pc::sync_filesystem(info[0].As<Napi::String>().Utf8Value());
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
  return env.Undefined();
}

// fsyncPaths({ root, paths, threads? }) -> Int32Array: 0 or the errno of each path's fsync.
Napi::Value FsyncPaths(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw_arg(env, "expected an fsync request object");
  Napi::Object o = info[0].As<Napi::Object>();
  pc::FsyncRequest req;
  parse_path_batch(env, o, &req.root, &req.paths, &req.threads);
  std::vector<int32_t> errors;
  try {
    pc::fsync_paths(req, &errors);
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
  auto out = Napi::Int32Array::New(env, errors.size());
  if (!errors.empty()) std::memcpy(out.Data(), errors.data(), errors.size() * sizeof(int32_t));
  return out;
}

// A conversion descriptor { crlf: 0..4, ident: bool, identInCore: bool, encoding: string }
// (see convert.h; built by plan/conversion.ts).
pc::Conversion conversion_arg(Napi::Env env, const Napi::Value& v) {
  if (!v.IsObject()) throw_arg(env, "a conversion must be an object");
  Napi::Object o = v.As<Napi::Object>();
  Napi::Value crlf = o.Get("crlf"), enc = o.Get("encoding");
  if (!crlf.IsNumber()) throw_arg(env, "conversion.crlf must be a number");
  double c = crlf.As<Napi::Number>().DoubleValue();
  if (!(c == pc::kCrlfBinary || c == pc::kCrlfTextInput || c == pc::kCrlfTextCrlf ||
        c == pc::kCrlfAutoInput || c == pc::kCrlfAutoCrlf))
    throw_arg(env, "conversion.crlf must be 0 to 4");
  pc::Conversion conv;
  conv.crlf = static_cast<pc::CrlfAction>(static_cast<uint8_t>(c));
  conv.ident = o.Get("ident").ToBoolean().Value();
  conv.ident_in_core = o.Get("identInCore").ToBoolean().Value();
  if (!enc.IsUndefined() && !enc.IsNull()) {
    if (!enc.IsString()) throw_arg(env, "conversion.encoding must be a string");
    conv.encoding = enc.As<Napi::String>().Utf8Value();
    if (conv.encoding.find('\0') != std::string::npos)
      throw_arg(env, "conversion.encoding must not hold a NUL");
  }
  return conv;
}

// A write request parsed from JS, holding references so an async write can outlive the call.
struct ParsedRequest {
  pc::WriteRequest req;
  Napi::ObjectReference keep;
};

std::unique_ptr<ParsedRequest> parse_request(Napi::Env env, const Napi::Value& v) {
  if (!v.IsObject()) throw_arg(env, "expected a write request object");
  Napi::Object o = v.As<Napi::Object>();
  auto parsed = std::make_unique<ParsedRequest>();
  parsed->keep = Napi::Persistent(o);
  Napi::Value root = o.Get("root"), paths = o.Get("paths"), oids = o.Get("oids"),
              modes = o.Get("modes"), sizes = o.Get("sizes"), threshold = o.Get("streamThreshold");
  if (!root.IsString()) throw_arg(env, "root must be a string");
  if (!paths.IsBuffer() || !oids.IsBuffer()) throw_arg(env, "paths and oids must be Buffers");
  if (!modes.IsTypedArray() || modes.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    throw_arg(env, "modes must be a Uint32Array");
  if (!sizes.IsTypedArray() ||
      sizes.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw_arg(env, "sizes must be a Float64Array");
  Napi::Value flags = o.Get("flags");
  if (!flags.IsUndefined() &&
      (!flags.IsTypedArray() || flags.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array))
    throw_arg(env, "flags must be a Uint8Array");
  pc::WriteRequest& req = parsed->req;
  req.root = root.As<Napi::String>().Utf8Value();
  split_paths(env, paths, &req.paths);
  size_t n = req.paths.size();
  auto obuf = oids.As<Napi::Buffer<uint8_t>>();
  auto marr = modes.As<Napi::Uint32Array>();
  auto sarr = sizes.As<Napi::Float64Array>();
  if (obuf.Length() != n * 20 || marr.ElementLength() != n || sarr.ElementLength() != n)
    throw_arg(env, "paths, oids, modes and sizes differ in length");
  for (size_t i = 0; i < n; i++) {
    double size = sarr[i];
    if (!(size >= 0 && size <= kMaxSafeInteger)) throw_arg(env, "sizes must be whole byte counts");
  }
  req.oids = obuf.Data();
  req.modes = marr.Data();
  req.sizes = sarr.Data();
  if (!flags.IsUndefined()) {
    auto farr = flags.As<Napi::Uint8Array>();
    if (farr.ElementLength() != n) throw_arg(env, "flags differ in length from paths");
    req.flags = farr.Data();
  }
  Napi::Value convs = o.Get("conversions"), convert = o.Get("convert");
  if (!convert.IsUndefined()) {
    if (!convs.IsArray()) throw_arg(env, "conversions must be an array");
    Napi::Array arr = convs.As<Napi::Array>();
    if (arr.Length() > 255) throw_arg(env, "at most 255 conversions per request");
    for (uint32_t k = 0; k < arr.Length(); k++)
      req.conversions.push_back(conversion_arg(env, arr.Get(k)));
    if (!convert.IsTypedArray() ||
        convert.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
        convert.As<Napi::Uint8Array>().ElementLength() != n)
      throw_arg(env, "convert must be a Uint8Array, one per path");
    auto carr = convert.As<Napi::Uint8Array>();
    for (size_t k = 0; k < n; k++) {
      if (carr[k] > req.conversions.size()) throw_arg(env, "convert names a missing conversion");
    }
    req.convert = carr.Data();
  }
  Napi::Value contents = o.Get("contents");
  if (!contents.IsUndefined()) {
    // Content to write as it is (already converted and filtered): no conversion applies.
    if (req.convert != nullptr) throw_arg(env, "contents and convert exclude each other");
    if (!contents.IsArray() || contents.As<Napi::Array>().Length() != n)
      throw_arg(env, "contents must be an Array with one Buffer per path");
    Napi::Array arr = contents.As<Napi::Array>();
    for (uint32_t i = 0; i < n; i++) {
      Napi::Value c = arr.Get(i);
      if (!c.IsBuffer()) throw_arg(env, "contents must hold Buffers");
      auto b = c.As<Napi::Buffer<uint8_t>>();
      req.contents.emplace_back(b.Data(), b.Length());
    }
  }
  Napi::Value sync = o.Get("sync");
  if (!sync.IsUndefined()) {
    double m = integer_arg(env, sync, pc::kSyncNone, pc::kSyncStart,
                           "sync (0 none, 1 fsync, 2 start writeback)");
    req.sync = static_cast<pc::SyncMode>(static_cast<uint8_t>(m));
  }
  req.stream_threshold =
      static_cast<uint64_t>(integer_arg(env, threshold, 0, kMaxSafeInteger, "streamThreshold"));
  return parsed;
}

Napi::Object result_to_js(Napi::Env env, pc::WriteResult& res) {
  Napi::Object out = Napi::Object::New(env);
  auto stats = Napi::Uint32Array::New(env, res.stats.size());
  if (!res.stats.empty())
    std::memcpy(stats.Data(), res.stats.data(), res.stats.size() * sizeof(uint32_t));
  auto status = Napi::Int32Array::New(env, res.status.size());
  if (!res.status.empty())
    std::memcpy(status.Data(), res.status.data(), res.status.size() * sizeof(int32_t));
  Napi::Array errors = Napi::Array::New(env, res.errors.size());
  for (size_t i = 0; i < res.errors.size(); i++) {
    Napi::Object e = Napi::Object::New(env);
    e.Set("index", Napi::Number::New(env, static_cast<double>(res.errors[i].index)));
    e.Set("code", Napi::String::New(env, res.errors[i].code));
    e.Set("message", Napi::String::New(env, res.errors[i].message));
    errors.Set(static_cast<uint32_t>(i), e);
  }
  Napi::Array warnings = Napi::Array::New(env, res.warnings.size());
  for (size_t i = 0; i < res.warnings.size(); i++) {
    Napi::Object w = Napi::Object::New(env);
    w.Set("index", Napi::Number::New(env, static_cast<double>(res.warnings[i].index)));
    w.Set("message", Napi::String::New(env, res.warnings[i].message));
    warnings.Set(static_cast<uint32_t>(i), w);
  }
  out.Set("stats", stats);
  out.Set("status", status);
  out.Set("errors", errors);
  out.Set("warnings", warnings);
  out.Set("bytes", Napi::Number::New(env, static_cast<double>(res.bytes)));
  return out;
}

// convertToWorktree(data: Buffer, conversion, oid: Buffer, path: string)
//   -> { data: Buffer | null (unchanged), warning?: string }
Napi::Value ConvertToWorktree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer() || !info[3].IsString())
    throw_arg(env, "convertToWorktree(data, conversion, oid, path)");
  auto data = info[0].As<Napi::Buffer<uint8_t>>();
  pc::Conversion conv = conversion_arg(env, info[1]);
  const uint8_t* oid = oid_arg(info[2], env);
  std::vector<uint8_t> out;
  std::string warning;
  bool changed = pc::to_worktree(conv, oid, data.Data(), data.Length(),
                                 info[3].As<Napi::String>().Utf8Value(), &out, &warning);
  Napi::Object res = Napi::Object::New(env);
  res.Set("data", changed ? Napi::Value(copy_buffer(env, out.data(), out.size())) : env.Null());
  if (!warning.empty()) res.Set("warning", Napi::String::New(env, warning));
  return res;
}

// convertToGit(data: Buffer, conversion, indexHasCrlf: boolean, path: string)
//   -> { data: Buffer | null (unchanged), warning?: string }
Napi::Value ConvertToGit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer() || !info[3].IsString())
    throw_arg(env, "convertToGit(data, conversion, indexHasCrlf, path)");
  auto data = info[0].As<Napi::Buffer<uint8_t>>();
  pc::Conversion conv = conversion_arg(env, info[1]);
  std::vector<uint8_t> out;
  std::string warning;
  bool changed = pc::to_git(conv, data.Data(), data.Length(), info[2].ToBoolean().Value(),
                            info[3].As<Napi::String>().Utf8Value(), &out, &warning);
  Napi::Object res = Napi::Object::New(env);
  res.Set("data", changed ? Napi::Value(copy_buffer(env, out.data(), out.size())) : env.Null());
  if (!warning.empty()) res.Set("warning", Napi::String::New(env, warning));
  return res;
}

// blobHasCrlf(data: Buffer) -> boolean: git's has_crlf_in_index() test of a blob's bytes.
Napi::Value BlobHasCrlf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer()) throw_arg(env, "blobHasCrlf(data)");
  auto data = info[0].As<Napi::Buffer<uint8_t>>();
  return Napi::Boolean::New(env, pc::blob_has_crlf(data.Data(), data.Length()));
}

class OdbWrap;

// Runs write_files on a libuv thread so the sequential path never blocks the event loop.
class WriteWorker : public Napi::AsyncWorker {
 public:
  WriteWorker(Napi::Env env, OdbWrap* owner, std::unique_ptr<ParsedRequest> req);
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override;
  void OnOK() override;
  void OnError(const Napi::Error& e) override;

 private:
  Napi::Promise::Deferred deferred_;
  OdbWrap* owner_;
  Napi::ObjectReference owner_ref_;
  std::unique_ptr<ParsedRequest> req_;
  pc::WriteResult result_;
  std::string code_;
};

// A walk's directories for JS (see walkTree).
Napi::Object dirs_to_js(Napi::Env env, const std::vector<pc::WalkDir>& dirs) {
  std::string paths;
  std::string oids;
  oids.reserve(20 * dirs.size());
  auto ranges = Napi::Uint32Array::New(env, 3 * dirs.size());
  for (size_t j = 0; j < dirs.size(); j++) {
    const pc::WalkDir& d = dirs[j];
    paths.append(d.path);
    paths.push_back('\0');
    oids.append(d.oid);
    ranges[3 * j] = static_cast<uint32_t>(d.entry_begin);
    ranges[3 * j + 1] = static_cast<uint32_t>(d.entry_end);
    ranges[3 * j + 2] = d.subtrees;
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("count", Napi::Number::New(env, static_cast<double>(dirs.size())));
  out.Set("paths", copy_buffer(env, paths.data(), paths.size()));
  out.Set("oids", copy_buffer(env, oids.data(), oids.size()));
  out.Set("ranges", ranges);
  return out;
}

class OdbWrap : public Napi::ObjectWrap<OdbWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Odb",
                       {
                           InstanceMethod<&OdbWrap::Read>("read"),
                           InstanceMethod<&OdbWrap::WalkTree>("walkTree"),
                           InstanceMethod<&OdbWrap::LendIndex>("lendIndex"),
                           InstanceMethod<&OdbWrap::Info>("info"),
                           InstanceMethod<&OdbWrap::ResolvePrefix>("resolvePrefix"),
                           InstanceMethod<&OdbWrap::WriteFiles>("writeFiles"),
                           InstanceMethod<&OdbWrap::WriteFilesAsync>("writeFilesAsync"),
                           InstanceMethod<&OdbWrap::ReleaseCache>("releaseCache"),
                           InstanceMethod<&OdbWrap::Close>("close"),
                       });
  }

  explicit OdbWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<OdbWrap>(info) {
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

  pc::Odb& odb(Napi::Env env) {
    if (!odb_) throw_arg(env, "the object database is closed");
    if (busy_) throw_arg(env, "the object database is busy writing");
    return *odb_;
  }
  void set_busy(bool b) { busy_ = b; }
  pc::Odb* raw() { return odb_.get(); }

 private:
  Napi::Value Read(const Napi::CallbackInfo& info) {
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

  // walkTree(oid, protect, keep?) -> { count, paths, starts, oids, modes, dirs }: with keep, the walk is
  // kept for the next walks on this reader (until releaseCache), which copy the subtrees it
  // shares with them, as they copy those the index lent (lendIndex). dirs: every directory, in
  // pre-order: { count, paths (each with its final '/' and a NUL), oids, ranges (entry begin,
  // entry end, subtrees: three words per directory) }.
  Napi::Value WalkTree(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const uint8_t* oid = oid_arg(info[0], env);
    pc::PathProtection protect = protection_arg(env, info[1]);
    const bool keep = info.Length() > 2 && info[2].ToBoolean().Value();
    pc::FlatTree tree;
    std::vector<pc::WalkDir> dirs;
    try {
      pc::walk_tree(odb(env), oid, protect, &tree, &dirs, {memo_.get(), lender_.get()});
    } catch (const pc::Error& e) {
      throw_native(env, e);
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("count", Napi::Number::New(env, static_cast<double>(tree.count)));
    out.Set("paths", copy_buffer(env, tree.paths.data(), tree.paths.size()));
    out.Set("oids", copy_buffer(env, tree.oids.data(), tree.oids.size()));
    auto modes = Napi::Uint32Array::New(env, tree.count);
    if (tree.count > 0) std::memcpy(modes.Data(), tree.modes.data(), tree.count * 4);
    out.Set("modes", modes);
    // Where each path starts, so that JS need not look for the NULs.
    auto starts = Napi::Uint32Array::New(env, tree.count + 1);
    size_t at = 0;
    for (size_t i = 0; i < tree.count; i++) {
      starts[i] = static_cast<uint32_t>(at);
      at += std::strlen(tree.paths.data() + at) + 1;
    }
    starts[tree.count] = static_cast<uint32_t>(at);
    out.Set("starts", starts);
    out.Set("dirs", dirs_to_js(env, dirs));
    if (keep) {
      auto record = std::make_unique<pc::WalkMemo>();
      pc::keep_walk(std::move(tree), std::move(dirs), protect, record.get());
      memo_ = std::move(record);
    }
    return out;
  }

  // lendIndex(index, stages, extFlags, cacheTree: Buffer, protect) -> { lent, root }: the
  // index's entries under the directories its cache-tree (the TREE extension's data) names, for
  // later walks on this reader until releaseCache (see index_lender.h). The index's arrays are
  // held, not copied, until then; `root` is the id of the tree the whole index holds, when it
  // may all be lent (else null). The caller has checked its paths under `protect`.
  Napi::Value LendIndex(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    odb(env);
    lender_.reset();
    lender_refs_.clear();
    pc::PathList index = pc::binding::path_list_arg(env, info[0], "index");
    if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
        info[1].As<Napi::Uint8Array>().ElementLength() < index.count)
      throw_arg(env, "stages must be a Uint8Array, one per entry");
    if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint16_array ||
        info[2].As<Napi::Uint16Array>().ElementLength() < index.count)
      throw_arg(env, "extFlags must be a Uint16Array, one per entry");
    if (!info[3].IsBuffer()) throw_arg(env, "cacheTree must be a Buffer");
    auto data = info[3].As<Napi::Buffer<uint8_t>>();
    std::vector<pc::CacheTreeDir> dirs;
    Napi::Object out = Napi::Object::New(env);
    out.Set("lent", Napi::Number::New(env, 0));
    out.Set("root", env.Null());
    if (!pc::parse_cache_tree(data.Data(), data.Length(), &dirs)) return out;
    auto lender = std::make_unique<pc::WalkMemo>();
    size_t lent = pc::lend_index(index, info[1].As<Napi::Uint8Array>().Data(),
                                 info[2].As<Napi::Uint16Array>().Data(), dirs,
                                 protection_arg(env, info[4]), lender.get());
    if (lent > 0) {
      Napi::Object list = info[0].As<Napi::Object>();
      for (const char* key : {"paths", "modes", "oids"})
        lender_refs_.push_back(Napi::Persistent(list.Get(key).As<Napi::Object>()));
      // The whole index lendable: it holds exactly the tree its root names.
      if (lender->lendable.count("") == 1)
        out.Set("root", copy_buffer(env, lender->dirs[0].oid.data(), 20));
      lender_ = std::move(lender);
    }
    out.Set("lent", Napi::Number::New(env, static_cast<double>(lent)));
    return out;
  }

  // For each 20-byte id: [pack (-1 loose, -2 missing), offset, inflated size, type].
  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsBuffer() || info[0].As<Napi::Buffer<uint8_t>>().Length() % 20 != 0)
      throw_arg(env, "info expects a Buffer of 20-byte ids");
    auto ids = info[0].As<Napi::Buffer<uint8_t>>();
    size_t n = ids.Length() / 20;
    if (n > static_cast<size_t>(INT32_MAX)) throw_arg(env, "info: too many ids");
    // Optional: an Int32Array of n filled with the positions in the order they were read.
    int32_t* order = nullptr;
    if (info.Length() > 1 && !info[1].IsUndefined()) {
      if (!info[1].IsTypedArray() ||
          info[1].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array ||
          info[1].As<Napi::Int32Array>().ElementLength() != n)
        throw_arg(env, "info: order must be an Int32Array with one element per id");
      order = info[1].As<Napi::Int32Array>().Data();
    }
    auto out = Napi::Float64Array::New(env, n * 4);
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

  // Returns { count: 0 | 1 | 2, oid?: Buffer } for a hex prefix (2 = ambiguous).
  Napi::Value ResolvePrefix(const Napi::CallbackInfo& info) {
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

  Napi::Value WriteFiles(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto parsed = parse_request(env, info[0]);
    pc::WriteResult result;
    try {
      pc::write_files(odb(env), parsed->req, &result);
    } catch (const pc::Error& e) {
      throw_native(env, e);
    }
    return result_to_js(env, result);
  }

  Napi::Value WriteFilesAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto parsed = parse_request(env, info[0]);
    odb(env);  // throws if closed or busy
    auto* worker = new WriteWorker(env, this, std::move(parsed));
    Napi::Promise promise = worker->promise();
    busy_ = true;
    worker->Queue();
    return promise;
  }

  Napi::Value ReleaseCache(const Napi::CallbackInfo& info) {
    odb(info.Env()).release_cache();
    memo_.reset();
    lender_.reset();
    lender_refs_.clear();
    return info.Env().Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (busy_) throw_arg(info.Env(), "the object database is busy writing");
    odb_.reset();
    memo_.reset();
    lender_.reset();
    lender_refs_.clear();
    return info.Env().Undefined();
  }

  std::unique_ptr<pc::Odb> odb_;
  std::unique_ptr<pc::WalkMemo> memo_;    // the last walk kept (walkTree's `keep`)
  std::unique_ptr<pc::WalkMemo> lender_;  // the index, by its cache-tree (lendIndex)
  std::vector<Napi::ObjectReference> lender_refs_;  // the arrays lender_ points into
  bool busy_ = false;
};

WriteWorker::WriteWorker(Napi::Env env, OdbWrap* owner, std::unique_ptr<ParsedRequest> req)
    : Napi::AsyncWorker(env, "pcheckout.write"),
      deferred_(Napi::Promise::Deferred::New(env)),
      owner_(owner),
      owner_ref_(Napi::Persistent(owner->Value())),
      req_(std::move(req)) {}

void WriteWorker::Execute() {
  try {
    pc::write_files(*owner_->raw(), req_->req, &result_);
  } catch (const pc::Error& e) {
    code_ = pc::code_name(e.code());
    SetError(e.what());
  }
}

void WriteWorker::OnOK() {
  owner_->set_busy(false);
  deferred_.Resolve(result_to_js(Env(), result_));
}

void WriteWorker::OnError(const Napi::Error& e) {
  owner_->set_busy(false);
  deferred_.Reject(make_error(Env(), code_.empty() ? pc::code_name(Code::Internal) : code_.c_str(), e.Message())
                       .Value());
}

// writeParallel(readers: Odb[], chunks: WriteRequest[], cancel: Int32Array, onChunk)
//   -> Promise<void>: the chunks written by one native thread per reader (parallel_write.h).
// onChunk(k, result) runs on the JS thread as each chunk finishes, with chunk k's result or
// { failure: { code, message } }; all of them before the promise settles. Storing a nonzero
// value in cancel[0] (Atomics.store) stops every thread before its next file. A throw from
// onChunk stops the writes too, and the promise is rejected with it.
class ParallelWorker : public Napi::AsyncProgressQueueWorker<uint32_t> {
 public:
  ParallelWorker(Napi::Env env, std::vector<OdbWrap*> owners, std::vector<Napi::Object> keep,
                 std::vector<std::unique_ptr<ParsedRequest>> chunks, int32_t* cancel,
                 Napi::Function on_chunk)
      : Napi::AsyncProgressQueueWorker<uint32_t>(env, "pcheckout.writeParallel"),
        deferred_(Napi::Promise::Deferred::New(env)),
        owners_(std::move(owners)),
        chunks_(std::move(chunks)),
        cancel_(cancel),
        on_chunk_(Napi::Persistent(on_chunk)) {
    for (const Napi::Object& o : keep) keep_.push_back(Napi::Persistent(o));
    for (OdbWrap* w : owners_) {
      w->set_busy(true);
      readers_.push_back(w->raw());
    }
    for (auto& c : chunks_) requests_.push_back(&c->req);
  }

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute(const ExecutionProgress& progress) override {
    try {
      pc::write_parallel(readers_, requests_, &outcomes_, [&progress](size_t k) {
        uint32_t index = static_cast<uint32_t>(k);
        progress.Send(&index, 1);
      });
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnProgress(const uint32_t* data, size_t count) override {
    Napi::Env env = Env();
    for (size_t i = 0; i < count; i++) {
      size_t k = data[i];
      if (k >= outcomes_.size() || failed_) continue;
      Napi::HandleScope scope(env);
      pc::ChunkOutcome& out = outcomes_[k];
      Napi::Object result;
      if (out.failed) {
        result = Napi::Object::New(env);
        Napi::Object failure = Napi::Object::New(env);
        failure.Set("code", Napi::String::New(env, out.code));
        failure.Set("message", Napi::String::New(env, out.message));
        result.Set("failure", failure);
      } else {
        result = result_to_js(env, out.result);
        result.Set("cancelled", Napi::Boolean::New(env, out.result.cancelled));
      }
      out = pc::ChunkOutcome();  // its memory back now; JS holds the result
      try {
        on_chunk_.Call({Napi::Number::New(env, static_cast<double>(k)), result});
      } catch (const Napi::Error& e) {
        failed_ = true;
        error_ = Napi::Persistent(e.Value());
        __atomic_store_n(cancel_, 1, __ATOMIC_RELAXED);
      }
    }
  }

  void OnOK() override {
    release();
    if (failed_) {
      deferred_.Reject(error_.Value());
    } else {
      deferred_.Resolve(Env().Undefined());
    }
  }

  void OnError(const Napi::Error& e) override {
    release();
    deferred_.Reject(make_error(Env(), pc::code_name(Code::Internal), e.Message()).Value());
  }

 private:
  void release() {
    for (OdbWrap* w : owners_) w->set_busy(false);
  }

  Napi::Promise::Deferred deferred_;
  std::vector<OdbWrap*> owners_;
  std::vector<Napi::ObjectReference> keep_;  // the readers and the cancel flag stay alive
  std::vector<pc::Odb*> readers_;
  std::vector<std::unique_ptr<ParsedRequest>> chunks_;
  std::vector<const pc::WriteRequest*> requests_;
  std::vector<pc::ChunkOutcome> outcomes_;
  int32_t* cancel_;
  Napi::FunctionReference on_chunk_;
  bool failed_ = false;
  Napi::ObjectReference error_;
};

// Distinct, open, idle Odb objects (1 to 1024), and the JS objects that own them.
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

// decodeStats(readers): what the readers decoded since they were last asked, added together
// (bases told apart by pack and offset across readers); each reader starts a new record.
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

Napi::Value WriteParallel(const Napi::CallbackInfo& info, const Napi::FunctionReference& odb_class) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsArray() || !info[1].IsArray() || !info[3].IsFunction())
    throw_arg(env, "writeParallel(readers, chunks, cancel, onChunk)");
  Napi::Value cancel = info[2];
  if (!cancel.IsTypedArray() || cancel.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array ||
      cancel.As<Napi::Int32Array>().ElementLength() < 1)
    throw_arg(env, "cancel must be an Int32Array");
  std::vector<Napi::Object> keep;
  std::vector<OdbWrap*> owners = reader_list(env, info[0], odb_class, &keep);
  Napi::Array list = info[1].As<Napi::Array>();
  int32_t* flag = cancel.As<Napi::Int32Array>().Data();
  std::vector<std::unique_ptr<ParsedRequest>> chunks;
  for (uint32_t i = 0; i < list.Length(); i++) {
    chunks.push_back(parse_request(env, list.Get(i)));
    chunks.back()->req.cancel = flag;
  }
  keep.push_back(cancel.As<Napi::Object>());
  auto* worker = new ParallelWorker(env, std::move(owners), std::move(keep), std::move(chunks), flag,
                                    info[3].As<Napi::Function>());
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

// The names of every error code native code can report (see common.h).
Napi::Array error_codes(Napi::Env env) {
  Napi::Array out = Napi::Array::New(env);
  uint32_t i = 0;
  for (Code c : pc::kAllCodes) out.Set(i++, Napi::String::New(env, pc::code_name(c)));
  return out;
}

Napi::Object numbers(Napi::Env env, std::initializer_list<std::pair<const char*, int>> list) {
  Napi::Object o = Napi::Object::New(env);
  for (const auto& [name, value] : list) o.Set(name, Napi::Number::New(env, value));
  return o;
}

// The layouts and constants TypeScript reads or writes (src/addon.ts checks them at load):
// the stat words, per-file and per-path statuses, verdicts, write flags, sync modes and the
// path-protection bits.
Napi::Object layout(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("statWords", Napi::Number::New(env, static_cast<double>(pc::kStatWords)));
  Napi::Array fields = Napi::Array::New(env, pc::kStatWords);
  for (uint32_t i = 0; i < pc::kStatWords; i++)
    fields.Set(i, Napi::String::New(env, pc::kStatFields[i]));
  o.Set("statFields", fields);
  o.Set("fileStatus", numbers(env, {{"written", pc::kWritten},
                                    {"collided", pc::kCollided},
                                    {"failed", pc::kFailed}}));
  o.Set("statStatus", numbers(env, {{"present", pc::kPresent},
                                    {"absent", pc::kAbsent},
                                    {"failed", pc::kStatFailed}}));
  o.Set("verdict", numbers(env, {{"none", pc::kNoVerdict},
                                 {"clean", pc::kClean},
                                 {"dirty", pc::kDirty},
                                 {"hash", pc::kHash}}));
  o.Set("writeFlags", numbers(env, {{"replace", pc::kReplace}}));
  o.Set("sync", numbers(env, {{"none", pc::kSyncNone},
                              {"file", pc::kSyncFile},
                              {"start", pc::kSyncStart}}));
  o.Set("protect", numbers(env, {{"ntfs", kProtectNtfs}, {"hfs", kProtectHfs}}));
  o.Set("sameEntry", numbers(env, {{"indexTarget", pc::kSameIM},
                                   {"indexHead", pc::kSameIH},
                                   {"headTarget", pc::kSameHM}}));
  return o;
}

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) {
    Napi::Function odb = OdbWrap::Define(env);
    odb_class_ = Napi::Persistent(odb);
    DefineAddon(exports, {
                             InstanceValue("Odb", odb, napi_enumerable),
                             InstanceMethod<&Addon::Parallel>("writeParallel", napi_enumerable),
                             InstanceMethod<&Addon::Decoded>("decodeStats", napi_enumerable),
                             InstanceValue("Worktree", pc::binding::define_worktree(env),
                                           napi_enumerable),
                             InstanceValue("Watch", pc::binding::define_watch(env),
                                           napi_enumerable),
                             InstanceValue("watchFlags", pc::binding::watch_flags(env),
                                           napi_enumerable),
                             InstanceValue("inflater", Napi::String::New(env, pc::inflater_name()),
                                           napi_enumerable),
                             InstanceMethod<&Addon::Stat>("statFiles", napi_enumerable),
                             InstanceMethod<&Addon::Map>("mapFile", napi_enumerable),
                             InstanceMethod<&Addon::ParseIndex>("parseIndexEntries",
                                                                napi_enumerable),
                             InstanceMethod<&Addon::Verify>("verifyPath", napi_enumerable),
                             InstanceMethod<&Addon::VerifyAll>("verifyPaths", napi_enumerable),
                             InstanceValue("openat2", Napi::Boolean::New(env, pc::have_openat2()),
                                           napi_enumerable),
                             InstanceMethod<&Addon::SyncFs>("syncFilesystem", napi_enumerable),
                             InstanceMethod<&Addon::Fsync>("fsyncPaths", napi_enumerable),
                             InstanceMethod<&Addon::Rows>("joinRows", napi_enumerable),
                             InstanceMethod<&Addon::Gather>("gatherEntries", napi_enumerable),
                             InstanceMethod<&Addon::GatherStat>("gatherStats", napi_enumerable),
                             InstanceMethod<&Addon::ToDecide>("rowsToDecide", napi_enumerable),
                             InstanceMethod<&Addon::Dirs>("dirsOf", napi_enumerable),
                             InstanceMethod<&Addon::WriteIndex>("serializeIndex", napi_enumerable),
                             InstanceMethod<&Addon::TreeExtension>("cacheTreeExtension",
                                                                   napi_enumerable),
                             InstanceMethod<&Addon::ToWorktree>("convertToWorktree",
                                                                napi_enumerable),
                             InstanceMethod<&Addon::ToGit>("convertToGit", napi_enumerable),
                             InstanceMethod<&Addon::HasCrlf>("blobHasCrlf", napi_enumerable),
                             InstanceValue("errorCodes", error_codes(env), napi_enumerable),
                             InstanceValue("layout", layout(env), napi_enumerable),
                         });
  }

 private:
  Napi::Value Stat(const Napi::CallbackInfo& info) { return StatFiles(info); }
  Napi::Value Map(const Napi::CallbackInfo& info) { return MapFile(info); }
  Napi::Value ParseIndex(const Napi::CallbackInfo& info) { return ParseIndexEntries(info); }
  Napi::Value Verify(const Napi::CallbackInfo& info) { return VerifyPath(info); }
  Napi::Value VerifyAll(const Napi::CallbackInfo& info) { return VerifyPaths(info); }
  Napi::Value SyncFs(const Napi::CallbackInfo& info) { return SyncFilesystem(info); }
  Napi::Value Fsync(const Napi::CallbackInfo& info) { return FsyncPaths(info); }
  Napi::Value ToWorktree(const Napi::CallbackInfo& info) { return ConvertToWorktree(info); }
  Napi::Value Rows(const Napi::CallbackInfo& info) { return pc::binding::JoinRows(info); }
  Napi::Value Gather(const Napi::CallbackInfo& info) { return pc::binding::GatherEntries(info); }
  Napi::Value GatherStat(const Napi::CallbackInfo& info) { return pc::binding::GatherStats(info); }
  Napi::Value ToDecide(const Napi::CallbackInfo& info) { return pc::binding::RowsToDecide(info); }
  Napi::Value Dirs(const Napi::CallbackInfo& info) { return pc::binding::DirsOf(info); }
  Napi::Value WriteIndex(const Napi::CallbackInfo& info) { return pc::binding::SerializeIndex(info); }
  Napi::Value TreeExtension(const Napi::CallbackInfo& info) {
    return pc::binding::CacheTreeExtension(info);
  }
  Napi::Value ToGit(const Napi::CallbackInfo& info) { return ConvertToGit(info); }
  Napi::Value HasCrlf(const Napi::CallbackInfo& info) { return BlobHasCrlf(info); }
  Napi::Value Parallel(const Napi::CallbackInfo& info) { return WriteParallel(info, odb_class_); }
  Napi::Value Decoded(const Napi::CallbackInfo& info) { return DecodeStats(info, odb_class_); }

  Napi::FunctionReference odb_class_;
};

}  // namespace

NODE_API_ADDON(Addon)
