// Eight-float GCC/Clang vectors for the portable kernels, and the one shuffle they need, spelled
// for either compiler. A macro, not a function: a function taking or returning these vectors
// has an ABI that depends on whether AVX is enabled (GCC's -Wpsabi).
#pragma once

namespace pg::ops {

typedef float V8 __attribute__((vector_size(32)));
typedef int I8 __attribute__((vector_size(32)));

}  // namespace pg::ops

// Lane j of the result: lane i_j of the 16 lanes of a then b (eight constant indices).
#if defined(__clang__)
#define PG_SHUFFLE8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define PG_SHUFFLE8(a, b, ...) __builtin_shuffle(a, b, ::pg::ops::I8{__VA_ARGS__})
#endif
