// Runs a job over [0, n) in contiguous slices, one per thread, this thread taking the first.
// Where no more threads can be started, this thread runs the slices that did not get one; the
// ones started finish theirs. For batches of independent per-path work (lstat, fsync, hashing)
// whose results go into per-index slots, so the slices never share an element.
#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace pc {

// range(from, to) runs on up to `threads` threads (at least one: the caller's).
template <typename Range>
void run_in_slices(size_t n, size_t threads, const Range& range) {
  threads = std::max<size_t>(threads, 1);
  if (threads == 1) {
    range(size_t{0}, n);
    return;
  }
  const size_t per = (n + threads - 1) / threads;
  auto slice = [&](size_t t) { range(std::min(n, t * per), std::min(n, t * per + per)); };
  std::vector<std::thread> pool;
  size_t started = 1;
  try {
    for (; started < threads; started++) pool.emplace_back(slice, started);
  } catch (const std::system_error&) {
    for (size_t t = started; t < threads; t++) slice(t);
  }
  slice(0);
  for (std::thread& th : pool) th.join();
}

}  // namespace pc
