// Linear algebra: MatMul, Gemm, Einsum.
#include "ops/op_table.h"

namespace pg::ops {

void register_matmul_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
