// The object database of one reader: packs (mapped), loose objects, a delta-base cache.
// Not thread-safe by design: every thread (main, each worker) owns its own Odb, so reads take
// no locks. The mapped pack pages are shared by the kernel anyway.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "odb/base_cache.h"
#include "odb/decode_stats.h"
#include "base/cancel.h"
#include "base/common.h"
#include "odb/inflate.h"
#include "base/mapped_file.h"
#include "odb/pack.h"
#include "odb/pack_index.h"

namespace pc {

struct Location {
  int pack = -1;  // index into the pack list; -1 = loose
  uint64_t offset = 0;
  std::string loose;  // the loose object's file, when pack is -1
};

// A whole (non-delta) object read incrementally, for files too large to hold in memory.
class ObjectStream {
 public:
  virtual ~ObjectStream() = default;
  int type = kNone;
  uint64_t size = 0;
  // Fills up to cap bytes; returns the count, 0 at the end. Throws on corruption.
  virtual size_t read(uint8_t* out, size_t cap) = 0;
};

// A reusable output buffer. Reusing it spares a fresh allocation (and its page faults) per
// file; buffers above kKeep are not kept, so one huge file does not pin its size in memory.
class Scratch {
 public:
  uint8_t* reserve(size_t n);

 private:
  static constexpr size_t kKeep = 16u << 20;
  Buffer buf_;
  size_t cap_ = 0;
  Buffer big_;
};

// Object bytes borrowed from the reader: valid until its next read_view() call.
struct ObjectView {
  int type = kNone;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class Odb {
 public:
  // cache: the delta-base cache this reader shares with the other readers of the same store.
  Odb(std::vector<std::string> object_dirs, std::shared_ptr<BaseCache> cache);
  const std::shared_ptr<BaseCache>& cache() const { return cache_; }
  // What the long steps on this reader (info_many, the tree walk) look at to stop early.
  Cancel& cancel() { return cancel_; }

  Object read(const uint8_t* oid);
  // Like read(), but into reused buffers: for the writer, which needs the bytes only briefly.
  ObjectView read_view(const uint8_t* oid);
  bool locate(const uint8_t* oid, Location* loc);
  // Type and inflated size without inflating the object (for deltas, the size read from the
  // delta header). Returns false if the object does not exist.
  bool info(const uint8_t* oid, Location* loc, int* type, uint64_t* size);
  // info() for n 20-byte ids at once, into rows[0..n): looked up in the order their copies lie
  // in the packs, so that reading their headers goes through each pack front to back.
  struct InfoRow {
    bool found = false;
    Location loc;
    int type = 0;
    uint64_t size = 0;
  };
  // `order` (optional, n entries): the positions in that order, packs first (by pack, then
  // offset), then the loose and missing ones in the order given: how a checkout writes them.
  void info_many(const uint8_t* ids, size_t n, InfoRow* rows, int32_t* order = nullptr);
  // 0 = none, 1 = unique (copied to out), 2 = ambiguous.
  int resolve_prefix(const OidPrefix& prefix, uint8_t* out);
  // A stream for a whole object, or nullptr if it is stored as a delta (then use read()).
  std::unique_ptr<ObjectStream> stream(const uint8_t* oid);
  // Drops the (shared) delta-base cache and this process's pages of the mapped packs (e.g. after
  // planning, when this reader goes idle).
  void release_cache();
  // What this reader decoded since the last call, then starts a new record.
  DecodeStats take_stats();
  // The path of pack k (as numbered in this reader's DecodeStats).
  const std::string& pack_name(uint32_t k) const;

 private:
  Cancel cancel_;
  bool scan_packs();  // true if new packs were found
  bool find_in_packs(const uint8_t* oid, Location* loc);
  // A copy of oid found damaged (corrupt data, or a delta whose base is missing) is not used
  // again: as git does, the next read looks for another copy (another pack, or loose).
  // Returns false if that copy was already marked (nothing new to try).
  bool mark_bad(const uint8_t* oid, const Location& loc);
  bool is_bad(const uint8_t* oid, int pack) const;
  // Runs read(loc) on each copy of oid in turn until one is intact; rethrows the first damage
  // when none is. Throws MissingObject when there is no copy at all.
  template <typename Read>
  auto read_any(const uint8_t* oid, Read read) -> decltype(read(std::declval<Location&>()));
  std::string loose_path(const std::string& dir, const uint8_t* oid) const;
  bool find_loose(const uint8_t* oid, std::string* path);
  // The loose objects whose id starts with `prefix` (at least two hex digits) into *matches,
  // the last found into out.
  void loose_prefix_matches(const OidPrefix& prefix, std::set<std::string>* matches,
                            uint8_t* out) const;
  ObjectView read_view_at(const uint8_t* oid, const Location& loc);
  void info_at(const uint8_t* oid, const Location& loc, int* type, uint64_t* size);
  // cache_result: also keep the object itself in the base cache (it is about to serve as one).
  Object read_packed(uint32_t pack, uint64_t offset, bool cache_result = false);
  Object read_loose(const std::string& path, const uint8_t* oid);
  // The entry's inflated size, checked to be plausible for its compressed data.
  size_t entry_size(Pack& pack, const PackEntry& e, uint64_t offset);
  // Inflates the entry into out, which holds entry_size() bytes.
  void inflate_to(Pack& pack, const PackEntry& e, uint64_t offset, uint8_t* out, size_t size);
  BytesPtr inflate_entry(Pack& pack, const PackEntry& e, uint64_t offset);
  // The delta base at l, with id oid: packed (then kept in the base cache) or loose.
  Object read_base(const Location& l, const uint8_t* oid);

  std::vector<std::string> dirs_;
  std::vector<std::unique_ptr<Pack>> packs_;
  std::set<std::string> known_idx_;
  uint32_t last_pack_ = 0;
  std::set<std::pair<std::string, int>> bad_;  // (20-byte id, pack or -1 for loose)
  std::shared_ptr<BaseCache> cache_;
  DecodeStats stats_;
  Inflater inflater_;
  Scratch out_;      // read_view results
  Scratch delta_;    // delta data being applied
  Object held_;      // keeps a read_view result alive when it is not in out_
};

}  // namespace pc
