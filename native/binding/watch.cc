// N-API glue for Watch: directories arrive as Buffers of their exact bytes (relative, no NUL);
// a directory that cannot be watched comes back as -errno, never as an exception.
#include "binding/watch.h"

#include <sys/inotify.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "binding/util.h"
#include "worktree/watch.h"

namespace pc::binding {

namespace {

class WatchWrap : public Napi::ObjectWrap<WatchWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Watch",
                       {
                           InstanceMethod<&WatchWrap::Add>("add"),
                           InstanceMethod<&WatchWrap::ForgetRoot>("forgetRoot"),
                           InstanceMethod<&WatchWrap::Remove>("remove"),
                           InstanceMethod<&WatchWrap::Drain>("drain"),
                           InstanceMethod<&WatchWrap::Close>("close"),
                       });
  }

  explicit WatchWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<WatchWrap>(info) {
    Napi::Env env = info.Env();
    try {
      watch_ = std::make_unique<Watch>();
    } catch (const Error& e) {
      throw_native(env, e);
    }
  }

 private:
  Watch& watch(Napi::Env env) {
    if (!watch_) throw_arg(env, "the watch is closed");
    return *watch_;
  }

  // add(root: string, dir: Buffer) -> wd, or -errno
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsString() || !info[1].IsBuffer())
      throw_arg(env, "add(root: string, dir: Buffer)");
    auto buf = info[1].As<Napi::Buffer<char>>();
    std::string rel(buf.Data(), buf.Length());
    if (rel.find('\0') != std::string::npos) throw_arg(env, "a path may not hold a NUL");
    return Napi::Number::New(env,
                             watch(env).add(info[0].As<Napi::String>().Utf8Value(), rel.c_str()));
  }

  // forgetRoot(root: string)
  Napi::Value ForgetRoot(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) throw_arg(env, "forgetRoot(root: string)");
    watch(env).forget_root(info[0].As<Napi::String>().Utf8Value());
    return env.Undefined();
  }

  // remove(wd)
  Napi::Value Remove(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto wd = static_cast<int>(integer_arg(env, info[0], 0, 2147483647.0, "wd"));
    watch(env).remove(wd);
    return env.Undefined();
  }

  // drain() -> { complete, wds: Int32Array, masks: Uint32Array, names: Buffer (each NUL-ended) }
  Napi::Value Drain(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::vector<WatchEvent> events;
    bool complete;
    try {
      complete = watch(env).drain(&events);
    } catch (const Error& e) {
      throw_native(env, e);
    }
    size_t bytes = 0;
    for (const WatchEvent& ev : events) bytes += ev.name.size() + 1;
    auto wds = Napi::Int32Array::New(env, events.size());
    auto masks = Napi::Uint32Array::New(env, events.size());
    auto names = Napi::Buffer<char>::New(env, bytes);
    size_t at = 0;
    for (size_t i = 0; i < events.size(); i++) {
      wds[i] = events[i].wd;
      masks[i] = events[i].mask;
      std::memcpy(names.Data() + at, events[i].name.data(), events[i].name.size());
      at += events[i].name.size();
      names.Data()[at++] = '\0';
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("complete", Napi::Boolean::New(env, complete));
    out.Set("wds", wds);
    out.Set("masks", masks);
    out.Set("names", names);
    return out;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    watch_.reset();
    return info.Env().Undefined();
  }

  std::unique_ptr<Watch> watch_;
};

}  // namespace

Napi::Function define_watch(Napi::Env env) { return WatchWrap::Define(env); }

Napi::Object watch_flags(Napi::Env env) {
  Napi::Object flags = Napi::Object::New(env);
  flags.Set("isDir", Napi::Number::New(env, IN_ISDIR));
  flags.Set("ignored", Napi::Number::New(env, IN_IGNORED));
  flags.Set("deleteSelf", Napi::Number::New(env, IN_DELETE_SELF));
  flags.Set("moveSelf", Napi::Number::New(env, IN_MOVE_SELF));
  return flags;
}

}  // namespace pc::binding
