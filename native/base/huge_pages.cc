#include "base/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace pc {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}

void* huge_alloc(std::size_t bytes, std::size_t* mapped) {
  constexpr std::size_t kPage = 4096;
  if (bytes == 0 || bytes > SIZE_MAX - 2 * kHugePage) return nullptr;
  // Whole 4 KiB pages, starting on a 2 MiB boundary: the aligned 2 MiB spans become huge
  // pages, the tail stays in small ones (a tail rounded up to a huge page was resident whole:
  // up to 2 MiB more per array).
  const std::size_t len = (bytes + kPage - 1) / kPage * kPage;
  const std::size_t span = len + kHugePage;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t start = (at + kHugePage - 1) / kHugePage * kHugePage;
  if (start > at) munmap(p, start - at);
  const std::uintptr_t end = start + len;
  if (at + span > end) munmap(reinterpret_cast<void*>(end), at + span - end);
  void* block = reinterpret_cast<void*>(start);
#ifdef MADV_HUGEPAGE
  madvise(block, len, MADV_HUGEPAGE);  // a hint: where it is refused, the pages are normal ones
#endif
  *mapped = len;
  return block;
}

void huge_free(void* data, std::size_t mapped) {
  if (data != nullptr) munmap(data, mapped);
}

}  // namespace pc
