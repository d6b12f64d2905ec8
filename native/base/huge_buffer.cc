#include "base/huge_buffer.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "base/huge_pages.h"

namespace pc {

HugeBuffer::~HugeBuffer() { reset(); }

HugeBuffer::HugeBuffer(HugeBuffer&& other) noexcept
    : data_(other.data_), size_(other.size_), cap_(other.cap_), mapped_(other.mapped_) {
  other.data_ = nullptr;
  other.size_ = other.cap_ = 0;
  other.mapped_ = false;
}

HugeBuffer& HugeBuffer::operator=(HugeBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    cap_ = other.cap_;
    mapped_ = other.mapped_;
    other.data_ = nullptr;
    other.size_ = other.cap_ = 0;
    other.mapped_ = false;
  }
  return *this;
}

void HugeBuffer::reset() {
  free_block({data_, size_, mapped_ ? cap_ : 0});
  data_ = nullptr;
  size_ = cap_ = 0;
  mapped_ = false;
}

void HugeBuffer::free_block(const Block& b) {
  if (b.data == nullptr) return;
  if (b.mapped != 0) huge_free(b.data, b.mapped);
  else std::free(b.data);
}

HugeBuffer::Block HugeBuffer::release() {
  Block b{data_, size_, mapped_ ? cap_ : 0};
  data_ = nullptr;
  size_ = cap_ = 0;
  mapped_ = false;
  return b;
}

void HugeBuffer::reserve(std::size_t n) {
  if (n > cap_) grow(n - size_);
}

void HugeBuffer::grow(std::size_t more) {
  if (more > SIZE_MAX / 2 - size_) throw std::bad_alloc();
  std::size_t want = size_ + more;
  if (want < 2 * cap_) want = 2 * cap_;
  if (want < 256) want = 256;
  if (want < kHugeBlockMin) {
    void* p = std::realloc(data_, want);
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<char*>(p);
    cap_ = want;
    return;
  }
  if (mapped_) {
    // The pages filled so far move with the mapping; only the new tail is fresh.
    const std::size_t len = (want + kHugeBlockMin - 1) / kHugeBlockMin * kHugeBlockMin;
    void* p = mremap(data_, cap_, len, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    data_ = static_cast<char*>(p);
    cap_ = len;
    return;
  }
  std::size_t mapped = 0;
  void* p = huge_alloc(want, &mapped);
  if (p == nullptr) throw std::bad_alloc();
  if (size_ > 0) std::memcpy(p, data_, size_);
  std::free(data_);
  data_ = static_cast<char*>(p);
  cap_ = mapped;
  mapped_ = true;
}

}  // namespace pc
