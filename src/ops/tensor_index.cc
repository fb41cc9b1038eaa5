// Indexing ops: Slice, Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND, OneHot, NonZero, Compress, ReverseSequence, CumSum.
#include "ops/op_table.h"

namespace pg::ops {

void register_tensor_index_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
