// Integer arithmetic that wraps in two's complement, as numpy's (and ONNX's reference) does:
// signed overflow is undefined in C++, and so is that of 8- and 16-bit values, which promote to
// int (65535 * 65535 overflows it). Integers go through an unsigned type at least as wide as
// unsigned int (the conversion back is modular since C++20); other types use their own operators.
#pragma once

#include <functional>
#include <type_traits>

namespace pg::ops {

// op(x, y) of an integer type, wrapping; of other types, as is.
template <typename T, typename Op>
T wrapping(T x, T y, Op op) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        using W = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
        return static_cast<T>(static_cast<W>(op(static_cast<W>(x), static_cast<W>(y))));
    } else {
        return static_cast<T>(op(x, y));
    }
}

template <typename T>
T wrap_add(T x, T y) {
    return wrapping(x, y, std::plus<>());
}

template <typename T>
T wrap_sub(T x, T y) {
    return wrapping(x, y, std::minus<>());
}

template <typename T>
T wrap_mul(T x, T y) {
    return wrapping(x, y, std::multiplies<>());
}

// -x; the lowest signed value stays itself (a float's -0 stays a float's: no 0 - x).
template <typename T>
T wrap_neg(T x) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        return wrap_sub(T{0}, x);
    else
        return static_cast<T>(-x);
}

}  // namespace pg::ops
