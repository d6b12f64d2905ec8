#include "binding/write.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "binding/convert.h"
#include "binding/odb.h"
#include "binding/util.h"
#include "write/parallel_write.h"
#include "write/sync.h"
#include "write/writer.h"

namespace pc::binding {

namespace {

using pc::Code;

// A write request parsed from JS, holding references so an async write can outlive the call.
struct ParsedRequest {
  pc::WriteRequest req;
  Napi::ObjectReference keep;
};

// The request's conversions and the one each path takes (convert): both or neither.
void parse_conversions(Napi::Env env, const Napi::Object& o, size_t n, pc::WriteRequest* out) {
  pc::WriteRequest& req = *out;
  Napi::Value convs = o.Get("conversions"), convert = o.Get("convert");
  if (!convert.IsUndefined()) {
    if (!convs.IsArray()) throw_arg(env, "conversions must be an array");
    Napi::Array arr = convs.As<Napi::Array>();
    if (arr.Length() > 255) throw_arg(env, "at most 255 conversions per request");
    for (uint32_t k = 0; k < arr.Length(); k++)
      req.conversions.push_back(conversion_arg(env, arr.Get(k)));
    auto carr = typed_arg<Napi::Uint8Array>(
        env, convert, "convert must be a Uint8Array, one per path", exactly(n));
    for (size_t k = 0; k < n; k++) {
      if (carr[k] > req.conversions.size()) throw_arg(env, "convert names a missing conversion");
    }
    req.convert = carr.Data();
  }
}

// The request's contents: one Buffer per path, written as it is.
void parse_contents(Napi::Env env, const Napi::Object& o, size_t n, pc::WriteRequest* out) {
  pc::WriteRequest& req = *out;
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
}

std::unique_ptr<ParsedRequest> parse_request(Napi::Env env, const Napi::Value& v) {
  if (!v.IsObject()) throw_arg(env, "expected a write request object");
  Napi::Object o = v.As<Napi::Object>();
  auto parsed = std::make_unique<ParsedRequest>();
  parsed->keep = Napi::Persistent(o);
  Napi::Value root = o.Get("root"), paths = o.Get("paths"), oids = o.Get("oids"),
              modes = o.Get("modes"), sizes = o.Get("sizes"), threshold = o.Get("streamThreshold");
  if (!root.IsString()) throw_arg(env, "root must be a string");
  if (!paths.IsBuffer() || !oids.IsBuffer()) throw_arg(env, "paths and oids must be Buffers");
  auto marr = typed_arg<Napi::Uint32Array>(env, modes, "modes must be a Uint32Array");
  auto sarr = typed_arg<Napi::Float64Array>(env, sizes, "sizes must be a Float64Array");
  Napi::Value flags = o.Get("flags");
  if (!flags.IsUndefined()) typed_arg<Napi::Uint8Array>(env, flags, "flags must be a Uint8Array");
  pc::WriteRequest& req = parsed->req;
  req.root = root.As<Napi::String>().Utf8Value();
  split_paths(env, paths, &req.paths);
  size_t n = req.paths.size();
  auto obuf = oids.As<Napi::Buffer<uint8_t>>();
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
  parse_conversions(env, o, n, &req);
  parse_contents(env, o, n, &req);
  Napi::Value store = o.Get("store");
  if (!store.IsUndefined()) {
    if (!store.IsString() || store.As<Napi::String>().Utf8Value().empty())
      throw_arg(env, "store must be a directory's path");
    req.store = store.As<Napi::String>().Utf8Value();
    Napi::Value link = o.Get("storeLink");
    if (!link.IsUndefined() && !link.IsBoolean()) throw_arg(env, "storeLink must be a boolean");
    req.store_link = link.IsBoolean() && link.As<Napi::Boolean>().Value();
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

// A chunk's dealings with the store, as counts and the method of its last transfer.
Napi::Object store_to_js(Napi::Env env, const pc::StoreCounts& c) {
  // By StoreMethod; null for kStoreUnused (nothing moved).
  static const char* const kMethods[] = {"reflink", "copy", "write", nullptr, "hardlink"};
  Napi::Object o = Napi::Object::New(env);
  o.Set("imported", Napi::Number::New(env, static_cast<double>(c.imported)));
  o.Set("inserted", Napi::Number::New(env, static_cast<double>(c.inserted)));
  o.Set("insertedBytes", Napi::Number::New(env, static_cast<double>(c.inserted_bytes)));
  o.Set("repaired", Napi::Number::New(env, static_cast<double>(c.repaired)));
  o.Set("failed", Napi::Number::New(env, static_cast<double>(c.failed)));
  o.Set("firstError", Napi::String::New(env, c.first_error));
  const char* method = c.method >= pc::kStoreReflink && c.method <= pc::kStoreHardlink
                           ? kMethods[c.method]
                           : nullptr;
  o.Set("method", method ? Napi::Value(Napi::String::New(env, method)) : env.Null());
  return o;
}

Napi::Object result_to_js(Napi::Env env, pc::WriteResult& res, const pc::WriteRequest& req) {
  Napi::Object out = Napi::Object::New(env);
  if (!req.store.empty()) out.Set("store", store_to_js(env, res.store));
  auto stats = new_array<Napi::Uint32Array>(env, res.stats.size());
  if (!res.stats.empty())
    std::memcpy(stats.Data(), res.stats.data(), res.stats.size() * sizeof(uint32_t));
  auto status = new_array<Napi::Int32Array>(env, res.status.size());
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
  deferred_.Resolve(result_to_js(Env(), result_, req_->req));
}

void WriteWorker::OnError(const Napi::Error& e) {
  owner_->set_busy(false);
  const char* code = code_.empty() ? pc::code_name(Code::Internal) : code_.c_str();
  deferred_.Reject(make_error(Env(), code, e.Message()).Value());
}

// writeParallel(readers: Odb[], chunks: WriteRequest[], cancel: Int32Array, onChunk,
//               groups?: Uint32Array, perGroup?: number)
//   -> Promise<void>: the chunks written by one native thread per reader (parallel_write.h);
// with groups (one per chunk), at most perGroup chunks of a group at a time (schedule.h).
// onChunk(k, result) runs on the JS thread as each chunk finishes, with chunk k's result or
// { failure: { code, message } }; all of them before the promise settles. Storing a nonzero
// value in cancel[0] (Atomics.store) stops every thread before its next file; a chunk it
// stopped part-way is reported (`cancelled`), those not started then are not. A throw from
// onChunk stops the writes too, and the promise is rejected with it.
class ParallelWorker : public Napi::AsyncProgressQueueWorker<uint32_t> {
 public:
  ParallelWorker(Napi::Env env, std::vector<OdbWrap*> owners, std::vector<Napi::Object> keep,
                 std::vector<std::unique_ptr<ParsedRequest>> chunks, int32_t* cancel,
                 Napi::Function on_chunk, std::vector<uint32_t> groups, uint32_t per_group)
      : Napi::AsyncProgressQueueWorker<uint32_t>(env, "pcheckout.writeParallel"),
        deferred_(Napi::Promise::Deferred::New(env)),
        owners_(std::move(owners)),
        chunks_(std::move(chunks)),
        groups_(std::move(groups)),
        per_group_(per_group),
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
      pc::write_parallel(
          readers_, requests_, &outcomes_,
          [&progress](size_t k) {
            uint32_t index = static_cast<uint32_t>(k);
            progress.Send(&index, 1);
          },
          std::move(groups_), per_group_);
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
        result = result_to_js(env, out.result, chunks_[k]->req);
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
  std::vector<uint32_t> groups_;
  uint32_t per_group_;
  std::vector<pc::ChunkOutcome> outcomes_;
  int32_t* cancel_;
  Napi::FunctionReference on_chunk_;
  bool failed_ = false;
  Napi::ObjectReference error_;
};

}  // namespace

Napi::Value OdbWrap::WriteFiles(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto parsed = parse_request(env, info[0]);
  pc::WriteResult result;
  try {
    pc::write_files(odb(env), parsed->req, &result);
  } catch (const pc::Error& e) {
    throw_native(env, e);
  }
  return result_to_js(env, result, parsed->req);
}

Napi::Value OdbWrap::WriteFilesAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto parsed = parse_request(env, info[0]);
  odb(env);  // throws if closed or busy
  auto* worker = new WriteWorker(env, this, std::move(parsed));
  Napi::Promise promise = worker->promise();
  busy_ = true;
  worker->Queue();
  return promise;
}

Napi::Value WriteParallel(const Napi::CallbackInfo& info, const Napi::FunctionReference& odb_class) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsArray() || !info[1].IsArray() || !info[3].IsFunction())
    throw_arg(env, "writeParallel(readers, chunks, cancel, onChunk)");
  Napi::Value cancel = info[2];
  int32_t* flag =
      typed_arg<Napi::Int32Array>(env, cancel, "cancel must be an Int32Array", at_least(1)).Data();
  std::vector<Napi::Object> keep;
  std::vector<OdbWrap*> owners = reader_list(env, info[0], odb_class, &keep);
  Napi::Array list = info[1].As<Napi::Array>();
  std::vector<std::unique_ptr<ParsedRequest>> chunks;
  for (uint32_t i = 0; i < list.Length(); i++) {
    chunks.push_back(parse_request(env, list.Get(i)));
    chunks.back()->req.cancel = flag;
  }
  keep.push_back(cancel.As<Napi::Object>());
  std::vector<uint32_t> groups;
  uint32_t per_group = 1;
  if (info.Length() > 4 && !info[4].IsUndefined()) {
    auto g = typed_arg<Napi::Uint32Array>(env, info[4], "groups must be a Uint32Array, one per chunk",
                                          exactly(chunks.size()));
    groups.assign(g.Data(), g.Data() + g.ElementLength());
    // Group numbers index a table of counts: below the number of chunks, so it stays small.
    for (uint32_t id : groups)
      if (id >= groups.size()) throw_arg(env, "a group must be below the number of chunks");
    if (info.Length() > 5 && !info[5].IsUndefined())
      per_group = static_cast<uint32_t>(integer_arg(env, info[5], 1, 65536, "perGroup"));
  }
  auto* worker = new ParallelWorker(env, std::move(owners), std::move(keep), std::move(chunks),
                                    flag, info[3].As<Napi::Function>(), std::move(groups),
                                    per_group);
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
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
  auto out = new_array<Napi::Int32Array>(env, errors.size());
  if (!errors.empty()) std::memcpy(out.Data(), errors.data(), errors.size() * sizeof(int32_t));
  return out;
}

}  // namespace pc::binding
