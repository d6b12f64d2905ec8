#include "binding/index.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mapped_file.h"
#include "binding/rows.h"
#include "binding/util.h"
#include "index/cache_tree.h"
#include "index/index_entries.h"
#include "index/index_file_writer.h"
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

// The files mapFile has mapped and not yet unmapped, by the address of their bytes: only
// those are ever released (advice to drop an anonymous page would lose its bytes).
std::mutex mapped_mutex;
std::unordered_map<const uint8_t*, const pc::MappedFile*>& mapped_files() {
  static auto* files = new std::unordered_map<const uint8_t*, const pc::MappedFile*>();
  return *files;
}

// The mapping `data` is, whole, or null (any other Buffer, or a part of a mapping). The mapping
// lives as long as the Buffer, which the caller holds.
const pc::MappedFile* mapping_of(const Napi::Buffer<uint8_t>& data) {
  std::lock_guard<std::mutex> lock(mapped_mutex);
  auto at = mapped_files().find(data.Data());
  if (at == mapped_files().end() || at->second->size() != data.Length()) return nullptr;
  return at->second;
}

}  // namespace

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
  auto oids = new_bytes(env, n * 20);
  auto modes = new_array<Napi::Uint32Array>(env, n);
  auto stats = new_array<Napi::Uint32Array>(env, n * pc::kStatWords);
  auto stages = new_array<Napi::Uint8Array>(env, n);
  auto ext_flags = new_array<Napi::Uint16Array>(env, n);
  auto assume_valid = new_array<Napi::Uint8Array>(env, n);
  auto offsets = new_array<Napi::Uint32Array>(env, n);
  auto starts = new_array<Napi::Uint32Array>(env, n + 1);
  size_t cap = pc::index_path_bound(fileEnd, static_cast<uint32_t>(n));
  if (version == 4) cap = std::max<size_t>(4096, 4 * cap);
  for (;;) {
    auto paths = new_bytes(env, cap);
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
    out.Set("sparseDirs", Napi::Number::New(env, static_cast<double>(entries.sparse_dirs)));
    return out;
  }
}

// mapFile(path) -> { data: Buffer, mtimeSec, mtimeNsec, identity } | null: the whole file as a
// read-only mapping, with the modification time and identity (MappedFile::identity) of the file
// mapped (null when it does not exist).
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
  out.Set("identity", Napi::String::New(env, file->identity()));
  if (file->size() == 0) {
    out.Set("data", Napi::Buffer<uint8_t>::New(env, 0));
    return out;
  }
  // PROT_READ: the Buffer must never be written to (a write would fault).
  uint8_t* data = const_cast<uint8_t*>(file->data());
  size_t size = file->size();
  {
    std::lock_guard<std::mutex> lock(mapped_mutex);
    mapped_files()[file->data()] = file.get();
  }
  out.Set("data", Napi::Buffer<uint8_t>::New(
                      env, data, size,
                      [](Napi::Env, uint8_t*, pc::MappedFile* f) {
                        {
                          std::lock_guard<std::mutex> lock(mapped_mutex);
                          mapped_files().erase(f->data());
                        }
                        delete f;
                      },
                      file.release()));
  return out;
}

// Drops the pages of a file mapFile mapped from this process (its bytes stay readable: a later
// read faults them back in from the page cache). True if `data` is such a mapping.
Napi::Value ReleaseMapped(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsBuffer()) throw_arg(env, "releaseMapped(data: Buffer)");
  const pc::MappedFile* mapping = mapping_of(info[0].As<Napi::Buffer<uint8_t>>());
  if (mapping == nullptr) return Napi::Boolean::New(env, false);
  mapping->release();
  return Napi::Boolean::New(env, true);
}

namespace {
// The arguments serializeIndex and writeIndexFile share, from `at` on: list, stats, extFlags,
// version, extensions. The views into them live as long as the call.
IndexWrite index_write_args(const Napi::CallbackInfo& info, size_t at) {
  Napi::Env env = info.Env();
  IndexWrite in;
  in.entries = path_list_arg(env, info[at], "list");
  in.stats = typed_arg<Napi::Uint32Array>(env, info[at + 1],
                                          "stats has the wrong type or is too short",
                                          at_least(in.entries.count * kStatWords))
                 .Data();
  in.ext_flags = info[at + 2].IsNull()
                     ? nullptr
                     : typed_arg<Napi::Uint16Array>(env, info[at + 2],
                                                    "extFlags has the wrong type or is too short",
                                                    at_least(in.entries.count))
                           .Data();
  in.version = static_cast<uint32_t>(integer_arg(env, info[at + 3], 2, 4, "version"));
  if (!info[at + 4].IsArray()) throw_arg(env, "extensions must be an array of Buffers");
  Napi::Array exts = info[at + 4].As<Napi::Array>();
  for (uint32_t k = 0; k < exts.Length(); k++) {
    Napi::Value x = exts.Get(k);
    if (!x.IsBuffer()) throw_arg(env, "extensions must be an array of Buffers");
    auto b = x.As<Napi::Buffer<char>>();
    in.extensions.emplace_back(b.Data(), b.Length());
  }
  return in;
}
}  // namespace

Napi::Value SerializeIndex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5) throw_arg(env, "serializeIndex(list, stats, extFlags, version, extensions)");
  IndexWrite in = index_write_args(info, 0);
  // A part of the file: entries [from, to) (see index_writer.h).
  const double count = static_cast<double>(in.entries.count);
  if (info.Length() > 5 && !info[5].IsUndefined())
    in.from = static_cast<size_t>(integer_arg(env, info[5], 0, count, "from"));
  if (info.Length() > 6 && !info[6].IsUndefined())
    in.to = static_cast<size_t>(integer_arg(env, info[6], 0, count, "to"));
  if (in.to != SIZE_MAX && in.to < in.from) throw_arg(env, "to must not be below from");
  return to_buffer(env, serialize_index(in));
}

// The whole file written to descriptor `fd` as it is serialized (index_file_writer.h):
// 0, or the errno of the write that failed.
Napi::Value WriteIndexFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 6)
    throw_arg(env, "writeIndexFile(fd, list, stats, extFlags, version, extensions)");
  const int fd = static_cast<int>(integer_arg(env, info[0], 0, INT32_MAX, "fd"));
  IndexWrite in = index_write_args(info, 1);
  return Napi::Number::New(env, write_index_file(in, fd));
}

// indexFileEquals(file: Buffer, list, stats, extFlags, version, extensions) -> whether the file
// these make is `file` byte for byte (an index read, its checksum verified): compared as it is
// serialized; a mapping of mapFile's has its pages dropped as they are compared
// (index_file_writer.h).
Napi::Value IndexFileEquals(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 6 || !info[0].IsBuffer())
    throw_arg(env, "indexFileEquals(file: Buffer, list, stats, extFlags, version, extensions)");
  auto file = info[0].As<Napi::Buffer<uint8_t>>();
  IndexWrite in = index_write_args(info, 1);
  // Only a whole mapping of mapFile's has its pages dropped: those of any other Buffer are
  // its bytes.
  const bool mapped = mapping_of(file) != nullptr;
  return Napi::Boolean::New(env, index_file_equals(in, file.Data(), file.Length(), mapped));
}

Napi::Value CacheTreeExtension(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsBuffer())
    throw_arg(env, "cacheTreeExtension(dirs, differing: Buffer, sparse?)");
  Napi::Object d = info[0].As<Napi::Object>();
  std::vector<const char*> paths;
  split_paths(env, d.Get("paths"), &paths);
  Napi::Value oids = d.Get("oids");
  if (!oids.IsBuffer() || oids.As<Napi::Buffer<char>>().Length() != 20 * paths.size())
    throw_arg(env, "dirs.oids must hold 20 bytes per directory");
  auto ranges = typed_arg<Napi::Uint32Array>(env, d.Get("ranges"),
                                             "dirs.ranges has the wrong type or is too short",
                                             at_least(3 * paths.size()));
  std::vector<int32_t> entries(paths.size());
  for (size_t j = 0; j < paths.size(); j++) {
    uint32_t begin = ranges[3 * j], end = ranges[3 * j + 1];
    if (end < begin || end - begin > INT32_MAX) throw_arg(env, "dirs.ranges out of order");
    entries[j] = static_cast<int32_t>(end - begin);
  }
  auto differing = info[1].As<Napi::Buffer<char>>();
  const bool sparse_given = info.Length() > 2 && !info[2].IsNull() && !info[2].IsUndefined();
  if (!sparse_given) {
    // A walk's directories as they are: no node per directory (a million-file tree has
    // 200,000 of them, and building them was most of this call).
    std::string out;
    if (!write_walk_cache_tree(paths, oids.As<Napi::Buffer<uint8_t>>().Data(), entries,
                               differing.Data(), differing.Length(), &out))
      throw_arg(env, "dirs must be a walk's directories: pre-order, byte order, from the root");
    return to_buffer(env, out);
  }
  std::vector<CacheTreeDir> dirs(paths.size());
  for (size_t j = 0; j < paths.size(); j++) {
    dirs[j].path = paths[j];
    dirs[j].entries = entries[j];
    dirs[j].oid.assign(oids.As<Napi::Buffer<char>>().Data() + 20 * j, 20);
  }
  invalidate_above(&dirs, differing.Data(), differing.Length());
  {
    if (!info[2].IsObject()) throw_arg(env, "sparse must be { paths, oids } or null");
    Napi::Object o = info[2].As<Napi::Object>();
    std::vector<const char*> sparse_paths;
    split_paths(env, o.Get("paths"), &sparse_paths);
    Napi::Value sparse_oids = o.Get("oids");
    if (!sparse_oids.IsBuffer() ||
        sparse_oids.As<Napi::Buffer<char>>().Length() != 20 * sparse_paths.size())
      throw_arg(env, "sparse.oids must hold 20 bytes per directory");
    std::vector<SparseDir> sparse(sparse_paths.size());
    for (size_t k = 0; k < sparse.size(); k++) {
      sparse[k].path = sparse_paths[k];
      if (sparse[k].path.empty() || sparse[k].path.back() != '/' ||
          (k > 0 && !(sparse[k - 1].path < sparse[k].path)))
        throw_arg(env, "sparse.paths must be directories ('a/b/'), in byte order");
      sparse[k].oid.assign(sparse_oids.As<Napi::Buffer<char>>().Data() + 20 * k, 20);
    }
    collapse_sparse(&dirs, sparse);
  }
  return to_buffer(env, write_cache_tree(dirs));
}

Napi::Value InvalidateCacheTree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsBuffer() || !info[1].IsBuffer())
    throw_arg(env, "invalidateCacheTree(data: Buffer, differing: Buffer)");
  auto data = info[0].As<Napi::Buffer<uint8_t>>();
  std::vector<CacheTreeDir> dirs;
  if (!parse_cache_tree(data.Data(), data.Length(), &dirs)) return env.Null();
  auto differing = info[1].As<Napi::Buffer<char>>();
  invalidate_above(&dirs, differing.Data(), differing.Length());
  return to_buffer(env, write_cache_tree(dirs));
}

}  // namespace pc::binding
