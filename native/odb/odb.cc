#include "odb/odb.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "odb/delta.h"
#include "odb/loose.h"
#include "base/fd.h"

namespace pc {

namespace {
constexpr size_t kMaxChain = 10000;  // deeper than any real pack; stops REF_DELTA cycles
class PackedStream : public ObjectStream {
 public:
  // pack outlives the stream (the reader that made it owns the pack).
  PackedStream(Pack* pack, const uint8_t* src, size_t avail, int t, uint64_t s, std::string where)
      : pack_(pack), z_(src, avail), where_(std::move(where)) {
    type = t;
    size = s;
  }
  size_t read(uint8_t* out, size_t cap) override {
    long got = z_.read(out, cap);
    uint64_t now = z_.consumed();
    pack_->touched(now - reported_);
    reported_ = now;
    if (got < 0) throw Error(Code::CorruptPack, where_ + ": corrupt zlib data");
    return static_cast<size_t>(got);
  }

 private:
  Pack* pack_;
  InflateStream z_;
  std::string where_;
  uint64_t reported_ = 0;
};
}  // namespace

Odb::Odb(std::vector<std::string> object_dirs, std::shared_ptr<BaseCache> cache)
    : dirs_(std::move(object_dirs)), cache_(std::move(cache)) {
  scan_packs();
}

bool Odb::scan_packs() {
  struct Found {
    std::string path;
    int64_t mtime;
  };
  std::vector<Found> found;
  for (const std::string& dir : dirs_) {
    std::string pack_dir = dir + "/pack";
    DIR* d = opendir(pack_dir.c_str());
    if (d == nullptr) continue;
    while (struct dirent* ent = readdir(d)) {
      std::string name = ent->d_name;
      if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".idx") != 0) continue;
      std::string path = pack_dir + "/" + name;
      if (known_idx_.count(path) != 0) continue;
      std::string pack = path.substr(0, path.size() - 4) + ".pack";
      struct stat st;
      if (stat(pack.c_str(), &st) != 0) continue;  // an index without its pack is not usable
      found.push_back({path, static_cast<int64_t>(st.st_mtime)});
    }
    closedir(d);
  }
  // Newest first, as git does: recent objects are the ones asked for most.
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.mtime > b.mtime; });
  for (const Found& f : found) {
    packs_.push_back(std::make_unique<Pack>(f.path));
    known_idx_.insert(f.path);
  }
  return !found.empty();
}

bool Odb::is_bad(const uint8_t* oid, int pack) const {
  if (bad_.empty()) return false;
  return bad_.count({std::string(reinterpret_cast<const char*>(oid), 20), pack}) != 0;
}

bool Odb::mark_bad(const uint8_t* oid, const Location& loc) {
  return bad_.insert({std::string(reinterpret_cast<const char*>(oid), 20), loc.pack}).second;
}

template <typename Read>
auto Odb::read_any(const uint8_t* oid, Read read) -> decltype(read(std::declval<Location&>())) {
  std::unique_ptr<Error> first;
  for (;;) {
    Location loc;
    if (!locate(oid, &loc)) {
      if (first) throw *first;
      throw Error(Code::MissingObject, to_hex(oid, 20));
    }
    try {
      return read(loc);
    } catch (const Error& e) {
      bool damage = e.code() == Code::CorruptPack || e.code() == Code::CorruptObject ||
                    e.code() == Code::MissingObject;
      if (!damage || !mark_bad(oid, loc)) throw;
      if (!first) first = std::make_unique<Error>(e);
    }
  }
}

bool Odb::find_in_packs(const uint8_t* oid, Location* loc) {
  uint32_t n = static_cast<uint32_t>(packs_.size());
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = (last_pack_ + k) % n;
    if (is_bad(oid, static_cast<int>(i))) continue;
    if (packs_[i]->index().find(oid, &loc->offset)) {
      loc->pack = static_cast<int>(i);
      last_pack_ = i;
      return true;
    }
  }
  return false;
}

bool Odb::locate(const uint8_t* oid, Location* loc) {
  if (find_in_packs(oid, loc)) return true;
  if (find_loose(oid, &loc->loose)) {
    loc->pack = -1;
    loc->offset = 0;
    return true;
  }
  // A repack may have moved it into a pack we have not seen yet.
  return scan_packs() && find_in_packs(oid, loc);
}

Object Odb::read(const uint8_t* oid) {
  return read_any(oid, [&](const Location& loc) {
    if (loc.pack >= 0) return read_packed(static_cast<uint32_t>(loc.pack), loc.offset);
    return read_loose(loc.loose, oid);
  });
}

namespace {
std::string at(const Pack& pack, uint64_t offset) {
  return pack.pack_path() + ": object at offset " + std::to_string(offset);
}
}  // namespace

size_t Odb::entry_size(Pack& pack, const PackEntry& e, uint64_t offset) {
  size_t avail = 0;
  pack.data_at(e.data_off, &avail);
  if (!plausible_size(e.size, avail) || e.size > SIZE_MAX)
    throw Error(Code::CorruptPack, at(pack, offset) + ": implausible size");
  return static_cast<size_t>(e.size);
}

void Odb::inflate_to(Pack& pack, const PackEntry& e, uint64_t offset, uint8_t* out,
                     size_t size) {
  size_t avail = 0;
  const uint8_t* src = pack.data_at(e.data_off, &avail);
  stats_.inflations++;
  stats_.inflated_bytes += size;
  size_t consumed = 0;
  bool ok = inflater_.inflate_exact(src, avail, out, size, &consumed);
  pack.touched(consumed);
  if (!ok) throw Error(Code::CorruptPack, at(pack, offset) + ": corrupt zlib data");
}

void Odb::info_many(const uint8_t* ids, size_t n, InfoRow* rows, int32_t* order) {
  struct Key {
    uint64_t pack;  // not in a pack (loose, missing): past every pack
    uint64_t offset;
    size_t pos;
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; i++) {
    if (i % kCancelEvery == 0) cancel_.check("locating the blobs");
    Location loc;
    bool found = find_in_packs(ids + i * 20, &loc);  // loose ones are looked for once, below
    keys[i] = Key{found ? static_cast<uint64_t>(loc.pack) : UINT64_MAX, found ? loc.offset : 0, i};
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.pack != b.pack) return a.pack < b.pack;
    return a.offset != b.offset ? a.offset < b.offset : a.pos < b.pos;
  });
  if (order != nullptr) {
    for (size_t i = 0; i < n; i++) order[i] = static_cast<int32_t>(keys[i].pos);
  }
  size_t done = 0;
  for (const Key& k : keys) {
    if (++done % kCancelEvery == 0) cancel_.check("locating the blobs");
    const uint8_t* oid = ids + k.pos * 20;
    InfoRow& row = rows[k.pos];
    row = InfoRow{};
    if (k.pack != UINT64_MAX && !is_bad(oid, static_cast<int>(k.pack))) {
      Location loc{static_cast<int>(k.pack), k.offset, {}};
      try {
        info_at(oid, loc, &row.type, &row.size);
        row.found = true;
        row.loc = loc;
        continue;
      } catch (const Error&) {
        // Damaged: info() below marks this copy and moves on to another, as every read does.
      }
    }
    row.found = info(oid, &row.loc, &row.type, &row.size);
  }
}

void Odb::release_cache() {
  cache_->clear();
  for (auto& pack : packs_) pack->release();
}

DecodeStats Odb::take_stats() {
  DecodeStats out = std::move(stats_);
  stats_ = DecodeStats{};
  return out;
}

const std::string& Odb::pack_name(uint32_t k) const { return packs_.at(k)->pack_path(); }

BytesPtr Odb::inflate_entry(Pack& pack, const PackEntry& e, uint64_t offset) {
  BytesPtr out = alloc_bytes(entry_size(pack, e, offset));
  inflate_to(pack, e, offset, out->data.get(), out->size);
  return out;
}

Object Odb::read_base(const Location& l, const uint8_t* oid) {
  if (l.pack < 0) return read_loose(l.loose, oid);
  return read_packed(static_cast<uint32_t>(l.pack), l.offset, true);
}

uint8_t* Scratch::reserve(size_t n) {
  big_.reset();
  if (n > kKeep) {
    try {
      big_ = allocate_buffer(n);
    } catch (const std::bad_alloc&) {
      throw Error(Code::TooLarge, "cannot allocate " + std::to_string(n) + " bytes");
    }
    return big_.get();
  }
  if (n > cap_ || !buf_) {
    size_t want = std::max(n, std::min(kKeep, std::max<size_t>(cap_ * 2, 64 * 1024)));
    buf_.reset();
    buf_ = allocate_buffer(want);
    cap_ = want;
  }
  return buf_.get();
}

ObjectView Odb::read_view(const uint8_t* oid) {
  return read_any(oid, [&](const Location& loc) { return read_view_at(oid, loc); });
}

ObjectView Odb::read_view_at(const uint8_t* oid, const Location& loc) {
  held_ = Object{};
  if (loc.pack < 0) {
    held_ = read_loose(loc.loose, oid);
    return ObjectView{held_.type, held_.bytes->data.get(), held_.bytes->size};
  }
  uint32_t p = static_cast<uint32_t>(loc.pack);
  if (cache_->get(packs_[p]->cache_key(), loc.offset, &held_)) {
    stats_.cache_hits++;
    return ObjectView{held_.type, held_.bytes->data.get(), held_.bytes->size};
  }
  Pack& pack = *packs_[p];
  PackEntry e = pack.entry_at(loc.offset);
  size_t size = entry_size(pack, e, loc.offset);
  if (e.type != kOfsDelta && e.type != kRefDelta) {
    uint8_t* out = out_.reserve(size);
    inflate_to(pack, e, loc.offset, out, size);
    return ObjectView{e.type, out, size};
  }
  // A delta: its base comes through the cache (siblings share it), the result goes to out_.
  Location bl{static_cast<int>(p), e.base_off, {}};
  if (e.type == kRefDelta && !locate(e.base_oid, &bl))
    throw Error(Code::MissingObject, to_hex(e.base_oid, 20) + " (delta base)");
  Object base = read_base(bl, e.base_oid);
  uint8_t* delta = delta_.reserve(size);
  inflate_to(pack, e, loc.offset, delta, size);
  try {
    // The ops prove the result's size before it is allocated.
    size_t target = delta_result_size(base.bytes->size, delta, size);
    uint8_t* out = out_.reserve(target);
    stats_.deltas++;
    apply_delta_into(base.bytes->data.get(), base.bytes->size, delta, size, out, target);
    return ObjectView{base.type, out, target};
  } catch (const Error& err) {
    if (err.code() != Code::CorruptObject) throw;
    throw Error(Code::CorruptPack, at(pack, loc.offset) + ": " + err.what());
  }
}

Object Odb::read_packed(uint32_t pack, uint64_t offset, bool cache_result) {
  struct Link {
    uint32_t pack;
    uint64_t offset;
    PackEntry entry;
  };
  std::vector<Link> chain;
  Object base;
  uint32_t p = pack;
  uint64_t off = offset;
  for (;;) {
    if (cache_->get(packs_[p]->cache_key(), off, &base)) {
      stats_.cache_hits++;
      break;
    }
    PackEntry e = packs_[p]->entry_at(off);
    if (e.type != kOfsDelta && e.type != kRefDelta) {
      base = Object{e.type, inflate_entry(*packs_[p], e, off)};
      if (!chain.empty() || cache_result) {
        stats_.base(p, off, base.bytes->size);
        cache_->put(packs_[p]->cache_key(), off, base);
      }
      break;
    }
    chain.push_back(Link{p, off, e});
    if (chain.size() > kMaxChain)
      throw Error(Code::CorruptPack, packs_[pack]->pack_path() + ": delta chain too deep at offset " +
                                         std::to_string(offset));
    if (e.type == kOfsDelta) {
      off = e.base_off;
      continue;
    }
    Location loc;
    if (!locate(e.base_oid, &loc))
      throw Error(Code::MissingObject, to_hex(e.base_oid, 20) + " (delta base)");
    if (loc.pack < 0) {
      base = read_loose(loc.loose, e.base_oid);
      break;
    }
    p = static_cast<uint32_t>(loc.pack);
    off = loc.offset;
  }
  for (size_t i = chain.size(); i-- > 0;) {
    const Link& l = chain[i];
    BytesPtr delta = inflate_entry(*packs_[l.pack], l.entry, l.offset);
    BytesPtr result;
    stats_.deltas++;
    try {
      result = apply_delta(base.bytes->data.get(), base.bytes->size, delta->data.get(),
                           delta->size);
    } catch (const Error& err) {
      throw Error(Code::CorruptPack, at(*packs_[l.pack], l.offset) + ": " + err.what());
    }
    base = Object{base.type, result};
    if (i > 0 || cache_result) {
      stats_.base(l.pack, l.offset, base.bytes->size);
      cache_->put(packs_[l.pack]->cache_key(), l.offset, base);
    }
  }
  return base;
}

bool Odb::info(const uint8_t* oid, Location* loc, int* type, uint64_t* size) {
  Location any;
  if (!locate(oid, &any)) return false;
  *loc = read_any(oid, [&](const Location& at) {
    info_at(oid, at, type, size);
    return at;
  });
  return true;
}

void Odb::info_at(const uint8_t* oid, const Location& at_loc, int* type, uint64_t* size) {
  const Location* loc = &at_loc;
  if (loc->pack < 0) {
    if (loose_header(loc->loose, type, size)) return;
    LooseStream s(loc->loose, oid);
    *type = s.type;
    *size = s.size;
    return;
  }
  Pack& pack = *packs_[loc->pack];
  PackEntry e = pack.entry_at(loc->offset);
  *type = e.type;
  *size = e.size;
  if (e.type == kOfsDelta || e.type == kRefDelta) {
    size_t avail = 0;
    const uint8_t* src = pack.data_at(e.data_off, &avail);
    uint8_t hdr[20];
    long got = inflater_.inflate_prefix(src, avail, hdr, sizeof hdr);
    uint64_t target = 0;
    if (got <= 0 || !delta_target_size(hdr, static_cast<size_t>(got), &target))
      throw Error(Code::CorruptPack, at(pack, loc->offset) + ": bad delta header");
    *size = target;
  }
}

int Odb::resolve_prefix(const OidPrefix& prefix, uint8_t* out) {
  std::set<std::string> matches;
  uint8_t oid[20];
  for (auto& pack : packs_) {
    int n = pack->index().find_prefix(prefix, oid);
    if (n >= 2) return 2;
    if (n == 1) {
      matches.insert(std::string(reinterpret_cast<char*>(oid), 20));
      std::memcpy(out, oid, 20);
    }
  }
  loose_prefix_matches(prefix, &matches, out);
  if (matches.size() > 1) return 2;
  return static_cast<int>(matches.size());
}

std::unique_ptr<ObjectStream> Odb::stream(const uint8_t* oid) {
  // Damage found in a header moves on to another copy; damage found later, while the writer
  // streams, fails the file (the object is too large to read twice).
  return read_any(oid, [&](const Location& loc) -> std::unique_ptr<ObjectStream> {
    if (loc.pack < 0) {
      auto s = std::make_unique<LooseStream>(loc.loose, oid);
      stats_.inflations++;
      stats_.inflated_bytes += s->size;
      return s;
    }
    Pack& pack = *packs_[loc.pack];
    PackEntry e = pack.entry_at(loc.offset);
    if (e.type == kOfsDelta || e.type == kRefDelta) return nullptr;
    stats_.inflations++;
    stats_.inflated_bytes += e.size;
    size_t avail = 0;
    const uint8_t* src = pack.data_at(e.data_off, &avail);
    return std::make_unique<PackedStream>(&pack, src, avail, e.type, e.size, at(pack, loc.offset));
  });
}

}  // namespace pc
