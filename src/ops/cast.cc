// Type conversion and selection: Cast, CastLike, Where, and the variadic Sum, Mean, Max, Min.
#include "ops/op_table.h"

namespace pg::ops {

void register_cast_ops(OpTable& t) {
    (void)t;  // ops of this family are being written
}

}  // namespace pg::ops
