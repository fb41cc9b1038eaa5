// Normalization: BatchNormalization (inference), InstanceNormalization, LayerNormalization, GroupNormalization, LRN, LpNormalization, MeanVarianceNormalization, Dropout (inference).
#include "ops/op_table.h"

namespace pg::ops {

void register_normalization_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
