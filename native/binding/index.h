// N-API glue for writing an index: its entries (index_writer.h) and its cache-tree
// (cache_tree.h).
#pragma once

#include <napi.h>

namespace pc::binding {

// serializeIndex(list, stats, extFlags | null, version, extensions: Buffer[]) -> Buffer: the
// file with 20 zero bytes where its checksum goes.
Napi::Value SerializeIndex(const Napi::CallbackInfo& info);

// cacheTreeExtension(dirs, differing: Buffer) -> Buffer: the TREE extension of a walk's
// directories (walkTree's `dirs`), not valid above each of the NUL-terminated `differing` paths.
Napi::Value CacheTreeExtension(const Napi::CallbackInfo& info);

}  // namespace pc::binding
