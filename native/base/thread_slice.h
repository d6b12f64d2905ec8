// The calling thread's scheduler slice (Linux 6.12+, EEVDF's sched_attr.sched_runtime).
#pragma once

#include <cstdint>

namespace pc {

struct SliceChange {
  bool applied = false;     // the slice was set (a SCHED_OTHER thread on Linux)
  uint64_t previous_ns = 0;  // the slice the thread asked for before (0: the kernel's default)
  int error = 0;             // errno of sched_getattr/sched_setattr, 0 if none
};

// Asks the kernel to give the calling thread slices of `ns` nanoseconds (0: its default). A
// shorter slice lets a thread that sleeps most of the time (an event loop) preempt busier
// threads sooner when it wakes. Leaves a thread under another policy (batch, idle, real-time)
// alone, and keeps its nice value and flags. Kernels before 6.12 accept and ignore the slice.
SliceChange set_thread_slice(uint64_t ns);

}  // namespace pc
