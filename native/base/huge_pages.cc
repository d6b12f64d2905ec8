#include "base/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace pc {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}

void* huge_alloc(std::size_t bytes, std::size_t* mapped) {
  if (bytes == 0 || bytes > SIZE_MAX - kHugePage) return nullptr;
  const std::size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  madvise(p, len, MADV_HUGEPAGE);  // a hint: where it is refused, the pages are normal ones
#endif
  *mapped = len;
  return p;
}

void huge_free(void* data, std::size_t mapped) {
  if (data != nullptr) munmap(data, mapped);
}

}  // namespace pc
