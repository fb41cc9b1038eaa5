// numpy's legacy MT19937 RandomState: see numpy_random.h.
#include "data/numpy_random.h"

namespace pg::data {

namespace {
constexpr uint32_t kUpperMask = 0x80000000u;
constexpr uint32_t kLowerMask = 0x7fffffffu;
constexpr uint32_t kMatrixA = 0x9908b0dfu;
}  // namespace

NumpyRandomState::NumpyRandomState(uint32_t seed) {
    mt_[0] = seed;
    for (uint32_t i = 1; i < 624; ++i) {
        mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
    }
    pos_ = 624;
}

void NumpyRandomState::twist() {
    for (int i = 0; i < 624; ++i) {
        const uint32_t y = (mt_[i] & kUpperMask) | (mt_[(i + 1) % 624] & kLowerMask);
        mt_[i] = mt_[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
    }
    pos_ = 0;
}

uint32_t NumpyRandomState::next32() {
    if (pos_ >= 624) twist();
    uint32_t y = mt_[pos_++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

uint64_t NumpyRandomState::next64() {
    const uint64_t hi = next32();
    return (hi << 32) | next32();
}

double NumpyRandomState::random_sample() {
    const uint32_t a = next32() >> 5;
    const uint32_t b = next32() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

uint64_t numpy_mask(uint64_t rng) {
    uint64_t mask = rng;
    for (int s = 1; s < 64; s <<= 1) mask |= mask >> s;
    return mask;
}

uint32_t NumpyRandomState::bounded32(uint32_t rng) {
    if (rng == 0) return 0;
    if (rng == 0xFFFFFFFFu) return next32();
    const uint32_t mask = static_cast<uint32_t>(numpy_mask(rng));
    uint32_t v;
    while ((v = next32() & mask) > rng) {
    }
    return v;
}

uint64_t NumpyRandomState::bounded64(uint64_t rng) {
    if (rng <= 0xFFFFFFFFull) return bounded32(static_cast<uint32_t>(rng));
    if (rng == ~0ull) return next64();
    const uint64_t mask = numpy_mask(rng);
    uint64_t v;
    while ((v = next64() & mask) > rng) {
    }
    return v;
}

uint8_t BufferedBits::bounded8(uint8_t rng) {
    if (rng == 0) return 0;
    const uint8_t mask = static_cast<uint8_t>(numpy_mask(rng));
    uint8_t v;
    do {
        if (count_ == 0) {
            buf_ = rs_.next32();
            count_ = 3;
        } else {
            buf_ >>= 8;
            --count_;
        }
        v = static_cast<uint8_t>(buf_ & 0xffu) & mask;
    } while (v > rng);
    return v;
}

uint16_t BufferedBits::bounded16(uint16_t rng) {
    if (rng == 0) return 0;
    const uint16_t mask = static_cast<uint16_t>(numpy_mask(rng));
    uint16_t v;
    do {
        if (count_ == 0) {
            buf_ = rs_.next32();
            count_ = 1;
        } else {
            buf_ >>= 16;
            --count_;
        }
        v = static_cast<uint16_t>(buf_ & 0xffffu) & mask;
    } while (v > rng);
    return v;
}

bool BufferedBits::next_bool() {
    if (count_ == 0) {
        buf_ = rs_.next32();
        count_ = 31;
    } else {
        buf_ >>= 1;
        --count_;
    }
    return (buf_ & 1u) != 0;
}

}  // namespace pg::data
