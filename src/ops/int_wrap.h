// Integer arithmetic that wraps in two's complement, as numpy's (and ONNX's reference) does:
// signed overflow is undefined in C++, so signed values go through their unsigned type (the
// conversion back is modular since C++20). Other types use their own operators.
#pragma once

#include <type_traits>

namespace pg::ops {

template <typename T>
inline constexpr bool kWrapsSigned = std::is_integral_v<T>&& std::is_signed_v<T>;

template <typename T>
T wrap_add(T x, T y) {
    if constexpr (kWrapsSigned<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
    } else {
        return static_cast<T>(x + y);
    }
}

template <typename T>
T wrap_sub(T x, T y) {
    if constexpr (kWrapsSigned<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(x) - static_cast<U>(y)));
    } else {
        return static_cast<T>(x - y);
    }
}

template <typename T>
T wrap_mul(T x, T y) {
    if constexpr (kWrapsSigned<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(x) * static_cast<U>(y)));
    } else {
        return static_cast<T>(x * y);
    }
}

// -x; the lowest signed value stays itself.
template <typename T>
T wrap_neg(T x) {
    if constexpr (kWrapsSigned<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(x)));
    } else {
        return static_cast<T>(-x);
    }
}

}  // namespace pg::ops
