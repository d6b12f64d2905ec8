// N-API glue for content conversions (convert/convert.h): convertToWorktree, convertToGit,
// blobHasCrlf, and the conversion descriptor write requests carry too (binding/write.cc).
#pragma once

#include <napi.h>

#include "convert/convert.h"

namespace pc::binding {

// A conversion descriptor { crlf: 0..4, ident: bool, identInCore: bool, encoding: string }
// (see convert.h; built by plan/conversion.ts).
Conversion conversion_arg(Napi::Env env, const Napi::Value& v);

// convertToWorktree(data: Buffer, conversion, oid: Buffer, path: string)
//   -> { data: Buffer | null (unchanged), warning?: string }
Napi::Value ConvertToWorktree(const Napi::CallbackInfo& info);

// convertToGit(data: Buffer, conversion, indexHasCrlf: boolean, path: string)
//   -> { data: Buffer | null (unchanged), warning?: string }
Napi::Value ConvertToGit(const Napi::CallbackInfo& info);

// blobHasCrlf(data: Buffer) -> boolean: git's has_crlf_in_index() test of a blob's bytes.
Napi::Value BlobHasCrlf(const Napi::CallbackInfo& info);

}  // namespace pc::binding
