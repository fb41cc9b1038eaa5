// Activations and softmax-like ops: Relu, LeakyRelu, PRelu, Sigmoid, Tanh, Elu, Selu, Celu, HardSigmoid, HardSwish, Softplus, Softsign, Gelu, Mish, ThresholdedRelu, Clip, Softmax, LogSoftmax, Hardmax.
#include "ops/op_table.h"

namespace pg::ops {

void register_activation_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
