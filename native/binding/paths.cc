#include "binding/paths.h"

#include <cstring>
#include <string>
#include <vector>

#include "binding/util.h"

namespace pc::binding {

namespace {

Napi::Value rule_to_js(Napi::Env env, PathRule rule, size_t index) {
  if (rule == PathRule::kOk) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  out.Set("index", Napi::Number::New(env, static_cast<double>(index)));
  out.Set("rule", Napi::String::New(env, path_rule_name(rule)));
  out.Set("text", Napi::String::New(env, path_rule_text(rule)));
  return out;
}

}  // namespace

PathProtection protection_arg(Napi::Env env, const Napi::Value& v) {
  auto bits = static_cast<uint32_t>(
      integer_arg(env, v, 0, kProtectNtfs | kProtectHfs, "protect (1 NTFS | 2 HFS)"));
  PathProtection p;
  p.ntfs = (bits & kProtectNtfs) != 0;
  p.hfs = (bits & kProtectHfs) != 0;
  return p;
}

Napi::Value VerifyPath(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer()) throw_arg(env, "verifyPath(path, mode, protect)");
  auto buf = info[0].As<Napi::Buffer<char>>();
  std::string path(buf.Data(), buf.Length());  // NUL-terminated copy: the rules look ahead
  auto mode = static_cast<uint32_t>(integer_arg(env, info[1], 0, 4294967295.0, "mode"));
  return rule_to_js(env, verify_path(path.c_str(), path.size(), mode, protection_arg(env, info[2])),
                    0);
}

Napi::Value VerifyPaths(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // With the paths' starts (an index's list): one pass over the buffer, each path checked
  // from where it leaves the one before (path_rules.h).
  if (info.Length() > 3 && !info[3].IsUndefined()) {
    if (!info[0].IsBuffer()) throw_arg(env, "paths must be a Buffer");
    auto buf = info[0].As<Napi::Buffer<char>>();
    auto starts = typed_arg<Napi::Uint32Array>(env, info[3], "starts must be a Uint32Array");
    if (starts.ElementLength() == 0) throw_arg(env, "starts must hold count + 1 positions");
    const size_t count = starts.ElementLength() - 1;
    auto modes = typed_arg<Napi::Uint32Array>(
        env, info[1], "modes must be a Uint32Array with one mode per path", at_least(count));
    PathProtection protect = protection_arg(env, info[2]);
    const char* data = buf.Data();
    const size_t size = buf.Length();
    for (size_t i = 0; i < count; i++) {
      if (starts[i] >= starts[i + 1] || starts[i + 1] > size || data[starts[i + 1] - 1] != '\0')
        throw_arg(env, "starts do not match the NUL-terminated paths");
    }
    PathRule rule = PathRule::kOk;
    size_t bad = verify_paths(data, starts.Data(), modes.Data(), count, protect, &rule);
    return bad == count ? env.Null() : rule_to_js(env, rule, bad);
  }
  std::vector<const char*> paths;
  split_paths(env, info[0], &paths);
  auto modes = typed_arg<Napi::Uint32Array>(
      env, info[1], "modes must be a Uint32Array with one mode per path", exactly(paths.size()));
  PathProtection protect = protection_arg(env, info[2]);
  for (size_t i = 0; i < paths.size(); i++) {
    PathRule rule = verify_path(paths[i], std::strlen(paths[i]), modes[i], protect);
    if (rule != PathRule::kOk) return rule_to_js(env, rule, i);
  }
  return env.Null();
}

}  // namespace pc::binding
