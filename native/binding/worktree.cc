// N-API glue for Worktree: paths arrive as Buffers of their exact bytes (relative, no NUL);
// per-path failures go back as errno numbers (0 = done), never as exceptions.
#include "binding/worktree.h"

#include <fcntl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "binding/util.h"
#include "worktree/blob_hash.h"
#include "worktree/stat.h"
#include "worktree/worktree.h"

namespace pc::binding {

namespace {

std::string path_arg(Napi::Env env, const Napi::Value& v) {
  if (!v.IsBuffer()) throw_arg(env, "a path must be a Buffer");
  auto buf = v.As<Napi::Buffer<char>>();
  std::string path(buf.Data(), buf.Length());
  if (path.find('\0') != std::string::npos) throw_arg(env, "a path may not hold a NUL");
  return path;
}

class WorktreeWrap : public Napi::ObjectWrap<WorktreeWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Worktree",
                       {
                           InstanceMethod<&WorktreeWrap::Mkdir>("mkdir"),
                           InstanceMethod<&WorktreeWrap::MkdirMany>("mkdirMany"),
                           InstanceMethod<&WorktreeWrap::EnsureDirs>("ensureDirs"),
                           InstanceMethod<&WorktreeWrap::Unlink>("unlink"),
                           InstanceMethod<&WorktreeWrap::UnlinkMany>("unlinkMany"),
                           InstanceMethod<&WorktreeWrap::Rmdir>("rmdir"),
                           InstanceMethod<&WorktreeWrap::RemoveTree>("removeTree"),
                           InstanceMethod<&WorktreeWrap::Symlink>("symlink"),
                           InstanceMethod<&WorktreeWrap::Lstat>("lstat"),
                           InstanceMethod<&WorktreeWrap::Readlink>("readlink"),
                           InstanceMethod<&WorktreeWrap::SameBlobs>("sameBlobs"),
                           InstanceMethod<&WorktreeWrap::List>("list"),
                           InstanceMethod<&WorktreeWrap::Open>("open"),
                           InstanceMethod<&WorktreeWrap::Close>("close"),
                       });
  }

  explicit WorktreeWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<WorktreeWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) throw_arg(env, "new Worktree(root: string)");
    try {
      wt_ = std::make_unique<Worktree>(info[0].As<Napi::String>().Utf8Value());
    } catch (const Error& e) {
      throw_native(env, e);
    }
  }

 private:
  const Worktree& wt(Napi::Env env) {
    if (!wt_) throw_arg(env, "the worktree handle is closed");
    return *wt_;
  }

  static Napi::Number errno_value(Napi::Env env, int err) { return Napi::Number::New(env, err); }

  // mkdir(path) -> errno
  Napi::Value Mkdir(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return errno_value(env, wt(env).mkdir(path_arg(env, info[0]).c_str(), 0777));
  }

  // mkdirMany(paths: NUL-terminated, threads) -> Int32Array of errnos
  Napi::Value MkdirMany(const Napi::CallbackInfo& info) { return many(info, mkdir_many); }

  // unlinkMany(paths: NUL-terminated, threads) -> Int32Array of errnos
  Napi::Value UnlinkMany(const Napi::CallbackInfo& info) { return many(info, unlink_many); }

  using ManyOp = void (*)(const Worktree&, const std::vector<const char*>&, size_t,
                          std::vector<int32_t>*);
  Napi::Value many(const Napi::CallbackInfo& info, ManyOp op) {
    Napi::Env env = info.Env();
    std::vector<const char*> paths;
    split_paths(env, info[0], &paths);
    auto threads = static_cast<size_t>(integer_arg(env, info[1], 1, 1024, "threads"));
    std::vector<int32_t> errors;
    op(wt(env), paths, threads, &errors);
    auto out = new_array<Napi::Int32Array>(env, errors.size());
    if (!errors.empty()) std::memcpy(out.Data(), errors.data(), errors.size() * sizeof(int32_t));
    return out;
  }

  // ensureDirs(paths: NUL-terminated, parents first) -> Int32Array of errnos: each made, or
  // already a real directory (0), in order on this thread.
  Napi::Value EnsureDirs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::vector<const char*> paths;
    split_paths(env, info[0], &paths);
    auto out = new_array<Napi::Int32Array>(env, paths.size());
    for (size_t i = 0; i < paths.size(); i++) out[i] = wt(env).ensure_dir(paths[i], 0777);
    return out;
  }

  Napi::Value Unlink(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return errno_value(env, wt(env).unlink(path_arg(env, info[0]).c_str()));
  }

  Napi::Value Rmdir(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return errno_value(env, wt(env).rmdir(path_arg(env, info[0]).c_str()));
  }

  Napi::Value RemoveTree(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return errno_value(env, wt(env).remove_tree(path_arg(env, info[0]).c_str()));
  }

  // symlink(target: Buffer, path) -> errno
  Napi::Value Symlink(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string target = path_arg(env, info[0]);
    return errno_value(env, wt(env).symlink(target.c_str(), path_arg(env, info[1]).c_str()));
  }

  // lstat(path, out: Uint32Array of statWords) -> errno (out filled when 0; mode = st_mode)
  Napi::Value Lstat(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string path = path_arg(env, info[0]);
    auto out = typed_arg<Napi::Uint32Array>(
        env, info[1], "lstat needs a Uint32Array of statWords words", exactly(kStatWords));
    struct stat st;
    int err = wt(env).lstat(path.c_str(), &st);
    if (err == 0) fill_stat(st, out.Data());
    return errno_value(env, err);
  }

  // sameBlobs(paths: Buffer (NUL-terminated), oids: Buffer, threads) -> Uint8Array: 1 where
  // the file's blob id is the given one (see blob_hash.h).
  Napi::Value SameBlobs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::vector<const char*> paths;
    split_paths(env, info[0], &paths);
    if (!info[1].IsBuffer() || info[1].As<Napi::Buffer<uint8_t>>().Length() != 20 * paths.size())
      throw_arg(env, "sameBlobs needs 20 bytes of id per path");
    size_t threads = static_cast<size_t>(integer_arg(env, info[2], 1, 1024, "threads"));
    auto same = new_array<Napi::Uint8Array>(env, paths.size());
    same_blobs(wt(env), paths, info[1].As<Napi::Buffer<uint8_t>>().Data(), threads, same.Data());
    return same;
  }

  // readlink(path) -> Buffer, or an errno
  Napi::Value Readlink(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string target;
    int err = wt(env).readlink(path_arg(env, info[0]).c_str(), &target);
    if (err != 0) return errno_value(env, err);
    return Napi::Buffer<char>::Copy(env, target.data(), target.size());
  }

  // list(path) -> { names: Buffer (NUL-terminated), dirs: Uint8Array }, or an errno
  Napi::Value List(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::vector<DirEntry> entries;
    int err = wt(env).list(path_arg(env, info[0]).c_str(), &entries);
    if (err != 0) return errno_value(env, err);
    size_t bytes = 0;
    for (const DirEntry& e : entries) bytes += e.name.size() + 1;
    auto names = Napi::Buffer<char>::New(env, bytes);
    auto dirs = new_array<Napi::Uint8Array>(env, entries.size());
    size_t pos = 0;
    for (size_t i = 0; i < entries.size(); i++) {
      std::memcpy(names.Data() + pos, entries[i].name.c_str(), entries[i].name.size() + 1);
      pos += entries[i].name.size() + 1;
      dirs[i] = entries[i].dir ? 1 : 0;
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("names", names);
    out.Set("dirs", dirs);
    return out;
  }

  // open(path, mode: 'read' | 'create', perm) -> a descriptor the caller closes, or -errno
  Napi::Value Open(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string path = path_arg(env, info[0]);
    if (!info[1].IsString()) throw_arg(env, "open(path, 'read' | 'create', perm)");
    std::string how = info[1].As<Napi::String>().Utf8Value();
    int flags;
    if (how == "read") flags = O_RDONLY;
    else if (how == "create") flags = O_WRONLY | O_CREAT | O_EXCL;
    else throw_arg(env, "open mode must be 'read' or 'create'");
    auto perm = static_cast<mode_t>(integer_arg(env, info[2], 0, 07777, "perm"));
    return Napi::Number::New(env, wt(env).open(path.c_str(), flags, perm));
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    wt_.reset();
    return info.Env().Undefined();
  }

  std::unique_ptr<Worktree> wt_;
};

}  // namespace

Napi::Function define_worktree(Napi::Env env) { return WorktreeWrap::Define(env); }

// statFiles({ root, paths, threads?, perThread? }) -> { stats: Uint32Array, status: Int32Array }:
// lstat of each path, never through a symlinked leading directory (see stat.h); at least
// perThread paths (default kPathsPerThread) for each thread.
Napi::Value StatFiles(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw_arg(env, "expected a stat request object");
  Napi::Object o = info[0].As<Napi::Object>();
  pc::StatRequest req;
  parse_path_batch(env, o, &req.root, &req.paths, &req.threads);
  Napi::Value per_thread = o.Get("perThread");
  if (!per_thread.IsUndefined())
    req.per_thread = static_cast<size_t>(integer_arg(env, per_thread, 1, 1 << 20, "perThread"));
  // An expectation to judge against: { compare: Uint8Array, modes: Uint32Array,
  // stats: Uint32Array, racySeconds, fileMode }, one element (stats: kStatWords) per path.
  Napi::Value expect = o.Get("expect");
  if (!expect.IsUndefined()) {
    if (!expect.IsObject()) throw_arg(env, "expect must be an object");
    Napi::Object e = expect.As<Napi::Object>();
    size_t n = req.paths.size();
    Napi::Value compare = e.Get("compare"), modes = e.Get("modes"), stats = e.Get("stats"),
                racy = e.Get("racySeconds"), file_mode = e.Get("fileMode");
    auto compare_of = typed_arg<Napi::Uint8Array>(
        env, compare, "expect.compare must be a Uint8Array, one per path", exactly(n));
    auto modes_of = typed_arg<Napi::Uint32Array>(
        env, modes, "expect.modes must be a Uint32Array, one per path", exactly(n));
    auto stats_of = typed_arg<Napi::Uint32Array>(
        env, stats, "expect.stats must be a Uint32Array, statWords per path",
        exactly(n * pc::kStatWords));
    double r = integer_arg(env, racy, 0, 4294967295.0, "expect.racySeconds");
    req.expect.compare = compare_of.Data();
    req.expect.modes = modes_of.Data();
    req.expect.stats = stats_of.Data();
    req.expect.racy_seconds = static_cast<uint32_t>(r);
    req.expect.file_mode = file_mode.ToBoolean().Value();
    Napi::Value symlinks = e.Get("symlinks");
    req.expect.symlinks = symlinks.IsUndefined() || symlinks.ToBoolean().Value();
    req.expect.stat_change_is_dirty = e.Get("statChangeIsDirty").ToBoolean().Value();
  }
  // JavaScript's arrays from the start (zeroed by V8): the threads write into them directly.
  size_t n = req.paths.size();
  auto stats = new_array<Napi::Uint32Array>(env, n * pc::kStatWords);
  auto status = new_array<Napi::Int32Array>(env, n);
  auto verdict = new_array<Napi::Uint8Array>(env, n);
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

}  // namespace pc::binding
