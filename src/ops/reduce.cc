// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMax, ArgMin, TopK, Unique.
#include "ops/op_table.h"

namespace pg::ops {

void register_reduce_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
