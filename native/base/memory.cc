#include "base/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

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

namespace {

// The decimal number (at most 18 digits: no overflow) right after `key` in [from, end); -1 if
// there is none.
long long number_after(std::string_view text, std::string_view key, std::size_t from,
                       std::size_t end) {
  std::size_t at = text.find(key, from);
  if (at == std::string_view::npos || at >= end) return -1;
  at += key.size();
  long long n = 0;
  std::size_t digits = 0;
  for (; at < end && text[at] >= '0' && text[at] <= '9' && digits < 18; ++at, ++digits)
    n = n * 10 + (text[at] - '0');
  return digits == 0 ? -1 : n;
}

// The size="..." of the `<total type="<type>" .../>` element in [from, end), or 0.
std::size_t total_of(std::string_view text, std::string_view type, std::size_t from,
                     std::size_t end) {
  std::size_t at = text.find(type, from);
  if (at == std::string_view::npos || at >= end) return 0;
  std::size_t close = text.find("/>", at);
  if (close == std::string_view::npos || close > end) return 0;
  long long n = number_after(text, "size=\"", at, close);
  return n < 0 ? 0 : static_cast<std::size_t>(n);
}

// The free bytes of the heaps but the first (the main arena) in a malloc_info report.
std::size_t free_outside_main_arena(std::string_view report) {
  std::size_t sum = 0;
  constexpr std::string_view kHeap = "<heap nr=\"";
  for (std::size_t at = report.find(kHeap); at != std::string_view::npos;) {
    std::size_t end = report.find("</heap>", at);
    if (end == std::string_view::npos) break;
    long long nr = number_after(report, kHeap, at, end);
    if (nr > 0) {  // heap 0 is the main arena: the host's main thread allocates there
      sum += total_of(report, "<total type=\"fast\"", at, end);
      sum += total_of(report, "<total type=\"rest\"", at, end);
    }
    at = report.find(kHeap, end);
  }
  return sum;
}

}  // namespace

std::size_t thread_arenas_free_bytes() {
#if defined(__GLIBC__)
  char* buf = nullptr;
  std::size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (f == nullptr) return 0;
  int ok = malloc_info(0, f);
  std::fclose(f);  // sets buf and len
  std::size_t free_bytes = ok == 0 && buf != nullptr ? free_outside_main_arena({buf, len}) : 0;
  std::free(buf);
  return free_bytes;
#else
  return 0;
#endif
}

void drop_pages(const void* data, std::size_t len) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + len) & ~(page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace pc
