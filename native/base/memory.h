// Giving freed heap memory back to the system between calls.
#pragma once

#include <cstddef>

namespace pc {

// Returns the free memory of every malloc arena to the system (glibc's malloc_trim; a no-op
// elsewhere): the writer threads' arenas otherwise keep their peak between calls. Returns
// whether anything was released. The trim holds each arena's lock while it walks it, the main
// thread's too, so it stalls the host's thread for as long as its own free memory takes.
bool release_free_memory();

// The free bytes the arenas other than the main one hold (the threads' arenas: ours), from
// glibc's malloc_info report; 0 elsewhere or when the report cannot be read.
std::size_t thread_arenas_free_bytes();

}  // namespace pc
