// Every op family, registered in one readable list. To add a family: write ops/<family>.cc with
// register_<family>_ops(OpTable&), declare it here and call it below.
#include "ops/op_table.h"

namespace pg::ops {

void register_elementwise_binary_ops(OpTable& t);
void register_elementwise_unary_ops(OpTable& t);
void register_activation_ops(OpTable& t);
void register_cast_ops(OpTable& t);
void register_tensor_shape_ops(OpTable& t);
void register_tensor_index_ops(OpTable& t);
void register_reduce_ops(OpTable& t);
void register_matmul_ops(OpTable& t);
void register_conv_ops(OpTable& t);
void register_pool_ops(OpTable& t);
void register_normalization_ops(OpTable& t);
void register_control_flow_ops(OpTable& t);
void register_sequence_ops(OpTable& t);
void register_rnn_ops(OpTable& t);
void register_resize_ops(OpTable& t);
void register_quantize_ops(OpTable& t);
void register_signal_ops(OpTable& t);
void register_random_ops(OpTable& t);
void register_string_ops(OpTable& t);
void register_loss_ops(OpTable& t);
void register_geometry_ops(OpTable& t);
void register_detection_ops(OpTable& t);
void register_misc_linalg_ops(OpTable& t);
void register_attention_ops(OpTable& t);
void register_misc_math_ops(OpTable& t);
// Add a family: declare it above and call it below.

void register_all_ops(OpTable& t) {
    register_elementwise_binary_ops(t);
    register_elementwise_unary_ops(t);
    register_activation_ops(t);
    register_cast_ops(t);
    register_tensor_shape_ops(t);
    register_tensor_index_ops(t);
    register_reduce_ops(t);
    register_matmul_ops(t);
    register_conv_ops(t);
    register_pool_ops(t);
    register_normalization_ops(t);
    register_control_flow_ops(t);
    register_sequence_ops(t);
    register_rnn_ops(t);
    register_resize_ops(t);
    register_quantize_ops(t);
    register_signal_ops(t);
    register_random_ops(t);
    register_string_ops(t);
    register_loss_ops(t);
    register_geometry_ops(t);
    register_detection_ops(t);
    register_misc_linalg_ops(t);
    register_attention_ops(t);
    register_misc_math_ops(t);
}

}  // namespace pg::ops
