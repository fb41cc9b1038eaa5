// Broadcasting of the binary ops before opset 7 (Add, Sub, Mul, Div, Pow, Equal, Less, Greater,
// And, Or, Xor): B broadcasts only with broadcast=1, its dimensions then lined up with A's from
// `axis` on (the trailing ones without it, as numpy's); with broadcast=0 the shapes must match.
#pragma once

#include "ops/op_table.h"

namespace pg::ops {

// `make` with the legacy rules added at opsets below 7 (from 7 on, `make` as it is).
MakeKernel with_legacy_broadcast(const char* name, MakeKernel make);

}  // namespace pg::ops
