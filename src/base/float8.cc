#include "base/float8.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace pg {

namespace {

uint32_t width_of(const MiniFloatFormat& f) {
    return static_cast<uint32_t>(f.exp_bits + f.mant_bits);
}
uint32_t exp_ones(const MiniFloatFormat& f) {
    return (1u << f.exp_bits) - 1u;
}

// The encoding of zero with the given sign bit (already shifted into place).
uint32_t zero_bits(const MiniFloatFormat& f, uint32_t sign) {
    return f.specials == MiniFloatSpecials::kFnuz ? 0u : sign;
}

// Infinity, or a finite value that rounds past max_finite.
uint32_t overflow_bits(const MiniFloatFormat& f, uint32_t sign, bool saturate) {
    if (saturate || f.specials == MiniFloatSpecials::kNone) return sign | f.max_finite;
    switch (f.specials) {
        case MiniFloatSpecials::kIeee:
            return sign | (exp_ones(f) << f.mant_bits);
        case MiniFloatSpecials::kFn:
            return sign | ((1u << width_of(f)) - 1u);
        default:
            return 1u << width_of(f);
    }
}

// A NaN: IEEE formats keep the sign and the top payload bits (quiet bit set).
uint32_t nan_bits(const MiniFloatFormat& f, uint32_t sign, uint64_t double_bits) {
    switch (f.specials) {
        case MiniFloatSpecials::kIeee: {
            const uint32_t mant_mask = (1u << f.mant_bits) - 1u;
            const uint32_t payload =
                static_cast<uint32_t>(double_bits >> (52 - f.mant_bits)) & mant_mask;
            const uint32_t quiet = 1u << (f.mant_bits - 1);
            return sign | (exp_ones(f) << f.mant_bits) | quiet | payload;
        }
        case MiniFloatSpecials::kFn:
            return sign | ((1u << width_of(f)) - 1u);
        default:
            return 1u << width_of(f);
    }
}

}  // namespace

double minifloat_to_double(uint32_t bits, const MiniFloatFormat& f) {
    const uint32_t width = width_of(f);
    const bool negative = ((bits >> width) & 1u) != 0;
    const uint32_t mag = bits & ((1u << width) - 1u);
    const uint32_t exp = mag >> f.mant_bits;
    const uint32_t mant = mag & ((1u << f.mant_bits) - 1u);
    const double nan =
        std::copysign(std::numeric_limits<double>::quiet_NaN(), negative ? -1.0 : 1.0);
    switch (f.specials) {
        case MiniFloatSpecials::kIeee:
            if (exp == exp_ones(f))
                return mant ? nan
                            : (negative ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
            break;
        case MiniFloatSpecials::kFn:
            if (mag == (1u << width) - 1u) return nan;
            break;
        case MiniFloatSpecials::kFnuz:
            if (negative && mag == 0) return std::numeric_limits<double>::quiet_NaN();
            break;
        case MiniFloatSpecials::kNone:
            break;
    }
    const double v = exp == 0 ? std::ldexp(mant, 1 - f.bias - f.mant_bits)
                              : std::ldexp(mant + (1u << f.mant_bits),
                                           static_cast<int>(exp) - f.bias - f.mant_bits);
    return negative ? -v : v;
}

uint32_t double_to_minifloat(double x, const MiniFloatFormat& f, bool saturate) {
    const uint64_t u = std::bit_cast<uint64_t>(x);
    const uint32_t sign = static_cast<uint32_t>(u >> 63) << width_of(f);
    const uint64_t abs = u & 0x7FFFFFFFFFFFFFFFull;
    if (abs > 0x7FF0000000000000ull) return nan_bits(f, sign, u);
    if (abs == 0x7FF0000000000000ull) return overflow_bits(f, sign, saturate);
    const int biased = static_cast<int>(abs >> 52);
    if (biased == 0)
        return zero_bits(f, sign);  // zero, or a double subnormal: far below any format
    const int e = biased - 1023;
    const int e_eff = std::max(e, 1 - f.bias);       // subnormals share the smallest exponent
    const int shift = e_eff - f.mant_bits - e + 52;  // bits of the double mantissa to drop
    if (shift > 60) return zero_bits(f, sign);       // below half the smallest subnormal
    const uint64_t mant = (abs & ((1ull << 52) - 1)) | (1ull << 52);
    uint64_t q = mant >> shift;
    const uint64_t rem = mant & ((1ull << shift) - 1);
    const uint64_t half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;  // ties to even
    if (q == 0) return zero_bits(f, sign);
    // q counts units of the target's ulp at exponent e_eff; a carry into the next binade lands in
    // the exponent field by itself.
    const int64_t code =
        (static_cast<int64_t>(e_eff + f.bias - 1) << f.mant_bits) + static_cast<int64_t>(q);
    if (code > static_cast<int64_t>(f.max_finite)) return overflow_bits(f, sign, saturate);
    return sign | static_cast<uint32_t>(code);
}

float float8e8m0_bits_to_float(uint8_t bits) {
    if (bits == 0xFF) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

uint8_t float_to_float8e8m0_bits(float f, bool saturate, E8M0Rounding mode) {
    const uint32_t b = std::bit_cast<uint32_t>(f);
    uint32_t exp = (b >> 23) & 0xFFu;
    if (exp == 0xFFu) return 0xFF;  // NaN and infinities
    bool up = false;
    if (mode == E8M0Rounding::kUp) {
        up = (b & 0x7FFFFFu) != 0;
    } else if (mode == E8M0Rounding::kNearest) {
        const bool g = (b & 0x400000u) != 0, r = (b & 0x200000u) != 0, s = (b & 0x1FFFFFu) != 0;
        up = g && (r || s || exp > 0);
    }
    if (up && !(saturate && exp == 0xFEu)) ++exp;
    return static_cast<uint8_t>(exp);
}

const MiniFloatFormat* minifloat_format(DataType dt) {
    switch (dt) {
        case DataType::kFloat8E4M3FN:
            return &kE4M3FN;
        case DataType::kFloat8E4M3FNUZ:
            return &kE4M3FNUZ;
        case DataType::kFloat8E5M2:
            return &kE5M2;
        case DataType::kFloat8E5M2FNUZ:
            return &kE5M2FNUZ;
        case DataType::kFloat4E2M1:
            return &kE2M1;
        case DataType::kFloat16:
            return &kHalfFormat;
        case DataType::kBFloat16:
            return &kBFloat16Format;
        default:
            return nullptr;
    }
}

}  // namespace pg
