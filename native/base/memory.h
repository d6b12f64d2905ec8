// Giving memory back to the system: freed heap memory between calls, a buffer's pages.
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

// Drops the whole pages inside [data, data + len) from the process now (madvise DONTNEED):
// anonymous memory reads as zeros if touched again, a private mapping of a file never written
// reads the file again. Only for bytes their owner is done with (an allocator's bookkeeping lies
// outside its blocks, so a buffer's interior pages are its own). Advice only: a failure keeps
// the pages.
void drop_pages(const void* data, std::size_t len);

}  // namespace pc
