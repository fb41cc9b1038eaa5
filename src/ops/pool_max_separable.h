// A float32 2-D max pool (dilation 1) one plane at a time through a copy padded with -inf: each
// padded row's max over kw columns, then the max of kh such rows (pool_kernels.h's max_pool_fast
// uses it). Both passes take the first value, then every greater one, so ties keep the first
// tap in row-major order, as max_pool does; the results are max_pool's whenever the plane holds
// no NaN (where max_pool's result depends on which tap is first), and plane() reports a NaN
// so the caller can run the exact kernel instead. Tests: tests/unit/ops_pool_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/conv_kernels.h"

namespace pg::ops {

class SeparableMax {
  public:
    // Whether `g` (a 2-D window with dilation 1 and non-negative pads) fits, with padded buffers
    // of at most 64 Ki floats; strided windows only on planes of at most 1024 floats (where the
    // padded copy was measured to pay).
    static bool fits(const Window& g);
    explicit SeparableMax(const Window& g);
    // y (out[1] x out[2]) from plane x (in[1] x in[2]); false, y unspecified, when x holds a NaN.
    bool plane(const float* x, float* y);

  private:
    const Window& g_;
    void (*fn_)();                 // the build for this window (pool_max_separable.cc)
    int64_t rows_ = 0, cols_ = 0;  // padded rows; row-max positions per row (out[2], rounded up)
    int64_t pitch_ = 0;            // floats per padded row
    std::vector<float> pad_, hmax_, line_;
};

}  // namespace pg::ops
