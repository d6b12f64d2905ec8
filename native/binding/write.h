// N-API glue for writing files: writeParallel (write/parallel_write.h) over Odb readers, whose
// writeFiles and writeFilesAsync methods (write/writer.h) are defined here too, and the
// durability barriers syncFilesystem and fsyncPaths (write/sync.h).
#pragma once

#include <napi.h>

namespace pc::binding {

// writeParallel(readers: Odb[], chunks: WriteRequest[], cancel: Int32Array, onChunk)
//   -> Promise<void> (see binding/write.cc).
Napi::Value WriteParallel(const Napi::CallbackInfo& info, const Napi::FunctionReference& odb_class);

// syncFilesystem(root): syncfs(2) of the filesystem holding root.
Napi::Value SyncFilesystem(const Napi::CallbackInfo& info);

// fsyncPaths({ root, paths, threads? }) -> Int32Array: 0 or the errno of each path's fsync.
Napi::Value FsyncPaths(const Napi::CallbackInfo& info);

}  // namespace pc::binding
