// The tensor buffer cache (see buffer_cache.h).
#include "tensor/buffer_cache.h"

#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "base/error.h"

namespace pg {

namespace {

constexpr uint64_t kPage = 4096;

class BufferCache {
  public:
    uint8_t* take(uint64_t size) {
        std::vector<std::pair<uint8_t*, uint64_t>> evicted;
        uint8_t* hit = nullptr;
        {
            std::lock_guard<std::mutex> lock(mu_);
            live_ += size;
            if (live_ > stats_.peak_live_bytes) stats_.peak_live_bytes = live_;
            auto it = free_.find(size);
            if (it != free_.end() && !it->second.empty()) {
                hit = it->second.back();
                it->second.pop_back();
                cached_ -= size;
                ++stats_.hits;
            } else {
                ++stats_.misses;
                evict_over_budget(evicted);
            }
        }
        for (auto& [p, n] : evicted) delete[] p;
        if (hit) return hit;
        try {
            return new uint8_t[size];
        } catch (...) {
            std::lock_guard<std::mutex> lock(mu_);
            live_ -= size;
            throw;
        }
    }

    void give_back(uint8_t* p, uint64_t size) {
        std::lock_guard<std::mutex> lock(mu_);
        live_ -= size;
        free_[size].push_back(p);  // within budget: the bytes were live a moment ago
        cached_ += size;
    }

    BufferCacheStats stats() {
        std::lock_guard<std::mutex> lock(mu_);
        BufferCacheStats s = stats_;
        s.cached_bytes = cached_, s.live_bytes = live_;
        return s;
    }

    void clear() {
        std::lock_guard<std::mutex> lock(mu_);
        for (auto& [size, list] : free_)
            for (uint8_t* p : list) delete[] p;
        free_.clear();
        cached_ = 0;
    }

  private:
    // Frees cached buffers (largest first) until live + cached fits (1 + share) x peak live.
    void evict_over_budget(std::vector<std::pair<uint8_t*, uint64_t>>& out) {
        const double budget =
            (1.0 + kBufferCacheShare) * static_cast<double>(stats_.peak_live_bytes);
        while (cached_ > 0 && static_cast<double>(live_ + cached_) > budget) {
            auto big = free_.end();
            for (auto it = free_.begin(); it != free_.end(); ++it)
                if (!it->second.empty() && (big == free_.end() || it->first > big->first)) big = it;
            out.emplace_back(big->second.back(), big->first);
            big->second.pop_back();
            cached_ -= big->first;
        }
    }

    std::mutex mu_;
    std::unordered_map<uint64_t, std::vector<uint8_t*>> free_;
    uint64_t cached_ = 0, live_ = 0;
    BufferCacheStats stats_;
};

BufferCache& cache() {
    static BufferCache* c = new BufferCache;  // never destroyed: buffers may outlive statics
    return *c;
}

}  // namespace

std::shared_ptr<uint8_t[]> allocate_buffer(uint64_t nbytes) {
    if (nbytes < kBufferCacheMin) return std::shared_ptr<uint8_t[]>(new uint8_t[nbytes ? nbytes : 1]);
    const uint64_t size = (nbytes + kPage - 1) / kPage * kPage;
    uint8_t* p = cache().take(size);
    return std::shared_ptr<uint8_t[]>(p, [size](uint8_t* q) { cache().give_back(q, size); });
}

BufferCacheStats buffer_cache_stats() {
    return cache().stats();
}

void buffer_cache_clear() {
    cache().clear();
}

}  // namespace pg
