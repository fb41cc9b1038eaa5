// Inputs for benchmarking a saved model: every graph input that is not an initializer, uniform in
// [-1, 1) for float32 and zero otherwise, with symbolic dims set to 1 (kernel_ab, step_scaling).
#pragma once

#include "ir/model.h"
#include "runtime/session.h"

namespace pg::bench {

runtime::Feeds random_feeds(const ir::Model& model);

}  // namespace pg::bench
