// Integer scalars read exactly (ops/tensor_util.h: element_int64, scalar_int64) and the control
// flow that depends on them: a Loop whose trip count is int64's maximum, as tf2onnx writes every
// while loop (read through a double it became -2^63 and the body never ran), and Scan-8's
// sequence lengths and inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "base/error.h"
#include "ir/builder.h"
#include "ops/tensor_util.h"
#include "runtime/session.h"
#include "support/expect_error.h"
#include "support/subgraph_attr.h"

namespace pg {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

template <typename T>
Tensor scalar(DataType dt, T v) {
    return Tensor::from_values<T>(dt, {}, {v});
}

ErrorKind kind_of_read(const Tensor& t) {
    try {
        ops::scalar_int64(t, "test");
    } catch (const Error& e) {
        return e.kind();
    }
    return ErrorKind::kInternal;  // no error
}

TEST(OpsIntegerScalars, WideIntegersAreExact) {
    EXPECT_EQ(ops::scalar_int64(scalar<int64_t>(DataType::kInt64, kMax), "m"), kMax);
    EXPECT_EQ(ops::scalar_int64(scalar<int64_t>(DataType::kInt64, kMin), "m"), kMin);
    EXPECT_EQ(ops::scalar_int64(scalar<int64_t>(DataType::kInt64, kMax - 1), "m"), kMax - 1);
    EXPECT_EQ(ops::scalar_int64(scalar<uint64_t>(DataType::kUInt64, uint64_t(kMax)), "m"), kMax);
    EXPECT_EQ(ops::scalar_int64(scalar<int32_t>(DataType::kInt32, -7), "m"), -7);
    EXPECT_EQ(ops::scalar_int64(scalar<uint8_t>(DataType::kBool, 1), "m"), 1);
    const Tensor list = Tensor::from_values<int64_t>(DataType::kInt64, {3}, {1, kMax, 3});
    EXPECT_EQ(ops::element_int64(list, 1, "m"), kMax);
}

TEST(OpsIntegerScalars, FloatsAreTruncatedInsideInt64) {
    EXPECT_EQ(ops::scalar_int64(scalar<float>(DataType::kFloat32, -2.7f), "m"), -2);
    EXPECT_EQ(ops::scalar_int64(scalar<double>(DataType::kFloat64, 3.9), "m"), 3);
    EXPECT_EQ(ops::scalar_int64(scalar<double>(DataType::kFloat64, -9223372036854775808.0), "m"),
              kMin);
}

TEST(OpsIntegerScalars, ValuesOutsideInt64AreInvalidInput) {
    EXPECT_EQ(kind_of_read(scalar<uint64_t>(DataType::kUInt64, uint64_t(kMax) + 1)),
              ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of_read(scalar<double>(DataType::kFloat64, 9223372036854775808.0)),
              ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of_read(scalar<float>(DataType::kFloat32, -1e30f)), ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of_read(scalar<float>(DataType::kFloat32, std::nanf(""))),
              ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of_read(Tensor::from_values<int64_t>(DataType::kInt64, {2}, {1, 2})),
              ErrorKind::kInvalidInput);
}

// x (int32 [1]) -> Loop(M = trip, cond = x < 10) whose body adds 1 and goes on while
// x_new < 4 * iteration: starting from 1, one pass (2 < 0 is false) gives 2; `trip` 0 gives 1.
std::unique_ptr<ir::Model> counting_loop(int64_t trip) {
    auto m = ir::new_model(11);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kInt32, std::vector<int64_t>{1});
    ir::Value* max_trip = b.constant("M", scalar<int64_t>(DataType::kInt64, trip));
    ir::Value* one = b.constant("one", Tensor::from_values<int32_t>(DataType::kInt32, {1}, {1}));
    ir::Value* ten = b.constant("ten", Tensor::from_values<int32_t>(DataType::kInt32, {1}, {10}));
    ir::Value* cond = b.op("Squeeze", {b.op("Less", {x, ten}, {}, "less")}, {}, "cond");
    ir::Node* loop = b.op_multi("Loop", {max_trip, cond, x}, 1, {}, "loop");
    ir::GraphBuilder sb(*test::add_branch(loop, "body"));
    ir::Value* it = sb.input("it", DataType::kInt64, std::vector<int64_t>{});
    sb.input("cond_in", DataType::kBool, std::vector<int64_t>{});
    ir::Value* carried = sb.input("carried", DataType::kInt32, std::vector<int64_t>{1});
    ir::Value* next = sb.op("Add", {carried, one}, {}, "next");
    ir::Value* four = sb.constant("four", scalar<int64_t>(DataType::kInt64, 4));
    ir::Value* bound = sb.op("Mul", {it, four}, {}, "bound");
    ir::Value* wide = sb.op("Cast", {next}, ir::attrs(ir::Attribute::make_int("to", 7)), "wide");
    ir::Value* go = sb.op("Squeeze", {sb.op("Less", {wide, bound}, {}, "go_less")}, {}, "go");
    sb.output(go, DataType::kBool, {});
    sb.output(next, DataType::kInt32, {1});
    b.output(loop->output(0), DataType::kInt32, {1});
    return m;
}

int32_t run_loop(const ir::Model& m, int32_t start) {
    runtime::Session s(m, runtime::SessionOptions{});
    runtime::Feeds feeds;
    feeds["x"] = ops::RtValue::of(Tensor::from_values<int32_t>(DataType::kInt32, {1}, {start}));
    const runtime::Results out = s.run(feeds);
    return out.at(0).second.tensor().data<int32_t>()[0];
}

TEST(OpsControlFlow, ALoopUpToInt64MaxRunsItsBody) {
    EXPECT_EQ(run_loop(*counting_loop(kMax), 1), 2);
    EXPECT_EQ(run_loop(*counting_loop(kMax), 20), 20);  // cond false: no pass
    EXPECT_EQ(run_loop(*counting_loop(0), 1), 1);
}

// SequenceMap over sequences of 1 and 2 tensors: ONNX requires equal lengths, and the second
// was read by index up to the first's length (std::vector::at: an internal error, or past the end
// the other way round). Now an invalid input naming both lengths.
TEST(OpsControlFlow, SequenceMapRefusesSequencesOfDifferentLengths) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1});
    ir::Value* one = b.op("SequenceConstruct", {x}, {}, "one");
    ir::Value* two = b.op("SequenceConstruct", {x, x}, {}, "two");
    ir::Node* map = b.op_multi("SequenceMap", {one, two}, 1, {}, "map");
    ir::GraphBuilder sb(*test::add_branch(map, "body"));
    ir::Value* p = sb.input("p", DataType::kFloat32, std::vector<int64_t>{1});
    ir::Value* q = sb.input("q", DataType::kFloat32, std::vector<int64_t>{1});
    sb.output(sb.op("Add", {p, q}, {}, "sum"), DataType::kFloat32, {1});
    ir::Value* zero = b.constant("zero", Tensor::from_values<int64_t>(DataType::kInt64, {}, {0}));
    b.output(b.op("SequenceAt", {map->output(0), zero}, {}, "first"), DataType::kFloat32, {1});
    runtime::Session s(*m, runtime::SessionOptions{});
    runtime::Feeds feeds;
    feeds["x"] = ops::RtValue::of(Tensor::from_values<float>(DataType::kFloat32, {1}, {1.0f}));
    test::expect_error([&] { s.run(feeds); }, ErrorKind::kInvalidInput,
                       "input 1 holds 2 tensors, input 0 1");
}

// Scan-8 (sequence_lens omitted) adding the rows of x (1, 3, 2) to a state s of `state_dims`:
// (1, 2) as ONNX requires. Its inputs' batch axes were indexed unchecked, and a scalar state (the
// input sweep, tests/conformance/input_sweep_test.cc) read dims()[0] of an empty vector.
std::vector<float> run_scan8(std::vector<int64_t> state_dims) {
    auto m = ir::new_model(8);
    ir::GraphBuilder b(*m->graph);
    ir::Value* st = b.input("s", DataType::kFloat32, state_dims);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 3, 2});
    ir::Node* scan = b.op_multi("Scan", {nullptr, st, x}, 1,
                                ir::attrs(ir::Attribute::make_int("num_scan_inputs", 1)), "scan");
    ir::GraphBuilder sb(*test::add_branch(scan, "body"));
    ir::Value* sum = sb.input("sum", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* row = sb.input("row", DataType::kFloat32, std::vector<int64_t>{2});
    sb.output(sb.op("Add", {sum, row}, {}, "add"), DataType::kFloat32, {2});
    b.output(scan->output(0), DataType::kFloat32, {1, 2});
    runtime::Session session(*m, runtime::SessionOptions{});
    runtime::Feeds feeds;
    int64_t count = 1;
    for (const int64_t d : state_dims) count *= d;
    const std::vector<float> zeros(static_cast<size_t>(count), 0.0f);
    feeds["s"] =
        ops::RtValue::of(Tensor::from_values<float>(DataType::kFloat32, state_dims, zeros));
    feeds["x"] = ops::RtValue::of(
        Tensor::from_values<float>(DataType::kFloat32, {1, 3, 2}, {1, 2, 3, 4, 5, 6}));
    const runtime::Results results = session.run(feeds);  // outlives `out`
    const Tensor& out = results.at(0).second.tensor();
    return std::vector<float>(out.data<float>(), out.data<float>() + out.numel());
}

TEST(OpsControlFlow, Scan8ChecksItsInputsBatchAxes) {
    EXPECT_EQ(run_scan8({1, 2}), (std::vector<float>{9, 12}));
    test::expect_error([] { run_scan8({}); }, ErrorKind::kInvalidInput, "input 1 needs (batch");
    test::expect_error(
        [] {
            run_scan8({2, 2});
        },
        ErrorKind::kInvalidInput, "different batch sizes");
}

// Scan-9 adding the rows of x (3, 2) to a state s (2), with `num_scans` and `more` attributes.
// The attribute sweep (tests/conformance/attribute_sweep_test.cc) found num_scan_inputs unchecked
// (-3: 5 "states" of 2 inputs, SIGSEGV) and the per-scan lists indexed past their ends.
std::vector<float> run_scan9(int64_t num_scans, std::vector<ir::Attribute> more = {}) {
    auto m = ir::new_model(16);
    ir::GraphBuilder b(*m->graph);
    ir::Value* st = b.input("s", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{3, 2});
    more.push_back(ir::Attribute::make_int("num_scan_inputs", num_scans));
    ir::Node* scan = b.op_multi("Scan", {st, x}, 1, std::move(more), "scan");
    ir::GraphBuilder sb(*test::add_branch(scan, "body"));
    ir::Value* sum = sb.input("sum", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* row = sb.input("row", DataType::kFloat32, std::vector<int64_t>{2});
    sb.output(sb.op("Add", {sum, row}, {}, "add"), DataType::kFloat32, {2});
    b.output(scan->output(0), DataType::kFloat32, {2});
    runtime::Session session(*m, runtime::SessionOptions{});
    runtime::Feeds feeds;
    feeds["s"] = ops::RtValue::of(Tensor::from_values<float>(DataType::kFloat32, {2}, {0, 0}));
    feeds["x"] = ops::RtValue::of(
        Tensor::from_values<float>(DataType::kFloat32, {3, 2}, {1, 2, 3, 4, 5, 6}));
    const runtime::Results results = session.run(feeds);
    const Tensor& out = results.at(0).second.tensor();
    return std::vector<float>(out.data<float>(), out.data<float>() + out.numel());
}

TEST(OpsControlFlow, Scan9ChecksItsAttributes) {
    EXPECT_EQ(run_scan9(1), (std::vector<float>{9, 12}));
    for (const int64_t n : {int64_t{-3}, int64_t{0}, int64_t{3}, kMax, kMin})
        test::expect_error([n] { run_scan9(n); }, ErrorKind::kInvalidInput,
                           "num_scan_inputs " + std::to_string(n) + " does not fit its 2 inputs");
    EXPECT_EQ(run_scan9(1, ir::attrs(ir::Attribute::make_ints("scan_input_axes", {}))),
              (std::vector<float>{9, 12}));  // empty: the default
    test::expect_error(
        [] {
            run_scan9(1, ir::attrs(ir::Attribute::make_ints("scan_input_axes", {0, 0})));
        },
        ErrorKind::kInvalidInput, "scan_input_axes has 2 values for 1 scans");
    test::expect_error(
        [] {
            run_scan9(1, ir::attrs(ir::Attribute::make_ints("scan_input_directions", {0, 1})));
        },
        ErrorKind::kInvalidInput, "scan_input_directions has 2 values for 1 scans");
    test::expect_error(
        [] { run_scan9(1, ir::attrs(ir::Attribute::make_ints("scan_output_axes", {0}))); },
        ErrorKind::kInvalidInput, "scan_output_axes has 1 values for 0 scans");
}

}  // namespace
}  // namespace pg
