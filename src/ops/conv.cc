// Convolutions: Conv, ConvTranspose.
#include "ops/op_table.h"

namespace pg::ops {

void register_conv_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
