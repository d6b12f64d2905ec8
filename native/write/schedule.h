// The order in which writing threads take chunks, and which chunks may not run at once. On a
// network filesystem (and on FUSE) the kernel serializes creates under the parent directory's
// lock, so writers that take neighbouring chunks of one directory wait for each other instead
// of for the server. Chunks carry a group (their directory); at most `per_group` chunks of one
// group are written at a time, and a free thread takes the first chunk, in list order, whose
// group has room.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

namespace pc {

class ChunkSchedule {
 public:
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();

  // `groups` empty: any chunk may run beside any other (plain list order).
  ChunkSchedule(size_t chunks, std::vector<uint32_t> groups, uint32_t per_group);

  // The next chunk for a thread, or kNone once all are handed out. Waits while every chunk
  // left belongs to a group that is full: a chunk of that group is running, so it ends.
  size_t take();
  // Chunk k (from take) is written: its group has room again.
  void finished(size_t k);

  ChunkSchedule(const ChunkSchedule&) = delete;
  ChunkSchedule& operator=(const ChunkSchedule&) = delete;

 private:
  bool has_room(size_t k) const;

  std::mutex mu_;
  std::condition_variable room_;
  size_t count_;
  std::vector<uint32_t> groups_;
  uint32_t per_group_;
  std::vector<uint32_t> active_;  // chunks running, by group
  std::vector<bool> taken_;
  size_t first_ = 0;  // every chunk before it is taken
};

}  // namespace pc
