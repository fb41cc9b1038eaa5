// Unary math ops: Abs, Neg, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, Sign, trigonometric and hyperbolic functions, Erf, IsNaN, IsInf, Not, BitwiseNot.
#include "ops/op_table.h"

namespace pg::ops {

void register_elementwise_unary_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
