#include "base/memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pc {

bool release_free_memory() {
#if defined(__GLIBC__)
  return malloc_trim(0) != 0;
#else
  return false;
#endif
}

}  // namespace pc
