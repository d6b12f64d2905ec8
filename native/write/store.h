// A store of worktree-ready files (the `store` option): one read-only file per blob and
// conversion, named by both, shared by every tree materialized beside it. A file is imported
// into a tree by reflink (FICLONE), copy_file_range or a plain copy, whichever the pair of
// filesystems allows (or hard-linked, in the link mode); a missing one is added from the bytes
// just written. An entry only ever appears whole under its final name (an O_TMPFILE, or a
// temporary name, with its size recorded in an attribute, then linked or renamed into place),
// and an import checks the blob's size from the pack, or else that record: a truncated or
// replaced entry is removed and rewritten from the pack, never copied into a tree. Policy
// (where the store is, its size bound, pruning) stays in TypeScript (src/write/store.ts).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "base/fd.h"
#include "convert/convert.h"

namespace pc {

// How entries move between the store and a tree, best first. Each pair of filesystems starts
// at reflink and steps down, for every thread at once, when the kernel says the step is not
// supported there.
enum StoreMethod : int32_t {
  kStoreReflink = 0,
  kStoreCopy = 1,   // copy_file_range: in the kernel, no bytes through user space
  kStoreWrite = 2,  // pread and write
  kStoreUnused = 3,
  kStoreHardlink = 4,  // the link mode: the tree's file is the entry itself (read-only)
};

// A chunk's dealings with the store.
struct StoreCounts {
  uint64_t imported = 0;      // files taken from the store
  uint64_t inserted = 0;      // entries added
  uint64_t inserted_bytes = 0;
  uint64_t repaired = 0;      // entries found damaged, removed (the file was written anew)
  uint64_t failed = 0;        // inserts or imports that failed (the file was written anyway)
  std::string first_error;    // the first failure's reason
  int32_t method = kStoreUnused;  // the method of the last transfer
};

// The entry's name under the store's directory: two hex digits of the blob's id, "/", the
// other 38, and for converted bytes "." and 16 hex digits naming the conversion. The mode is
// not part of it (a tree's file gets its mode when it is created, the bytes are the same)
// except for the link mode, where a tree's file is the entry: its executable entries end in
// ".x" (mode 0555; the others are 0444).
std::string store_name(const uint8_t* oid, const Conversion* conv, bool exec_link = false);

class StoreDir {
 public:
  // Opens the store's directory (made by TypeScript) for a write into the tree at rootfd;
  // invalid() tells whether that failed (*error says why).
  StoreDir(const std::string& dir, int rootfd, std::string* error);

  bool valid() const { return fd_.valid(); }

  // The entry, open for reading, and its size; an invalid Fd when it is absent. An entry
  // whose size is not `expect` (the blob's size, when nonzero) or, without it, the size
  // recorded when it was added, is removed and *damaged set. An entry not used for an hour
  // has its time set to now (pruning is by it).
  Fd open_entry(const std::string& name, uint64_t expect, uint64_t* size, bool* damaged) const;

  // Copies the first `size` bytes of src into the empty file dst by the best method this pair
  // of filesystems allows. Returns 0 or an errno; *used is the method that did it.
  int transfer(int dst, int src, uint64_t size, StoreMethod* used) const;

  // Adds `size` bytes under name: `data` when not null, else the file open for reading at
  // src. Written to a file with no name (O_TMPFILE; else a temporary name), its size
  // recorded, (synced when `sync`,) then linked (renamed) into place. Returns 0 or an errno
  // (*what: the step).
  int insert(const std::string& name, const uint8_t* data, int src, uint64_t size, mode_t mode,
             bool sync, const char** what, StoreMethod* used) const;

  // Links the entry as `base` in the directory dirfd. Returns 0 or an errno.
  int link_into(const std::string& name, int dirfd, const char* base) const;

 private:
  Fd fd_;
  // Shared by every StoreDir of the same pair of filesystems (store.cc's PairState).
  std::atomic<int32_t>* method_ = nullptr;
  std::atomic<bool>* attrs_refused_ = nullptr;  // the store's filesystem has no user attributes
};

}  // namespace pc
