// Buffers in pages of their own (an anonymous mapping each), for scratch that lives long and
// changes size: a thread's kernel scratch kept from call to call and grown for a larger layer,
// or a reader's window. From the heap, each growth left the smaller block behind as a hole that
// stayed resident (the Winograd scratch of Inception-v1 grew 397 -> 885 KiB in five steps and
// held 1.8 MiB of a worker's arena; docs/performance.md, session 16); a mapping returns its
// pages when it is dropped. Each allocation is a system call and faults its pages in on first
// use, so this is for blocks allocated rarely, not per call.
#pragma once

#include <cstddef>
#include <memory>

namespace pg {

// Unmaps a block from mapped_bytes of `bytes` bytes (the size it was mapped with).
struct MappedFree {
    size_t bytes = 0;
    void operator()(void* p) const noexcept;
};

template <class T>
using MappedArray = std::unique_ptr<T[], MappedFree>;

// n bytes (at least one), uninitialized (in fact zero), page-aligned, in a mapping of their own.
// Throws std::bad_alloc.
void* mapped_bytes(size_t n);

// n values of a trivial type in a mapping of their own.
template <class T>
MappedArray<T> mapped_array(size_t n) {
    const size_t bytes = (n ? n : 1) * sizeof(T);
    return MappedArray<T>(static_cast<T*>(mapped_bytes(bytes)), MappedFree{bytes});
}

// A thread's scratch kept from call to call (a thread_local where it is used): at least n
// values, in a mapping replaced (the old one dropped first) only when more is asked for than it
// holds, so each call after the largest reuses the same warm pages.
template <class T>
class KeptArray {
  public:
    T* at_least(size_t n) {
        if (size_ < n) {
            buf_.reset();
            buf_ = mapped_array<T>(n), size_ = n;
        }
        return buf_.get();
    }

  private:
    MappedArray<T> buf_;
    size_t size_ = 0;
};

}  // namespace pg
