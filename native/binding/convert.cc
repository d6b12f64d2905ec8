#include "binding/convert.h"

#include <string>
#include <vector>

#include "binding/util.h"

namespace pc::binding {

Conversion conversion_arg(Napi::Env env, const Napi::Value& v) {
  if (!v.IsObject()) throw_arg(env, "a conversion must be an object");
  Napi::Object o = v.As<Napi::Object>();
  Napi::Value crlf = o.Get("crlf"), enc = o.Get("encoding");
  if (!crlf.IsNumber()) throw_arg(env, "conversion.crlf must be a number");
  double c = crlf.As<Napi::Number>().DoubleValue();
  if (!(c == kCrlfBinary || c == kCrlfTextInput || c == kCrlfTextCrlf || c == kCrlfAutoInput ||
        c == kCrlfAutoCrlf))
    throw_arg(env, "conversion.crlf must be 0 to 4");
  Conversion conv;
  conv.crlf = static_cast<CrlfAction>(static_cast<uint8_t>(c));
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

namespace {

// { data: Buffer | null (unchanged), warning?: string }
Napi::Object converted_to_js(Napi::Env env, bool changed, const std::vector<uint8_t>& out,
                             const std::string& warning) {
  Napi::Object res = Napi::Object::New(env);
  res.Set("data", changed ? Napi::Value(copy_buffer(env, out.data(), out.size())) : env.Null());
  if (!warning.empty()) res.Set("warning", Napi::String::New(env, warning));
  return res;
}

}  // namespace

Napi::Value ConvertToWorktree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer() || !info[3].IsString())
    throw_arg(env, "convertToWorktree(data, conversion, oid, path)");
  auto data = info[0].As<Napi::Buffer<uint8_t>>();
  Conversion conv = conversion_arg(env, info[1]);
  const uint8_t* oid = oid_arg(info[2], env);
  std::vector<uint8_t> out;
  std::string warning;
  bool changed = to_worktree(conv, oid, data.Data(), data.Length(),
                             info[3].As<Napi::String>().Utf8Value(), &out, &warning);
  return converted_to_js(env, changed, out, warning);
}

Napi::Value ConvertToGit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer() || !info[3].IsString())
    throw_arg(env, "convertToGit(data, conversion, indexHasCrlf, path)");
  auto data = info[0].As<Napi::Buffer<uint8_t>>();
  Conversion conv = conversion_arg(env, info[1]);
  std::vector<uint8_t> out;
  std::string warning;
  bool changed = to_git(conv, data.Data(), data.Length(), info[2].ToBoolean().Value(),
                        info[3].As<Napi::String>().Utf8Value(), &out, &warning);
  return converted_to_js(env, changed, out, warning);
}

Napi::Value BlobHasCrlf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer()) throw_arg(env, "blobHasCrlf(data)");
  auto data = info[0].As<Napi::Buffer<uint8_t>>();
  return Napi::Boolean::New(env, blob_has_crlf(data.Data(), data.Length()));
}

}  // namespace pc::binding
