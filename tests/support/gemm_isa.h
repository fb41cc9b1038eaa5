// Runs a test body under every GEMM instruction set this CPU has (ops::gemm_force_isa), so the
// baseline, AVX2 and AVX-512 kernels (and gemm_direct, used only under AVX-512) are each diffed
// against the plain kernels on any machine that has them. The default choice is restored after.
#pragma once

#include <gtest/gtest.h>

#include "ops/gemm_kernels.h"

namespace pg::test {

inline const char* gemm_isa_name(ops::GemmIsa isa) {
    switch (isa) {
        case ops::GemmIsa::kBaseline:
            return "baseline";
        case ops::GemmIsa::kAvx2:
            return "avx2";
        case ops::GemmIsa::kAvx512:
            return "avx512";
    }
    return "?";
}

template <typename F>
void for_each_gemm_isa(F&& body) {
    for (ops::GemmIsa isa : {ops::GemmIsa::kBaseline, ops::GemmIsa::kAvx2, ops::GemmIsa::kAvx512}) {
        if (!ops::gemm_isa_available(isa)) continue;
        ops::gemm_force_isa(isa);
        SCOPED_TRACE(gemm_isa_name(isa));
        body();
    }
    ops::gemm_reset_isa();
}

}  // namespace pg::test
