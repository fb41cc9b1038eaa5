#include "base/mapped_buffer.h"

#include <sys/mman.h>

#include <new>

namespace pg {

void* mapped_bytes(size_t n) {
    void* p =
        ::mmap(nullptr, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
}

void MappedFree::operator()(void* p) const noexcept {
    if (p) ::munmap(p, bytes);
}

}  // namespace pg
