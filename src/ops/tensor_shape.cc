// Shape and data-movement ops: Reshape, Transpose, Concat, Split, Squeeze, Unsqueeze, Flatten, Expand, Tile, Pad, Shape, Size, Identity, Constant, ConstantOfShape, Range, DepthToSpace, SpaceToDepth, Trilu, EyeLike.
#include "ops/op_table.h"

namespace pg::ops {

void register_tensor_shape_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
