#include "write/schedule.h"

#include <algorithm>

namespace pc {

ChunkSchedule::ChunkSchedule(size_t chunks, std::vector<uint32_t> groups, uint32_t per_group)
    : count_(chunks), groups_(std::move(groups)), per_group_(std::max<uint32_t>(per_group, 1)) {
  if (!groups_.empty()) {
    groups_.resize(count_, 0);  // the binding checks the length; never read past it here
    uint32_t top = *std::max_element(groups_.begin(), groups_.end());
    active_.assign(static_cast<size_t>(top) + 1, 0);
  }
  taken_.assign(count_, false);
}

bool ChunkSchedule::has_room(size_t k) const {
  return groups_.empty() || active_[groups_[k]] < per_group_;
}

size_t ChunkSchedule::take() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    while (first_ < count_ && taken_[first_]) first_++;
    if (first_ == count_) return kNone;
    // Skipped chunks belong to full groups: at most threads × per_group of them are running,
    // so the scan passes over few groups' chunks.
    for (size_t k = first_; k < count_; k++) {
      if (taken_[k] || !has_room(k)) continue;
      taken_[k] = true;
      if (!groups_.empty()) active_[groups_[k]]++;
      return k;
    }
    room_.wait(lock);
  }
}

void ChunkSchedule::finished(size_t k) {
  if (groups_.empty() || k >= count_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_[groups_[k]]--;
  }
  room_.notify_all();
}

}  // namespace pc
