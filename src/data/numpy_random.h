// numpy's legacy RandomState (np.random.RandomState(seed)), bit for bit: the MT19937 stream,
// random_sample() doubles and the masked / buffered integer draws that randint() uses.
// Polygraphy's default data loader draws through exactly these calls (polygraphy-spec §5.2),
// so the same seed yields the same inputs in both tools. To add a numpy call, reproduce its C
// code from numpy/random/src (legacy paths) and test it against a value numpy printed.
#pragma once

#include <array>
#include <cstdint>

namespace pg::data {

class NumpyRandomState {
  public:
    // np.random.RandomState(seed) with an integer seed (init_genrand).
    explicit NumpyRandomState(uint32_t seed);

    // One tempered 32-bit word.
    uint32_t next32();
    // (next32() << 32) | next32(), high word first.
    uint64_t next64();
    // random_sample(): a double in [0, 1) with 53 random bits.
    double random_sample();

    // randint(off, off + rng + 1) elements, one call per element within one array fill.
    // 32-bit types, and 64-bit types whose range fits 32 bits: masked rejection on next32().
    uint32_t bounded32(uint32_t rng);
    // 64-bit types with a range above 0xFFFFFFFF: masked rejection on next64().
    uint64_t bounded64(uint64_t rng);

  private:
    void twist();
    std::array<uint32_t, 624> mt_{};
    int pos_ = 624;
};

// The buffered draws numpy uses for 8-bit, 16-bit and bool arrays. The buffer lives for one
// array fill: make a new BufferedBits per randint() call.
class BufferedBits {
  public:
    explicit BufferedBits(NumpyRandomState& rs) : rs_(rs) {}
    // 8-bit element in [0, rng] (before adding the offset).
    uint8_t bounded8(uint8_t rng);
    // 16-bit element in [0, rng].
    uint16_t bounded16(uint16_t rng);
    // One bool element (range [0, 1]).
    bool next_bool();

  private:
    NumpyRandomState& rs_;
    uint32_t buf_ = 0;
    int count_ = 0;
};

// Smallest 2^k - 1 that is >= rng.
uint64_t numpy_mask(uint64_t rng);

}  // namespace pg::data
