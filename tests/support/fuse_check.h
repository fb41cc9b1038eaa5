// Checks for plan-time fusion (runtime/fuse.h): a model run fused and plain must give the same
// bits, and a hooked run must see every node.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/session.h"

namespace pg::test {

// Seeded values uniform in [-1, 1) for every graph input (float32 or float64 `dt`).
runtime::Feeds random_fuse_feeds(const ir::Model& m, DataType dt = DataType::kFloat32);
// a and b hold the same names, dims and bytes.
void expect_same_results(const runtime::Results& a, const runtime::Results& b);
// Runs `m` fused (without blocked regions) and plain (2 threads) and checks the outputs agree bit
// for bit, also when a hook makes the fused session take the plain steps; returns the number of
// nodes fused.
int check_fused_matches_plain(const ir::Model& m, DataType dt = DataType::kFloat32);
// A `dt` tensor of `dims` with seeded values uniform in [-1, 1), or [0.5, 2) when `positive`
// (float32 and float64; other types come back zero-filled).
Tensor random_tensor(DataType dt, std::vector<int64_t> dims, bool positive, std::mt19937& rng);
// A 1-D int64 initializer `name` holding v (a Reshape's shape).
ir::Value* int64_constant(ir::GraphBuilder& b, const std::string& name,
                          const std::vector<int64_t>& v);
// BatchNormalization `name` of y over `c` channels with seeded parameters (variance positive),
// its initializers named after it.
ir::Value* batch_norm(ir::GraphBuilder& b, ir::Value* y, DataType dt, int64_t c, std::mt19937& rng,
                      const std::string& name = "bn");

}  // namespace pg::test
