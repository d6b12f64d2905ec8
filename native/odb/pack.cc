#include "odb/pack.h"

#include <cstring>

#include "odb/base_cache.h"
#include "base/common.h"

namespace pc {

Pack::Pack(const std::string& idx_path) {
  idx_.open(idx_path);
  pack_path_ = idx_path.substr(0, idx_path.size() - 4) + ".pack";
  cache_key_ = BaseCache::pack_key(pack_path_, idx_.pack_checksum());
}

void Pack::corrupt(uint64_t offset, const char* why) const {
  throw Error(Code::CorruptPack,
              pack_path_ + ": object at offset " + std::to_string(offset) + ": " + why);
}

void Pack::ensure_open() {
  if (opened_) return;
  map_ = MappedFile::shared(pack_path_);
  const uint8_t* d = map_->data();
  size_t size = map_->size();
  if (size < 12 + 20 || std::memcmp(d, "PACK", 4) != 0)
    throw Error(Code::CorruptPack, pack_path_ + ": not a packfile");
  uint32_t version = be32(d + 4);
  if (version != 2 && version != 3)
    throw Error(Code::CorruptPack, pack_path_ + ": unsupported pack version");
  if (be32(d + 8) != idx_.count())
    throw Error(Code::CorruptPack, pack_path_ + ": object count differs from its index");
  if (std::memcmp(d + size - 20, idx_.pack_checksum(), 20) != 0)
    throw Error(Code::CorruptPack, pack_path_ + ": checksum does not match its index");
  end_ = size - 20;
  opened_ = true;
}

PackEntry Pack::entry_at(uint64_t offset) {
  ensure_open();
  const uint8_t* d = map_->data();
  if (offset < 12 || offset >= end_) corrupt(offset, "offset outside the pack");
  map_->touched_at(offset);  // the header's page and those the fault maps with it
  uint64_t pos = offset;
  uint8_t c = d[pos++];
  PackEntry e;
  e.type = (c >> 4) & 7;
  e.size = c & 15;
  unsigned shift = 4;
  while (c & 0x80) {
    if (pos >= end_ || shift > 57) corrupt(offset, "bad object header");
    c = d[pos++];
    e.size |= uint64_t{c & 0x7fu} << shift;
    shift += 7;
  }
  switch (e.type) {
    case kCommit:
    case kTree:
    case kBlob:
    case kTag:
      break;
    case kOfsDelta: {
      if (pos >= end_) corrupt(offset, "truncated delta header");
      c = d[pos++];
      uint64_t back = c & 0x7f;
      while (c & 0x80) {
        if (pos >= end_ || back >= (uint64_t{1} << 56)) corrupt(offset, "bad delta base offset");
        c = d[pos++];
        back = ((back + 1) << 7) | (c & 0x7f);
      }
      if (back == 0 || back > offset) corrupt(offset, "delta base offset out of range");
      e.base_off = offset - back;
      break;
    }
    case kRefDelta:
      if (end_ - pos < 20) corrupt(offset, "truncated delta base id");
      e.base_oid = d + pos;
      pos += 20;
      break;
    default:
      corrupt(offset, "invalid object type");
  }
  if (pos >= end_) corrupt(offset, "object data missing");
  e.data_off = pos;
  return e;
}

const uint8_t* Pack::data_at(uint64_t data_off, size_t* avail) {
  ensure_open();
  if (data_off >= end_) corrupt(data_off, "offset outside the pack");
  *avail = static_cast<size_t>(end_ - data_off);
  return map_->data() + data_off;
}

}  // namespace pc
