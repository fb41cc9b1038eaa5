// Pooling: MaxPool, AveragePool, LpPool, GlobalMaxPool, GlobalAveragePool, GlobalLpPool, MaxUnpool, MaxRoiPool.
#include "ops/op_table.h"

namespace pg::ops {

void register_pool_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
