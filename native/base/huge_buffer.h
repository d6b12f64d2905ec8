// A growable block of bytes for lists that reach tens of MB (a tree walk's paths, ids, modes and
// path starts at a million entries): in memory of huge pages once it is at least kHugeBlockMin
// (base/huge_pages.h), grown there by mremap (the pages already filled are moved, not copied or
// faulted in again), and handed over whole — to a JavaScript array — without a copy (release).
// Below that size, malloc's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace pc {

class HugeBuffer {
 public:
  // Memory given up by release(): free it with free_block (JS: the array's finalizer).
  struct Block {
    void* data = nullptr;
    std::size_t size = 0;    // bytes in use
    std::size_t mapped = 0;  // the mapping's length; 0 for malloc's memory
  };

  HugeBuffer() = default;
  ~HugeBuffer();
  HugeBuffer(HugeBuffer&& other) noexcept;
  HugeBuffer& operator=(HugeBuffer&& other) noexcept;
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;

  char* data() { return data_; }
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {data_ == nullptr ? "" : data_, size_}; }

  // Room for at least n bytes in all. Throws std::bad_alloc.
  void reserve(std::size_t n);
  void append(const void* p, std::size_t n) {
    if (n == 0) return;
    if (cap_ - size_ < n) grow(n);
    std::memcpy(data_ + size_, p, n);
    size_ += n;
  }
  void push_back(char c) { append(&c, 1); }
  // Shrinks to n bytes (n <= size()).
  void truncate(std::size_t n) { size_ = n < size_ ? n : size_; }

  // Gives up the memory (the buffer is empty afterwards).
  Block release();
  static void free_block(const Block& b);

 private:
  void grow(std::size_t more);
  void reset();

  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
  bool mapped_ = false;
};

// The same for elements of a trivially copyable T (stored as bytes, read back by memcpy).
template <typename T>
class HugeArray {
 public:
  std::size_t size() const { return bytes_.size() / sizeof(T); }
  const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  T operator[](std::size_t i) const {
    T v;
    std::memcpy(&v, bytes_.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  void reserve(std::size_t n) { bytes_.reserve(n * sizeof(T)); }
  void push_back(T v) { bytes_.append(&v, sizeof(T)); }
  void append(const T* p, std::size_t n) { bytes_.append(p, n * sizeof(T)); }
  HugeBuffer& bytes() { return bytes_; }

 private:
  HugeBuffer bytes_;
};

}  // namespace pc
