// Giving freed heap memory back to the system between calls.
#pragma once

#include <cstddef>

namespace pc {

// Returns the free memory of every malloc arena to the system (glibc's malloc_trim; a no-op
// elsewhere): the writer threads' arenas otherwise keep their peak between calls. Returns
// whether anything was released.
bool release_free_memory();

}  // namespace pc
