#include "support/emu_expect.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

namespace pg::test {

void expect_same_rounding_stats(const emu::RoundingStats& a, const emu::RoundingStats& b,
                                const std::string& what) {
    EXPECT_EQ(a.values, b.values) << what;
    EXPECT_EQ(a.overflow, b.overflow) << what;
    EXPECT_EQ(a.underflow, b.underflow) << what;
    EXPECT_EQ(a.nonfinite, b.nonfinite) << what;
    EXPECT_EQ(a.saturated, b.saturated) << what;
    EXPECT_EQ(std::bit_cast<uint64_t>(a.max_abs), std::bit_cast<uint64_t>(b.max_abs)) << what;
    EXPECT_EQ(std::bit_cast<uint64_t>(a.max_round_err), std::bit_cast<uint64_t>(b.max_round_err))
        << what;
}

}  // namespace pg::test
