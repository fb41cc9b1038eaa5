// emu/precision.h fast paths: round_to_fast (FP16 nearest-even, BF16 and TF32 in every mode) is
// diffed bit for bit against the generic round_to_format over a sweep of float32 bit patterns
// (every 257th, plus the rounding boundaries of every exponent), and round_tensor /
// rounded_copy (serial and split over a thread pool) keep exactly the counters of the original
// per-element loop, which this file keeps as the reference. The fast paths compute the rounding
// error in float; the sweep checks that it is exact. Blocks within the format's range take a
// lean loop (and, for FP16, an in-range rounder): InRangeBlocks diffs each kind of block.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "emu/precision.h"
#include "support/emu_expect.h"

namespace pg::emu {
namespace {

constexpr RoundingMode kModes[] = {RoundingMode::kNearestEven, RoundingMode::kNearestAway,
                                   RoundingMode::kTowardZero};
constexpr Precision kFormats[] = {Precision::kFP16, Precision::kBF16, Precision::kTF32,
                                  Precision::kFP8E4M3, Precision::kFP8E5M2};

// Patterns around every rounding boundary: for each sign and exponent, low parts of k bits at
// the tie, one either side, all ones and the next power of two, under several high parts.
std::vector<uint32_t> boundary_patterns() {
    std::vector<uint32_t> out;
    for (uint32_t sign = 0; sign < 2; ++sign)
        for (uint32_t e = 0; e < 256; ++e)
            for (uint32_t k = 1; k <= 23; ++k) {
                const uint32_t tie = 1u << (k - 1), mask = (1u << k) - 1u;
                const uint32_t highs[] = {0u, 1u << k, 0x7FFFFFu & ~mask};
                for (uint32_t hi : highs)
                    for (uint32_t lo : {tie - 1, tie, tie + 1, mask, mask + 1, 0u, 1u})
                        out.push_back((sign << 31) | (e << 23) | ((hi | lo) & 0x7FFFFFu));
            }
    for (uint32_t b : {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F800001u, 0xFFC12345u, 0x477FEFFFu,
                       0x477FF000u, 0x477FF001u, 0x33000000u, 0x33000001u})
        out.push_back(b);
    return out;
}

std::vector<uint32_t> sweep_patterns() {
    std::vector<uint32_t> out = boundary_patterns();
    for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 257) out.push_back(static_cast<uint32_t>(b));
    return out;
}

TEST(EmuFastPath, ClaimsExactlyTheBitLevelFormats) {
    EXPECT_TRUE(has_fast_rounding(Precision::kFP16, RoundingMode::kNearestEven));
    EXPECT_FALSE(has_fast_rounding(Precision::kFP16, RoundingMode::kTowardZero));
    EXPECT_TRUE(has_fast_rounding(Precision::kBF16, RoundingMode::kNearestAway));
    EXPECT_TRUE(has_fast_rounding(Precision::kTF32, RoundingMode::kTowardZero));
    EXPECT_FALSE(has_fast_rounding(Precision::kFP8E4M3, RoundingMode::kNearestEven));
}

TEST(EmuFastPath, MatchesGenericRoundingBitForBit) {
    const std::vector<uint32_t> patterns = sweep_patterns();
    for (Precision p : kFormats)
        for (RoundingMode m : kModes) {
            if (!has_fast_rounding(p, m)) continue;
            const FormatSpec f = format_spec(p);
            uint64_t mismatches = 0;
            for (uint32_t b : patterns) {
                const float x = std::bit_cast<float>(b);
                const uint32_t fast = std::bit_cast<uint32_t>(round_to_fast(p, x, m));
                const uint32_t ref = std::bit_cast<uint32_t>(round_to_format(f, x, m));
                const float y = std::bit_cast<float>(fast);
                if (std::isfinite(x) && std::isfinite(y)) {  // the fast paths compute it in float
                    EXPECT_EQ(static_cast<double>(std::fabs(y - x)),
                              std::fabs(static_cast<double>(y) - x));
                }
                if (fast != ref && mismatches++ < 5)
                    ADD_FAILURE() << precision_name(p) << " " << rounding_mode_name(m) << " x=0x"
                                  << std::hex << b << " fast=0x" << fast << " generic=0x" << ref;
            }
            EXPECT_EQ(mismatches, 0u) << precision_name(p) << " " << rounding_mode_name(m);
        }
}

// The original round_tensor loop (generic rounding, counters per element).
std::vector<float> reference_round(Precision p, RoundingMode m, std::vector<float> d,
                                   RoundingStats& stats) {
    const FormatSpec f = format_spec(p);
    for (float& v : d) {
        const float x = v;
        const float y = round_to_format(f, x, m);
        const double ax = std::fabs(static_cast<double>(x));
        if (std::isfinite(x)) {
            stats.max_abs = std::max(stats.max_abs, ax);
            if (ax > f.max_finite) ++stats.overflow;
            if (x != 0 && y == 0) ++stats.underflow;
            if (std::isfinite(y))
                stats.max_round_err =
                    std::max(stats.max_round_err, std::fabs(static_cast<double>(y) - x));
        }
        if (!std::isfinite(y)) ++stats.nonfinite;
        v = y;
    }
    stats.values += d.size();
    return d;
}

void expect_same_stats(const RoundingStats& a, const RoundingStats& b, const std::string& what) {
    test::expect_same_rounding_stats(a, b, what);
}

Tensor f32(const std::vector<float>& v) {
    return Tensor::from_values(DataType::kFloat32, {static_cast<int64_t>(v.size())}, v);
}

bool same_bits(const Tensor& t, const std::vector<float>& v) {
    return t.numel() == v.size() && std::memcmp(t.bytes(), v.data(), v.size() * 4) == 0;
}

TEST(EmuFastPath, TensorRoundingKeepsValuesAndCounters) {
    std::vector<float> src;
    for (uint32_t b : boundary_patterns()) src.push_back(std::bit_cast<float>(b));
    ThreadPool pool(2);
    for (Precision p : kFormats)
        for (RoundingMode m : kModes)
            for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
                RoundingStats ref_stats, in_place, copied;
                const std::vector<float> ref = reference_round(p, m, src, ref_stats);
                Tensor t = f32(src);
                const Tensor original = t;
                uint64_t nonfinite_in = 0;
                const Tensor c = rounded_copy(p, original, m, copied, nonfinite_in, tp);
                round_tensor(p, t, m, in_place, tp);
                EXPECT_TRUE(same_bits(t, ref)) << precision_name(p);
                EXPECT_TRUE(same_bits(c, ref)) << precision_name(p);
                EXPECT_TRUE(same_bits(original, src)) << "rounded_copy wrote its source";
                EXPECT_GT(nonfinite_in, 0u);
                expect_same_stats(in_place, ref_stats, "round_tensor");
                expect_same_stats(copied, ref_stats, "rounded_copy");
            }
}

// x < y with -0 below +0 (the order the rounded tensor's lowest / highest follow).
bool before(double x, double y) {
    return x < y || (x == y && std::signbit(x) && !std::signbit(y));
}

// What round_tensor's rounded_stats and representable_stats report for the rounded values `y`.
RoundingStats reference_rounded_stats(const std::vector<float>& y) {
    RoundingStats s;
    s.values = y.size();
    for (float v : y) {
        if (!std::isfinite(v)) {
            ++s.nonfinite;
            continue;
        }
        s.max_abs = std::max(s.max_abs, std::fabs(static_cast<double>(v)));
        if (before(v, s.lowest)) s.lowest = v;
        if (before(s.highest, v)) s.highest = v;
    }
    return s;
}

// With `signed_zeros` the lowest and highest value must match bit for bit (the fast paths order
// -0 below +0); the generic loop compares values, so either zero may stand for a zero there.
void expect_same_rounded_stats(const RoundingStats& a, const RoundingStats& b, bool signed_zeros,
                               const char* what) {
    EXPECT_EQ(a.values, b.values) << what;
    EXPECT_EQ(a.nonfinite, b.nonfinite) << what;
    EXPECT_EQ(a.max_abs, b.max_abs) << what;
    EXPECT_EQ(a.lowest, b.lowest) << what;
    EXPECT_EQ(a.highest, b.highest) << what;
    if (!signed_zeros) return;
    EXPECT_EQ(std::signbit(a.lowest), std::signbit(b.lowest)) << what;
    EXPECT_EQ(std::signbit(a.highest), std::signbit(b.highest)) << what;
}

// Blocks of 1024 values of the kinds the in-range shortcut tells apart: ordinary values (some
// exactly representable), values around each format's underflow threshold, zeros of both signs
// only, -0 as the lowest value, one overflow, one NaN, one infinity; then a short tail.
std::vector<float> range_blocks() {
    std::vector<float> v;
    uint32_t state = 12345;
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    auto block = [&](auto make) {
        for (int i = 0; i < 1024; ++i) v.push_back(make(i));
    };
    auto ordinary = [&](int) {
        return (static_cast<float>(next() >> 8) / 16777216.0f - 0.5f) * 60.0f;
    };
    block(ordinary);
    block([&](int i) { return i % 3 ? ordinary(i) : static_cast<float>(i % 17) * 0.25f; });
    for (float tiny : {2.0e-8f, 3.0e-8f, 1.0e-39f, 1.0e-45f, 3.0e-41f})  // FP16 / BF16 / FP8 edges
        block([&](int i) { return i == 500 ? (i % 2 ? -tiny : tiny) : ordinary(i); });
    block([&](int i) { return i % 5 ? 0.0f : -0.0f; });
    block([&](int i) { return i == 7 ? -0.0f : std::fabs(ordinary(i)); });
    block([&](int i) { return i == 900 ? 70000.0f : ordinary(i); });
    block([&](int i) { return i == 3 ? std::nanf("") : ordinary(i); });
    block([&](int i) { return i == 1000 ? -INFINITY : ordinary(i); });
    for (int i = 0; i < 77; ++i) v.push_back(ordinary(i));
    return v;
}

TEST(EmuFastPath, InRangeBlocksKeepValuesAndCounters) {
    const std::vector<float> src = range_blocks();
    ThreadPool pool(2);
    for (Precision p : kFormats)
        for (RoundingMode m : kModes)
            for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
                const std::string what = std::string(precision_name(p)) + " " +
                                         rounding_mode_name(m) + (tp ? " pool" : "");
                RoundingStats ref_stats, in_place, again, copied;
                const std::vector<float> ref = reference_round(p, m, src, ref_stats);
                Tensor t = f32(src);
                round_tensor(p, t, m, in_place, again, tp);
                uint64_t nonfinite_in = 0;
                const Tensor c = rounded_copy(p, f32(src), m, copied, nonfinite_in, tp);
                EXPECT_TRUE(same_bits(t, ref)) << what;
                EXPECT_TRUE(same_bits(c, ref)) << what;
                EXPECT_EQ(nonfinite_in, 2u) << what;
                expect_same_stats(in_place, ref_stats, what.c_str());
                expect_same_stats(copied, ref_stats, what.c_str());
                const RoundingStats ref_again = reference_rounded_stats(ref);
                const bool fast = has_fast_rounding(p, m);
                expect_same_rounded_stats(again, ref_again, fast, what.c_str());
                expect_same_rounded_stats(representable_stats(p, t, tp), ref_again, true,
                                          what.c_str());
                // Every block on its own, so a wrong block result is not hidden by the others.
                for (size_t b = 0; b < src.size(); b += 1024) {
                    const size_t e = std::min(src.size(), b + 1024);
                    const std::vector<float> part(src.begin() + b, src.begin() + e);
                    RoundingStats ref_part, got, got_again;
                    const std::vector<float> ref_y = reference_round(p, m, part, ref_part);
                    Tensor u = f32(part);
                    round_tensor(p, u, m, got, got_again, nullptr);
                    const std::string at = what + " block " + std::to_string(b / 1024);
                    EXPECT_TRUE(same_bits(u, ref_y)) << at;
                    expect_same_stats(got, ref_part, at.c_str());
                    expect_same_rounded_stats(got_again, reference_rounded_stats(ref_y), fast,
                                              at.c_str());
                    uint64_t nf = 0;
                    RoundingStats unused;
                    const Tensor same = f32(ref_y);
                    EXPECT_EQ(rounded_copy(p, same, m, unused, nf, nullptr).bytes(), same.bytes())
                        << at << ": a rounded block was copied again";
                }
            }
}

TEST(EmuFastPath, RepresentableInputIsNotCopied) {
    std::vector<float> v = {1.0f, -2.5f, 0.0f, 65504.0f, 0.099975586f};
    Tensor t = f32(v);
    RoundingStats s;
    uint64_t nonfinite_in = 0;
    const Tensor r =
        rounded_copy(Precision::kFP16, t, RoundingMode::kNearestEven, s, nonfinite_in, nullptr);
    EXPECT_EQ(r.bytes(), t.bytes());
    EXPECT_EQ(s.values, 5u);
    EXPECT_EQ(s.max_abs, 65504.0);
    v[4] = 0.1f;
    Tensor u = f32(v);
    const Tensor ru =
        rounded_copy(Precision::kFP16, u, RoundingMode::kNearestEven, s, nonfinite_in, nullptr);
    EXPECT_NE(ru.bytes(), u.bytes());
    EXPECT_EQ(ru.data<float>()[4], 0.099975586f);
    EXPECT_EQ(u.data<float>()[4], 0.1f);
}

}  // namespace
}  // namespace pg::emu
