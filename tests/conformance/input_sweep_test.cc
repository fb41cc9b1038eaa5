// Input sweep: every ONNX node test run again with one of its inputs or initializers changed, one
// value and one change at a time: given another element type (declared and fed, its values
// converted), another shape of its own type (empty, a scalar, flattened, with a leading 1, its dims
// reversed; declared of unknown rank), or every value replaced by one hostile value (kFloatFills,
// kIntFills). ONNX's type constraints and the ops' shape rules refuse most of
// these models, so the reference interpreter must answer each one with a result or a pg::Error
// naming the problem; kInternal, any other exception or a crash is a bug, and so is an input
// widened without loss (float32 to float64, int8 to int64) that changes the outputs. A kernel that
// dispatches on X's type and reads another input as that type, or trusts a shape it did not
// check, reads past the input's storage: the sanitizer build (-DPG_SANITIZE=ON) shows those (see
// docs/adding-an-op.md). The fuzzers found such holes one at a time (Gemm, the normalizations,
// MaxRoiPool); this visits every op's every input. Each test's cases run in a child process
// under a memory ceiling and a time limit, so a crash or a hang fails that test, naming the case.
// PG_INPUT_SWEEP_ALL=1 tries every type of kAllTypes (else kQuickTypes, for the test run) and
// runs each changed model that runs once more as --ref-precision fp64 runs it;
// PG_INPUT_SWEEP_FILTER=REGEX limits the tests (and prints each case as it starts).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>

#include "base/error.h"
#include "base/log.h"
#include "onnx/model_io.h"
#include "onnx/tensor_file.h"
#include "ops/cast.h"
#include "ops/dispatch.h"
#include "runtime/session.h"
#include "support/node_test_data.h"
#include "support/sweep_harness.h"
#include "support/test_paths.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kCeiling = 256ull << 20;  // bytes a changed model may ask for
constexpr unsigned kSecondsPerTest = 60;     // every change of one test, at most

constexpr DataType kAllTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kInt8,    DataType::kUInt8,
                                  DataType::kInt32,    DataType::kInt64,   DataType::kBool};
constexpr DataType kQuickTypes[] = {DataType::kFloat32, DataType::kFloat64, DataType::kInt8,
                                    DataType::kInt64};

// values as T: rounded toward zero and clamped to T's range, NaN as 0.
template <typename T>
Tensor narrowed(const std::vector<double>& values, DataType dtype, std::vector<int64_t> dims) {
    std::vector<T> out(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        const double v = std::isnan(values[i]) ? 0.0 : values[i];
        if constexpr (std::is_integral_v<T>)
            out[i] = v <= double(std::numeric_limits<T>::lowest())
                         ? std::numeric_limits<T>::lowest()
                     : v >= double(std::numeric_limits<T>::max()) ? std::numeric_limits<T>::max()
                                                                  : static_cast<T>(v);
        else
            out[i] = static_cast<T>(values[i]);
    }
    return Tensor::from_values(dtype, std::move(dims), out);
}

// values as a tensor of `dtype` (a numeric type of whole bytes) and `dims`.
Tensor from_doubles(std::vector<double> v, DataType dtype, std::vector<int64_t> dims) {
    if (dtype == DataType::kBool) {
        for (double& x : v) x = x != 0.0;
        return narrowed<uint8_t>(v, dtype, dims);
    }
    if (dtype_is_float(dtype) && dtype_bits(dtype) < 32)  // float16, bfloat16, float8: as Cast
        return ops::cast_to_narrow(narrowed<double>(v, DataType::kFloat64, dims), dtype, {});
    std::optional<Tensor> out;
    ops::dispatch_numeric(dtype, "input sweep",
                          [&]<typename T>() { out = narrowed<T>(v, dtype, dims); });
    return *out;
}

// t's values as `dtype` (one of kAllTypes).
Tensor converted(const Tensor& t, DataType dtype) {
    std::vector<double> v(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) v[i] = t.element_as_double(i);
    return from_doubles(std::move(v), dtype, t.dims());
}

// Whether every value of `from` is exactly a value of `to` of the same meaning (a float to a wider
// float, a signed or unsigned integer to a wider signed one): a kernel that accepts the wider type
// must then give the test's expected outputs, within float tolerances.
bool widens(DataType from, DataType to) {
    const int fb = dtype_bits(from), tb = dtype_bits(to);
    if (dtype_is_float(from) && dtype_is_float(to))
        return tb > fb && (from != DataType::kBFloat16 || tb > 16);
    return dtype_is_integer(from) && dtype_is_integer(to) && dtype_is_signed(to) && tb > fb &&
           from != DataType::kBool;
}

// Whether an op reading v gives its type a meaning of its own: the target of CastLike, the
// output type of the quantizing ops' output zero point (wider: no saturation), the bits of BitCast
// and the bitwise ops, the random draws of Bernoulli and the *Like generators. Widening such an
// input changes the result.
bool type_has_meaning(const ir::Value& v) {
    for (const ir::Use& u : v.uses()) {
        const std::string& op = u.node->op_type;
        if ((op == "CastLike" && u.index == 1) || (op == "QuantizeLinear" && u.index == 2) ||
            ((op == "QLinearMatMul" || op == "QLinearConv") && u.index == 7) || op == "BitCast" ||
            op.rfind("Bitwise", 0) == 0 || op == "BitShift" || op == "Bernoulli" ||
            op.rfind("Random", 0) == 0)
            return true;
    }
    return false;
}

// One change to one input: another element type, its own type in another shape, or every value
// replaced by one (its type and shape kept).
struct Change {
    enum Shape { kKeep, kEmpty, kScalar, kFlat, kUnsqueezed, kReversed };
    DataType dtype = DataType::kUndefined;  // kUndefined: the input's own
    Shape shape = kKeep;
    std::optional<double> fill;
};

// The values an input is filled with: for floats the non-finite ones and a huge one, for integers
// those used as indices, counts and sizes go wrong with (clamped to the type's range).
constexpr double kFloatFills[] = {NAN, INFINITY, -INFINITY, 1e30};
constexpr double kIntFills[] = {-1, 0, 1e12, -1e300};

constexpr Change::Shape kShapeChanges[] = {Change::kEmpty, Change::kScalar, Change::kFlat,
                                           Change::kUnsqueezed, Change::kReversed};

std::string describe(const Change& c) {
    static const char* const kShapes[] = {"",          "empty",      "a scalar",
                                          "flattened", "unsqueezed", "with its dims reversed"};
    if (c.fill) {
        char v[32];
        std::snprintf(v, sizeof v, "%g", *c.fill);
        return std::string("filled with ") + v;
    }
    return c.shape == Change::kKeep ? "as " + dtype_name(c.dtype) : kShapes[c.shape];
}

// t in the shape c asks for (whole bytes per element: the caller's to check), nullopt where that
// shape is t's own or needs values t does not have.
std::optional<Tensor> reshaped(const Tensor& t, Change::Shape shape) {
    std::vector<int64_t> dims = t.dims();
    const size_t bytes = static_cast<size_t>(dtype_bits(t.dtype()) / 8);
    switch (shape) {
        case Change::kEmpty:
            if (dims.empty() || t.numel() == 0) return std::nullopt;
            dims[0] = 0;
            return Tensor::zeros(t.dtype(), dims);
        case Change::kScalar:
            if (dims.empty() || t.numel() == 0) return std::nullopt;
            return Tensor::from_bytes(t.dtype(), {},
                                      std::string(reinterpret_cast<const char*>(t.bytes()), bytes));
        case Change::kFlat:
            if (dims.size() == 1) return std::nullopt;
            return t.reshaped({static_cast<int64_t>(t.numel())});
        case Change::kUnsqueezed:
            dims.insert(dims.begin(), 1);
            return t.reshaped(dims);
        case Change::kReversed:
            if (std::equal(dims.begin(), dims.end(), dims.rbegin())) return std::nullopt;
            std::reverse(dims.begin(), dims.end());
            return t.reshaped(dims);
        case Change::kKeep:
            break;
    }
    return std::nullopt;
}

// What the sweep changes: a graph input (its position among those without an initializer) or an
// initializer (by name), its type, and whether it is filled with each value of kFloatFills /
// kIntFills: not in a model with a Loop, whose trip count may come from it (a loop of 1e12
// passes is the model's, not a hang).
struct SweepInput {
    size_t index;      // graph inputs
    std::string name;  // initializers ("" for graph inputs)
    DataType type;
    bool fills;
    std::string label() const {
        return name.empty() ? "input " + std::to_string(index) : "initializer " + name;
    }
};

// `stored` as `change` asks; nullopt when that leaves it as it is. *wider: a lossless widening of
// a value v whose type has no meaning of its own (its outputs must then match the expected ones).
std::optional<Tensor> apply_change(const Tensor& stored, const Change& change, const ir::Value& v,
                                   bool* wider) {
    if (change.fill)
        return from_doubles(std::vector<double>(stored.numel(), *change.fill), stored.dtype(),
                            stored.dims());
    if (change.shape != Change::kKeep) return reshaped(stored, change.shape);
    *wider = stored.dtype() == v.type().elem_type && widens(stored.dtype(), change.dtype) &&
             !type_has_meaning(v);
    return converted(stored, change.dtype);
}

// The test's first data set with `target` changed, planned and run once; when it runs and `fp64`,
// also as --ref-precision fp64 runs it.
test::SweepOutcome run_with_change(const fs::path& dir, const SweepInput& target,
                                   const Change& change, bool fp64) {
    auto model = onnx::load_model((dir / "model.onnx").string());
    std::vector<ir::Value*> inputs;
    runtime::Feeds feeds = test::first_data_set_feeds(dir, *model, &inputs);
    const fs::path data = dir / "test_data_set_0";
    ir::Value* v = inputs.at(target.index);
    if (!target.name.empty())
        for (ir::Value* init : model->graph->initializers())
            if (init->name() == target.name) v = init;
    const Tensor stored =
        target.name.empty() ? feeds[v->name()].tensor() : v->initializer()->tensor;
    bool wider = false;
    const std::optional<Tensor> t = apply_change(stored, change, *v, &wider);
    if (!t) return {false, "same"};
    const bool keep_shape = change.shape == Change::kKeep;  // and a fill
    v->set_type(ir::TypeInfo::tensor(t->dtype(),
                                     keep_shape && v->has_type() ? v->type().shape : std::nullopt));
    if (target.name.empty())
        feeds[v->name()] = ops::RtValue::of(*t);
    else
        v->mutable_initializer()->tensor = *t;
    const test::SweepOutcome r =
        test::run_changed_model(*model, feeds, [&](const runtime::Results& results) {
            std::vector<std::pair<std::string, const Tensor*>> outs;
            for (const auto& [name, v] : results)
                outs.emplace_back(name, v.is_tensor() ? &v.tensor() : nullptr);
            const std::string d =
                wider ? test::outputs_differ(*model->graph, data.string(), outs) : "";
            return d.empty() ? d : "wrong values as a wider type: " + d;
        });
    return r.what == "ran" && fp64 ? test::run_as_fp64(*model, feeds) : r;
}

// Whether values of type t are ones the sweep converts and fills (numeric, not complex).
bool sweepable_type(const ir::TypeInfo& type) {
    const DataType t = type.elem_type;
    return type.is_tensor() && t != DataType::kString && t != DataType::kComplex64 &&
           t != DataType::kComplex128 && t != DataType::kUndefined;
}

// What the sweep changes in the test in `dir`: each numeric graph input with a .pb in the first
// data set, then each numeric initializer (the weights the fused and blocked Conv paths read).
std::vector<SweepInput> sweepable_inputs(const fs::path& dir) {
    const auto model = onnx::load_model((dir / "model.onnx").string());
    bool loops = false;
    for (const auto& n : model->graph->nodes()) loops = loops || n->op_type == "Loop";
    std::vector<SweepInput> out;
    size_t i = 0;
    for (const ir::Value* v : model->graph->inputs()) {
        if (v->is_initializer()) continue;
        if (sweepable_type(v->type()) &&
            fs::exists(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")))
            out.push_back({i, "", v->type().elem_type, !loops});
        ++i;
    }
    for (const ir::Value* v : model->graph->initializers()) {
        const Tensor& t = v->initializer()->tensor;
        if (sweepable_type(ir::TypeInfo::tensor(t.dtype(), std::nullopt)) && t.has_data())
            out.push_back({0, v->name(), t.dtype(), !loops});
    }
    return out;
}

// The changes the sweep makes to `in`: each of `types` but its own, and where its elements are
// whole bytes each shape change and (but for bool) each fill of its kind when in.fills.
std::vector<Change> changes_for(const SweepInput& in, const std::vector<DataType>& types) {
    const DataType own = in.type;
    std::vector<Change> out;
    for (const DataType t : types)
        if (t != own) out.push_back({t, Change::kKeep, std::nullopt});
    if (dtype_bits(own) % 8) return out;
    for (const Change::Shape s : kShapeChanges)
        out.push_back({DataType::kUndefined, s, std::nullopt});
    if (own == DataType::kBool || !in.fills) return out;
    for (const double v : dtype_is_float(own)
                              ? std::vector<double>(std::begin(kFloatFills), std::end(kFloatFills))
                              : std::vector<double>(std::begin(kIntFills), std::end(kIntFills)))
        out.push_back({DataType::kUndefined, Change::kKeep, v});
    return out;
}

// Every input of one test, each changed in each way of changes_for, one sweep_case each.
void sweep_test(const fs::path& dir, const std::vector<DataType>& types, bool fp64, FILE* out) {
    const std::string name = dir.filename().string();
    std::vector<SweepInput> inputs;
    try {
        inputs = sweepable_inputs(dir);
    } catch (const Error&) {
        return;  // a model this build cannot load is the conformance suite's business
    }
    for (const SweepInput& in : inputs)
        for (const Change& c : changes_for(in, types))
            test::sweep_case(out, name + " " + in.label() + " " + describe(c),
                             [&] { return run_with_change(dir, in, c, fp64); });
}

void sweep_suite(const std::string& root, const char* label) {
    logger().set_threshold(Severity::kCritical);
    const bool all = std::getenv("PG_INPUT_SWEEP_ALL") != nullptr;
    const std::vector<DataType> types =
        all ? std::vector<DataType>(std::begin(kAllTypes), std::end(kAllTypes))
            : std::vector<DataType>(std::begin(kQuickTypes), std::end(kQuickTypes));
    const char* filter = std::getenv("PG_INPUT_SWEEP_FILTER");
    test::SweepTally tally;
    for (const fs::path& dir : test::sweep_test_dirs(root, filter))
        test::sweep_isolated(
            dir.filename().string(), [&](FILE* out) { sweep_test(dir, types, all, out); }, kCeiling,
            kSecondsPerTest, filter != nullptr, tally);
    test::report_sweep("input sweep", label, "changed inputs", tally);
}

TEST(InputSweep, Onnx122NodeTests) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kOnnx122, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST(InputSweep, DebianNodeTests) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kDebianNode, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST(InputSweep, DebianOtherSuites) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kDebianOther, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

}  // namespace
}  // namespace pg
