// The addon's module registration: one Addon instance per environment (per-environment state,
// so the module loads safely in many worker threads) exporting every function and class, and
// the load-time handshake TypeScript checks (src/addon.ts checkAddon): the error codes
// (base/common.h) and the layouts both sides read. The glue for each concept is in its own
// file beside this one: odb, write, worktree, watch, index, rows, paths, convert; util.h has
// the argument checks of last resort (TypeScript validates first) and pc::Error -> JS Error
// with a `code`.
#include <napi.h>

#include <initializer_list>
#include <utility>

#include "base/common.h"
#include "base/memory.h"
#include "base/thread_slice.h"
#include "binding/arrays.h"
#include "binding/convert.h"
#include "binding/index.h"
#include "binding/odb.h"
#include "binding/paths.h"
#include "binding/rows.h"
#include "binding/util.h"
#include "binding/watch.h"
#include "binding/worktree.h"
#include "binding/write.h"
#include "odb/inflate.h"
#include "plan/rows.h"
#include "worktree/beneath.h"
#include "worktree/stat.h"
#include "write/sync.h"
#include "write/writer.h"

namespace {

using pc::Code;
namespace binding = pc::binding;

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
  o.Set("protect", numbers(env, {{"ntfs", binding::kProtectNtfs}, {"hfs", binding::kProtectHfs}}));
  o.Set("sameEntry", numbers(env, {{"indexTarget", pc::kSameIM},
                                   {"indexHead", pc::kSameIH},
                                   {"headTarget", pc::kSameHM}}));
  return o;
}

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) {
    Napi::Function odb = binding::OdbWrap::Define(env);
    odb_class_ = Napi::Persistent(odb);
    DefineAddon(exports, {
                             InstanceValue("Odb", odb, napi_enumerable),
                             InstanceMethod<&Addon::Parallel>("writeParallel", napi_enumerable),
                             InstanceMethod<&Addon::Decoded>("decodeStats", napi_enumerable),
                             InstanceValue("Worktree", binding::define_worktree(env),
                                           napi_enumerable),
                             InstanceValue("Watch", binding::define_watch(env),
                                           napi_enumerable),
                             InstanceValue("watchFlags", binding::watch_flags(env),
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
                             InstanceMethod<&Addon::StatRecords>("newStats", napi_enumerable),
                             InstanceMethod<&Addon::ToDecide>("rowsToDecide", napi_enumerable),
                             InstanceMethod<&Addon::Dirs>("dirsOf", napi_enumerable),
                             InstanceMethod<&Addon::WriteIndex>("serializeIndex", napi_enumerable),
                             InstanceMethod<&Addon::WriteIndexTo>("writeIndexFile", napi_enumerable),
                             InstanceMethod<&Addon::SameIndex>("indexFileEquals", napi_enumerable),
                             InstanceMethod<&Addon::Unmap>("releaseMapped", napi_enumerable),
                             InstanceMethod<&Addon::Release>("releaseArrays", napi_enumerable),
                             InstanceMethod<&Addon::TreeExtension>("cacheTreeExtension",
                                                                   napi_enumerable),
                             InstanceMethod<&Addon::TreeInvalidated>("invalidateCacheTree",
                                                                     napi_enumerable),
                             InstanceMethod<&Addon::ToWorktree>("convertToWorktree",
                                                                napi_enumerable),
                             InstanceMethod<&Addon::ToGit>("convertToGit", napi_enumerable),
                             InstanceMethod<&Addon::HasCrlf>("blobHasCrlf", napi_enumerable),
                             InstanceMethod<&Addon::ReleaseMemory>("releaseMemory",
                                                                   napi_enumerable),
                             InstanceMethod<&Addon::ThreadArenasFree>("threadArenasFree",
                                                                      napi_enumerable),
                             InstanceMethod<&Addon::Slice>("setThreadSlice", napi_enumerable),
                             InstanceValue("errorCodes", error_codes(env), napi_enumerable),
                             InstanceValue("layout", layout(env), napi_enumerable),
                         });
  }

 private:
  Napi::Value Stat(const Napi::CallbackInfo& info) { return binding::StatFiles(info); }
  Napi::Value Map(const Napi::CallbackInfo& info) { return binding::MapFile(info); }
  Napi::Value ParseIndex(const Napi::CallbackInfo& info) {
    return binding::ParseIndexEntries(info);
  }
  Napi::Value Verify(const Napi::CallbackInfo& info) { return binding::VerifyPath(info); }
  Napi::Value VerifyAll(const Napi::CallbackInfo& info) { return binding::VerifyPaths(info); }
  Napi::Value SyncFs(const Napi::CallbackInfo& info) { return binding::SyncFilesystem(info); }
  Napi::Value Fsync(const Napi::CallbackInfo& info) { return binding::FsyncPaths(info); }
  Napi::Value ToWorktree(const Napi::CallbackInfo& info) {
    return binding::ConvertToWorktree(info);
  }
  Napi::Value Rows(const Napi::CallbackInfo& info) { return binding::JoinRows(info); }
  Napi::Value Gather(const Napi::CallbackInfo& info) { return binding::GatherEntries(info); }
  Napi::Value GatherStat(const Napi::CallbackInfo& info) { return binding::GatherStats(info); }
  Napi::Value StatRecords(const Napi::CallbackInfo& info) { return binding::NewStats(info); }
  Napi::Value ToDecide(const Napi::CallbackInfo& info) { return binding::RowsToDecide(info); }
  Napi::Value Dirs(const Napi::CallbackInfo& info) { return binding::DirsOf(info); }
  Napi::Value WriteIndex(const Napi::CallbackInfo& info) { return binding::SerializeIndex(info); }
  Napi::Value WriteIndexTo(const Napi::CallbackInfo& info) { return binding::WriteIndexFile(info); }
  Napi::Value SameIndex(const Napi::CallbackInfo& info) { return binding::IndexFileEquals(info); }
  Napi::Value Unmap(const Napi::CallbackInfo& info) { return binding::ReleaseMapped(info); }
  Napi::Value Release(const Napi::CallbackInfo& info) { return binding::ReleaseArrays(info); }
  Napi::Value TreeExtension(const Napi::CallbackInfo& info) {
    return binding::CacheTreeExtension(info);
  }
  Napi::Value TreeInvalidated(const Napi::CallbackInfo& info) {
    return binding::InvalidateCacheTree(info);
  }
  Napi::Value ToGit(const Napi::CallbackInfo& info) { return binding::ConvertToGit(info); }
  Napi::Value HasCrlf(const Napi::CallbackInfo& info) { return binding::BlobHasCrlf(info); }
  // releaseMemory(minThreadFree?) -> boolean: malloc_trim (base/memory.h); with a byte count,
  // only when the threads' arenas hold at least that much free memory.
  Napi::Value ReleaseMemory(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() > 0 && !info[0].IsUndefined()) {
      double min = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1;
      if (!(min >= 0 && min <= 9007199254740991.0)) {
        Napi::TypeError::New(env, "releaseMemory: a byte count, 0 or more")
            .ThrowAsJavaScriptException();
        return env.Undefined();
      }
      if (static_cast<double>(pc::thread_arenas_free_bytes()) < min)
        return Napi::Boolean::New(env, false);
    }
    return Napi::Boolean::New(env, pc::release_free_memory());
  }
  // threadArenasFree() -> number: the free bytes the threads' malloc arenas hold (base/memory.h).
  Napi::Value ThreadArenasFree(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(pc::thread_arenas_free_bytes()));
  }
  // setThreadSlice(us) -> { applied, previousUs, error }: the calling thread's scheduler slice,
  // 0 (the kernel's default) or 100..100000 µs (base/thread_slice.h).
  Napi::Value Slice(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    double us = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue()
                                                        : -1;
    if (!(us == 0 || (us >= 100 && us <= 100000)) || us != static_cast<double>(
                                                               static_cast<uint32_t>(us))) {
      Napi::TypeError::New(env, "setThreadSlice: a whole number of µs, 0 or 100..100000")
          .ThrowAsJavaScriptException();
      return env.Undefined();
    }
    pc::SliceChange c = pc::set_thread_slice(static_cast<uint64_t>(us) * 1000u);
    Napi::Object out = Napi::Object::New(env);
    out.Set("applied", Napi::Boolean::New(env, c.applied));
    out.Set("previousUs", Napi::Number::New(env, static_cast<double>(c.previous_ns / 1000u)));
    out.Set("error", Napi::Number::New(env, c.error));
    return out;
  }
  Napi::Value Parallel(const Napi::CallbackInfo& info) {
    return binding::WriteParallel(info, odb_class_);
  }
  Napi::Value Decoded(const Napi::CallbackInfo& info) {
    return binding::DecodeStats(info, odb_class_);
  }

  Napi::FunctionReference odb_class_;
};

}  // namespace

NODE_API_ADDON(Addon)