// N-API glue for the object database (odb/odb.h): `new Odb(objectDirs, cacheBytes | Odb)` with
// read, walkTree, lendIndex, info, resolvePrefix, writeFiles(Async), releaseCache, releaseWalks,
// close; and decodeStats over many readers. writeFiles and writeFilesAsync are defined with the
// rest of the write glue (binding/write.cc).
#pragma once

#include <napi.h>

#include <memory>
#include <vector>

#include "binding/util.h"
#include "odb/odb.h"
#include "plan/tree.h"

namespace pc::binding {

class OdbWrap : public Napi::ObjectWrap<OdbWrap> {
 public:
  static Napi::Function Define(Napi::Env env);

  explicit OdbWrap(const Napi::CallbackInfo& info);

  // The reader, or a last-resort error when it is closed or busy writing.
  Odb& odb(Napi::Env env) {
    if (!odb_) throw_arg(env, "the object database is closed");
    if (busy_) throw_arg(env, "the object database is busy writing");
    return *odb_;
  }
  void set_busy(bool b) { busy_ = b; }
  Odb* raw() { return odb_.get(); }

 private:
  Napi::Value Read(const Napi::CallbackInfo& info);
  Napi::Value WalkTree(const Napi::CallbackInfo& info);
  Napi::Value LendIndex(const Napi::CallbackInfo& info);
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value ResolvePrefix(const Napi::CallbackInfo& info);
  Napi::Value WriteFiles(const Napi::CallbackInfo& info);       // binding/write.cc
  Napi::Value WriteFilesAsync(const Napi::CallbackInfo& info);  // binding/write.cc
  Napi::Value ReleaseCache(const Napi::CallbackInfo& info);
  Napi::Value ReleaseWalks(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value SetCancel(const Napi::CallbackInfo& info);
  // Lets go of the kept walk and the lent index (and the JS arrays they point into).
  void forget_walks();

  std::unique_ptr<Odb> odb_;
  std::unique_ptr<WalkMemo> memo_;    // the last walk kept (walkTree's `keep`)
  std::vector<Napi::ObjectReference> memo_refs_;    // the JS arrays memo_ points into
  std::unique_ptr<WalkMemo> lender_;  // the index, by its cache-tree (lendIndex)
  std::vector<Napi::ObjectReference> lender_refs_;  // the arrays lender_ points into
  bool busy_ = false;
  Napi::Reference<Napi::Int32Array> cancel_ref_;  // keeps the flag odb_->cancel() reads alive
};

// Distinct, open, idle Odb objects (1 to 1024), and the JS objects that own them.
std::vector<OdbWrap*> reader_list(Napi::Env env, Napi::Value value,
                                  const Napi::FunctionReference& odb_class,
                                  std::vector<Napi::Object>* keep);

// decodeStats(readers): what the readers decoded since they were last asked, added together
// (bases told apart by pack and offset across readers); each reader starts a new record.
Napi::Value DecodeStats(const Napi::CallbackInfo& info, const Napi::FunctionReference& odb_class);

}  // namespace pc::binding
