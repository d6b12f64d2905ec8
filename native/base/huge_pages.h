// Large zeroed blocks of memory asked for in huge pages (madvise MADV_HUGEPAGE; used where the
// kernel's transparent huge pages are "madvise" or "always"). A 1% switch of a million-file
// tree fills ~800 MB of fresh arrays (the index's entries, the trees' paths, the merge's rows):
// taken a 4 KiB page at a time, the page faults were a fifth of its time on this VM (~1 s).
#pragma once

#include <cstddef>

namespace pc {

// Blocks at least this large are mapped and advised; smaller ones are the caller's to allocate.
constexpr std::size_t kHugeBlockMin = std::size_t{2} << 20;

// A zeroed block of at least `bytes` (whole 4 KiB pages from a 2 MiB boundary: its aligned
// 2 MiB spans may be huge pages, the tail is not; *mapped set to the length to unmap), or
// nullptr when the mapping fails. The advice is a hint: without it, normal pages.
void* huge_alloc(std::size_t bytes, std::size_t* mapped);

// Unmaps a block from huge_alloc.
void huge_free(void* data, std::size_t mapped);

}  // namespace pc
