// The column map of gemm_direct's products over useful columns (gemm_dot, gemm_rowvec) and
// gemm_dot's finishing arithmetic (see gemm_direct.h). Built with -ffp-contract=off: alpha, beta
// and the epilogue are separate multiplies and adds, as in gemm_direct.
#include <algorithm>

#include "ops/gemm_direct.h"

namespace pg::ops {

DirectColumns direct_columns(const DirectGemm& g) {
    DirectColumns c;
    for (int64_t j = 0; j < g.n; ++j) {
        if (g.row_pitch && j % g.row_pitch >= g.row_len) continue;
        c.src.push_back(j);
        c.dst.push_back(g.row_pitch ? (j / g.row_pitch) * g.out_pitch + j % g.row_pitch : j);
    }
    return c;
}

void finish_direct_rows(const DirectGemm& g, const DirectColumns& c, const float* part,
                        int64_t row_step, int64_t col_step, int64_t i0, int64_t i1) {
    const int64_t nu = static_cast<int64_t>(c.src.size());
    for (int64_t i = i0; i < i1; ++i) {
        float* row = g.c + i * g.ldc;
        const float* sums = part + (i - i0) * row_step;
        for (int64_t u = 0; u < nu; ++u) {
            float* out = row + c.dst[static_cast<size_t>(u)];
            float v = sums[u * col_step];
            if (g.alpha != 1.0f) v = g.alpha * v;
            if (g.beta != 0.0f) v = g.beta == 1.0f ? *out + v : g.beta * *out + v;
            *out = v;
        }
        if (!g.epilogue) continue;
        for (int64_t u = 0; u < nu;) {  // each run of adjacent C columns
            int64_t e = u + 1;
            while (e < nu && c.dst[static_cast<size_t>(e)] == c.dst[static_cast<size_t>(e - 1)] + 1)
                ++e;
            g.epilogue->apply(i, row + c.dst[static_cast<size_t>(u)], e - u);
            u = e;
        }
    }
}

}  // namespace pg::ops
