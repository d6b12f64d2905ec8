// N-API glue for the index file: reading it (mapFile, index/index_entries.h) and writing it, its
// entries (index/index_writer.h) and its cache-tree (index/cache_tree.h).
#pragma once

#include <napi.h>

namespace pc::binding {

// mapFile(path) -> { data: Buffer, mtimeSec, mtimeNsec } | null: the whole file as a read-only
// mapping (base/mapped_file.h), with the modification time of the file mapped (null when it
// does not exist).
Napi::Value MapFile(const Napi::CallbackInfo& info);

// parseIndexEntries(file: Buffer, end, version, count) -> the entries as flat arrays (see
// index/index_entries.h); the header, checksum and extensions are read in TypeScript.
Napi::Value ParseIndexEntries(const Napi::CallbackInfo& info);

// serializeIndex(list, stats, extFlags | null, version, extensions: Buffer[], from?, to?) ->
// Buffer: the file with 20 zero bytes where its checksum goes, or the part of it with the
// entries [from, to) (index/index_writer.h).
Napi::Value SerializeIndex(const Napi::CallbackInfo& info);
Napi::Value ReleaseMapped(const Napi::CallbackInfo& info);
Napi::Value WriteIndexFile(const Napi::CallbackInfo& info);
// indexFileEquals(file, list, stats, extFlags, version, extensions) -> boolean (index.cc).
Napi::Value IndexFileEquals(const Napi::CallbackInfo& info);

// cacheTreeExtension(dirs, differing: Buffer, sparse?: { paths, oids } | null) -> Buffer: the
// TREE extension of a walk's directories (walkTree's `dirs`), not valid above each of the
// NUL-terminated `differing` paths; a sparse index's directories (`sparse`) one entry each.
Napi::Value CacheTreeExtension(const Napi::CallbackInfo& info);

// invalidateCacheTree(data: Buffer, differing: Buffer) -> Buffer | null: an index's TREE
// extension (`data` without signature and size) whole again, not valid above each of the
// NUL-terminated `differing` paths; null when `data` is malformed.
Napi::Value InvalidateCacheTree(const Napi::CallbackInfo& info);

}  // namespace pc::binding
