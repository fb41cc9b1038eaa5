// Buffers aligned to a cache line. A 64-byte vector load or store that straddles two lines costs
// two accesses; glibc's malloc returns 16-byte aligned blocks (mapped ones at 16 mod 64), so
// nearly every vector of a tensor or a kernel's scratch buffer straddled two lines. Tensors'
// buffers (Tensor::uninitialized) and the kernels' scratch come from here: 0.90-0.97 of the time
// on most bench models (docs/performance.md, session 10).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace pg {

constexpr size_t kCacheLine = 64;

// Frees a block from aligned_bytes.
void aligned_free(void* p) noexcept;

struct AlignedFree {
    void operator()(void* p) const noexcept { aligned_free(p); }
};

template <class T>
using AlignedArray = std::unique_ptr<T[], AlignedFree>;

// n bytes (at least one), uninitialized, at a multiple of kCacheLine (see set_aligned_buffers);
// freed with aligned_free (AlignedFree). Throws std::bad_alloc. The block is a malloc block of
// n + 64 bytes, the offset to its start kept in the byte before the aligned pointer: glibc's own
// aligned allocation (memalign) splits a fragment off the front of each block, and those
// fragments kept freed activations from coalescing (DenseNet-121's peak rose by 14 %).
void* aligned_bytes(size_t n);

// Whether aligned_bytes aligns (default on; off: plain malloc, for `kernel_ab --switch align`).
// Returns the previous setting; thread-safe.
bool set_aligned_buffers(bool on);

// n uninitialized values of a trivial type.
template <class T>
AlignedArray<T> aligned_array(size_t n) {
    return AlignedArray<T>(static_cast<T*>(aligned_bytes(n * sizeof(T))));
}

// n zero values of a trivial type.
template <class T>
AlignedArray<T> aligned_zeros(size_t n) {
    AlignedArray<T> a = aligned_array<T>(n);
    std::memset(a.get(), 0, n * sizeof(T));
    return a;
}

}  // namespace pg
