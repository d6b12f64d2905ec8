#include "base/thread_slice.h"

#include <cerrno>

#ifdef __linux__
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace pc {

#ifdef __linux__
namespace {

// struct sched_attr as the kernel defines it (SCHED_ATTR_SIZE_VER1, 56 bytes); glibc 2.36
// declares no wrapper.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};
static_assert(sizeof(SchedAttr) == 56, "sched_attr VER1 layout");

// Flags sched_setattr takes back as sched_getattr reports them (reset-on-fork); the clamp and
// keep flags change what the call means and are not passed on.
constexpr uint64_t kResetOnFork = 0x01;

}  // namespace

SliceChange set_thread_slice(uint64_t ns) {
  SliceChange out;
  SchedAttr attr{};
  if (syscall(SYS_sched_getattr, 0, &attr, static_cast<unsigned>(sizeof attr), 0u) != 0) {
    out.error = errno;
    return out;
  }
  out.previous_ns = attr.sched_runtime;
  if (attr.sched_policy != SCHED_OTHER) return out;
  attr.size = sizeof attr;
  attr.sched_flags &= kResetOnFork;
  attr.sched_runtime = ns;
  if (syscall(SYS_sched_setattr, 0, &attr, 0u) != 0) {
    out.error = errno;
    return out;
  }
  out.applied = true;
  return out;
}
#else
SliceChange set_thread_slice(uint64_t) { return SliceChange{}; }
#endif

}  // namespace pc
