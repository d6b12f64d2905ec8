// A caller's request that a long synchronous step stop: slot 0 of an Int32Array over shared
// memory, which the caller's thread sets while this one works (src/run/control.ts). Steps that
// run for tens of milliseconds on large trees (the tree walk, locating every blob) look at it
// every few hundred items and stop with Code::Aborted.
#pragma once

#include <cstdint>
#include <string>

#include "base/common.h"

namespace pc {

class Cancel {
 public:
  // The flag to read (null: nothing can ask to stop). The caller keeps its memory alive.
  void set(const int32_t* flag) { flag_ = flag; }

  bool requested() const { return flag_ != nullptr && __atomic_load_n(flag_, __ATOMIC_RELAXED) != 0; }

  void check(const char* step) const {
    if (requested()) throw Error(Code::Aborted, std::string(step) + ": aborted");
  }

 private:
  const int32_t* flag_ = nullptr;
};

// How many items a step handles between two looks at the flag (a relaxed load: cheap). At
// 2,048, locating a Linux tree's blobs (each a pack header, a delta's a few bytes inflated)
// went 30-60 ms between looks.
constexpr uint32_t kCancelEvery = 256;

}  // namespace pc
