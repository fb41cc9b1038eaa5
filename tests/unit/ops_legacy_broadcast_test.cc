// Binary ops before opset 7: B broadcasts only with broadcast=1, lined up with A from `axis`
// (ops/legacy_broadcast.h); a Conv -> Add chain keeps that alignment.
#include <gtest/gtest.h>

#include <optional>

#include "base/error.h"
#include "ir/builder.h"
#include "runtime/session.h"
#include "support/expect_error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::run_op;

std::vector<Attribute> legacy(int64_t broadcast, std::optional<int64_t> axis = std::nullopt) {
    std::vector<Attribute> a;
    a.push_back(Attribute::make_int("broadcast", broadcast));
    if (axis) a.push_back(Attribute::make_int("axis", *axis));
    return a;
}

TEST(OpsLegacyBroadcast, AxisLinesBUpWithA) {
    // A [2, 3, 2] + B [3] at axis 1: B[j] added to A[i, j, k].
    const Tensor a = f32({2, 3, 2}, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1});
    const Tensor y = run_op("Add", {a, f32({3}, {10, 20, 30})}, legacy(1, 1), 6).at(0);
    EXPECT_EQ(test::values_f32(y),
              (std::vector<float>{10, 10, 20, 20, 30, 30, 11, 11, 21, 21, 31, 31}));
    // Without axis, B lines up with A's trailing dimensions (numpy's way).
    const Tensor t = run_op("Mul", {a, f32({2}, {2, 3})}, legacy(1), 6).at(0);
    EXPECT_EQ(test::values_f32(t), (std::vector<float>{0, 0, 0, 0, 0, 0, 2, 3, 2, 3, 2, 3}));
}

TEST(OpsLegacyBroadcast, WithoutBroadcastTheShapesMustMatch) {
    const Tensor a = f32({2, 2}, {1, 2, 3, 4});
    test::expect_error(
        [&] {
            run_op("Sub", {a, f32({2}, {1, 1})}, legacy(0), 6);
        },
        ErrorKind::kInvalidInput, "broadcast is 0");
    test::expect_error(
        [&] {
            run_op("Add", {a, f32({2}, {1, 1})}, {}, 1);
        },
        ErrorKind::kInvalidInput, "must have the same shape");
    EXPECT_EQ(test::values_f32(run_op("Sub", {a, a}, legacy(0), 6).at(0)),
              (std::vector<float>{0, 0, 0, 0}));
    test::expect_error(
        [&] {
            run_op("Add", {a, f32({2}, {1, 1})}, legacy(1, 2), 6);
        },
        ErrorKind::kInvalidInput, "does not fit");
}

TEST(OpsLegacyBroadcast, GemmsCBroadcastsOnlyWhenAsked) {
    const Tensor a = f32({2, 2}, {1, 0, 0, 1}), c = f32({2}, {5, 6});
    test::expect_error([&] { run_op("Gemm", {a, a, c}, legacy(0), 6); }, ErrorKind::kInvalidInput,
                       "C must be [2, 2]");
    EXPECT_EQ(test::values_f32(run_op("Gemm", {a, a, c}, legacy(1), 6).at(0)),
              (std::vector<float>{6, 6, 5, 7}));
    EXPECT_EQ(test::values_f32(run_op("Gemm", {a, a, c}, {}, 7).at(0)),
              (std::vector<float>{6, 6, 5, 7}));
}

TEST(OpsLegacyBroadcast, FromOpset7BroadcastingIsNumpys) {
    // B [2] lines up with the last axis whatever `axis` says.
    const Tensor a = f32({2, 2}, {1, 2, 3, 4});
    const Tensor y = run_op("Add", {a, f32({2}, {10, 20})}, legacy(1, 0), 7).at(0);
    EXPECT_EQ(test::values_f32(y), (std::vector<float>{11, 22, 13, 24}));
}

TEST(OpsLegacyBroadcast, AConvFollowedByALegacyAddAddsPerChannel) {
    // Opset 6: x [1, 2, 1, 2] -> 1x1 Conv (identity weights) -> Add B [2] at axis 1: per channel.
    auto m = ir::new_model(6);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 2, 1, 2});
    ir::Value* w = b.constant_f32("w", {2, 2, 1, 1}, {1, 0, 0, 1});
    ir::Value* c = b.op("Conv", {x, w}, {}, "conv");
    b.output(b.op("Add", {c, b.constant_f32("bias", {2}, {10, 20})}, legacy(1, 1), "add"));
    runtime::Session s(*m);
    runtime::Feeds feeds;
    feeds["x"] = ops::RtValue::of(f32({1, 2, 1, 2}, {1, 2, 3, 4}));
    EXPECT_EQ(test::values_f32(s.run(feeds).at(0).second.tensor()),
              (std::vector<float>{11, 12, 23, 24}));
}

}  // namespace
}  // namespace pg
