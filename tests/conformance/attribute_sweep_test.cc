// Attribute sweep: every ONNX node test run again with one attribute of one node (of the main
// graph or a subgraph) changed, one change at a time: set to a hostile value of its type
// (negative, zero, huge, the int64 extremes; NaN, the infinities; empty strings and lists, lists
// one shorter or longer),
// given as another attribute type (an int as a float or a list), removed, or (for attributes of
// that op that other tests of the suite set) added. ONNX's rules refuse most of these models, so
// the reference interpreter must answer each with a result or a pg::Error naming the problem;
// kInternal, any other exception, a crash or a hang is a bug (support/sweep_harness.h runs each
// test's cases in a child under a memory ceiling and a time limit). The input sweep does the
// same for the graph's inputs and initializers; the fuzzers reach attributes only by chance.
// PG_ATTRIBUTE_SWEEP_ALL=1 adds the tests of function bodies expanded into their nodes (*_expanded:
// about 80 % of the cases, 2.5 minutes; their ops have tests of their own) and runs each changed
// model that runs once more as --ref-precision fp64 runs it (float32 promoted to float64).
// PG_ATTRIBUTE_SWEEP_FILTER=REGEX limits the tests (and prints each case with its outcome).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>

#include "base/error.h"
#include "base/log.h"
#include "ir/clone.h"
#include "onnx/model_io.h"
#include "support/sweep_harness.h"
#include "support/test_paths.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kCeiling = 256ull << 20;  // bytes a changed model may ask for
constexpr unsigned kSecondsPerTest = 60;     // every change of one test, at most

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntValues[] = {-3, -1, 0, 2, int64_t{1} << 40, kMax, kMin};
constexpr int64_t kListValues[] = {-1, 0, int64_t{1} << 40, kMax, kMin};
constexpr float kFloatValues[] = {NAN, INFINITY, -INFINITY, 0.0f, -1.0f, 1e30f};

// One change to an attribute that exists (or was just added): its label and what it does.
struct Variant {
    std::string label;
    std::function<void(ir::Attribute&)> apply;
};

std::string int_label(int64_t v) {
    return v == kMax ? "int64 max" : v == kMin ? "int64 min" : std::to_string(v);
}

std::string float_label(float v) {
    char s[32];
    std::snprintf(s, sizeof s, "%g", static_cast<double>(v));
    return s;
}

// a as attribute type t, holding `set`'s value.
Variant retyped(const char* label, ir::AttrType t, std::function<void(ir::Attribute&)> set) {
    return {label, [t, set](ir::Attribute& a) {
                a.type = t;
                set(a);
            }};
}

void int_variants(const ir::Attribute& a, std::vector<Variant>& out) {
    for (const int64_t v : kIntValues)
        if (v != a.i) out.push_back({"= " + int_label(v), [v](ir::Attribute& x) { x.i = v; }});
    out.push_back(retyped("as a float", ir::AttrType::kFloat,
                          [](ir::Attribute& x) { x.f = static_cast<float>(x.i); }));
    out.push_back(
        retyped("as a list", ir::AttrType::kInts, [](ir::Attribute& x) { x.ints = {x.i}; }));
}

void float_variants(const ir::Attribute& a, std::vector<Variant>& out) {
    for (const float v : kFloatValues)
        if (!(v == a.f)) out.push_back({"= " + float_label(v), [v](ir::Attribute& x) { x.f = v; }});
    out.push_back(retyped("as an int", ir::AttrType::kInt, [](ir::Attribute& x) {
        x.i = std::isfinite(x.f) && std::fabs(x.f) < 1e18f ? static_cast<int64_t>(x.f) : 0;
    }));
}

void string_variants(std::vector<Variant>& out) {
    out.push_back({"= \"\"", [](ir::Attribute& x) { x.s.clear(); }});
    out.push_back({"= \"no such value\"", [](ir::Attribute& x) { x.s = "no such value"; }});
    out.push_back(
        retyped("as a list", ir::AttrType::kStrings, [](ir::Attribute& x) { x.strings = {x.s}; }));
}

void ints_variants(std::vector<Variant>& out) {
    out.push_back({"empty", [](ir::Attribute& x) { x.ints.clear(); }});
    out.push_back({"one shorter", [](ir::Attribute& x) {
                       if (!x.ints.empty()) x.ints.pop_back();
                   }});
    out.push_back({"one longer",
                   [](ir::Attribute& x) { x.ints.push_back(x.ints.empty() ? 1 : x.ints.back()); }});
    for (const int64_t v : kListValues)
        out.push_back({"all " + int_label(v), [v](ir::Attribute& x) {
                           for (int64_t& e : x.ints) e = v;
                       }});
    out.push_back({"first = int64 min", [](ir::Attribute& x) {
                       if (!x.ints.empty()) x.ints[0] = kMin;
                   }});
    out.push_back(retyped("as an int", ir::AttrType::kInt,
                          [](ir::Attribute& x) { x.i = x.ints.empty() ? 0 : x.ints[0]; }));
}

void floats_variants(std::vector<Variant>& out) {
    out.push_back({"empty", [](ir::Attribute& x) { x.floats.clear(); }});
    out.push_back({"one longer", [](ir::Attribute& x) {
                       x.floats.push_back(x.floats.empty() ? 1.0f : x.floats.back());
                   }});
    for (const float v : {float(NAN), float(INFINITY)})
        out.push_back({"all " + float_label(v), [v](ir::Attribute& x) {
                           for (float& e : x.floats) e = v;
                       }});
    out.push_back(retyped("as a float", ir::AttrType::kFloat,
                          [](ir::Attribute& x) { x.f = x.floats.empty() ? 0.0f : x.floats[0]; }));
}

void strings_variants(std::vector<Variant>& out) {
    out.push_back({"empty", [](ir::Attribute& x) { x.strings.clear(); }});
    out.push_back({"one longer", [](ir::Attribute& x) { x.strings.emplace_back(); }});
    out.push_back(retyped("as a string", ir::AttrType::kString,
                          [](ir::Attribute& x) { x.s = x.strings.empty() ? "" : x.strings[0]; }));
}

// A tensor attribute (Constant's value, ConstantOfShape's) replaced by `t`.
Variant tensor_variant(const char* label, Tensor t) {
    return {label, [t](ir::Attribute& x) {
                x.tensors.clear();
                x.tensors.push_back({"", t, {}, {}, {}, {}});
            }};
}

void tensor_variants(std::vector<Variant>& out) {
    out.push_back(tensor_variant("an empty float tensor", Tensor::zeros(DataType::kFloat32, {0})));
    out.push_back(tensor_variant("int64 min as a 1x1 tensor",
                                 Tensor::from_values(DataType::kInt64, {1, 1}, std::vector{kMin})));
    out.push_back(tensor_variant(
        "two float64 NaNs",
        Tensor::from_values(DataType::kFloat64, {2}, std::vector<double>{NAN, NAN})));
}

// The changes made to attribute `a` (a graph or other kind: none but its removal, which the
// caller adds).
std::vector<Variant> variants_of(const ir::Attribute& a) {
    std::vector<Variant> out;
    switch (a.type) {
        case ir::AttrType::kInt:
            int_variants(a, out);
            break;
        case ir::AttrType::kFloat:
            float_variants(a, out);
            break;
        case ir::AttrType::kString:
            string_variants(out);
            break;
        case ir::AttrType::kInts:
            ints_variants(out);
            break;
        case ir::AttrType::kFloats:
            floats_variants(out);
            break;
        case ir::AttrType::kStrings:
            strings_variants(out);
            break;
        case ir::AttrType::kTensor:
            tensor_variants(out);
            break;
        default:
            break;
    }
    return out;
}

// Attributes other tests of a suite set, by op (domain and type) and name: one example each, to
// add to nodes of that op that do not set them. Graph attributes are not added.
using Examples = std::map<std::string, std::map<std::string, ir::Attribute>>;

std::string op_key(const ir::Node& n) {
    return (n.domain == "ai.onnx" ? "" : n.domain) + "::" + n.op_type;
}

bool addable(const ir::Attribute& a) {
    return a.ref_attr_name.empty() && a.type != ir::AttrType::kGraph &&
           a.type != ir::AttrType::kGraphs && a.type != ir::AttrType::kSparseTensor &&
           a.type != ir::AttrType::kSparseTensors;
}

// Every node of g and of the graphs in its nodes' attributes (If's branches, Loop's and Scan's
// bodies), depth first: a node's place in this list names it in a fresh copy of the model.
void all_nodes(const ir::Graph& g, std::vector<ir::Node*>& out) {
    for (const auto& n : g.nodes()) {
        out.push_back(n.get());
        for (const ir::Attribute& a : n->attributes)
            for (const auto& sub : a.graphs) all_nodes(*sub, out);
    }
}

std::vector<ir::Node*> all_nodes(const ir::Model& m) {
    std::vector<ir::Node*> out;
    all_nodes(*m.graph, out);
    return out;
}

// The window attributes of the ops that slide one (their ONNX defaults, for two spatial axes),
// added as examples where no test of the suite sets them (DeformConv's strides).
void add_window_examples(Examples& out) {
    for (const char* op : {"Conv", "ConvTranspose", "DeformConv", "AveragePool", "MaxPool",
                           "LpPool", "ConvInteger", "QLinearConv", "Col2Im"}) {
        const auto it = out.find(std::string("::") + op);
        if (it == out.end()) continue;
        it->second.try_emplace("strides", ir::Attribute::make_ints("strides", {1, 1}));
        it->second.try_emplace("dilations", ir::Attribute::make_ints("dilations", {1, 1}));
        it->second.try_emplace("pads", ir::Attribute::make_ints("pads", {0, 0, 0, 0}));
    }
}

Examples collect_examples(const std::vector<fs::path>& dirs) {
    Examples out;
    for (const fs::path& dir : dirs) {
        std::unique_ptr<ir::Model> model;
        try {
            model = onnx::load_model((dir / "model.onnx").string());
        } catch (const Error&) {
            continue;
        }
        for (const ir::Node* n : all_nodes(*model))
            for (const ir::Attribute& a : n->attributes)
                if (addable(a) && !out[op_key(*n)].count(a.name))
                    out[op_key(*n)].emplace(a.name, ir::clone_attribute(a, nullptr));
    }
    add_window_examples(out);
    return out;
}

// What one case changes: node `node` (its index in all_nodes), its attribute `name` (added from
// the examples when the node does not set it), then `variant` applied (nullptr: removed; an
// added attribute with no variant is added as the example has it).
struct Target {
    size_t node;
    std::string name;
    bool added;
};

// The test in `dir` with `target` changed, planned and run on its first data set; when it runs
// and `fp64`, also as --ref-precision fp64 runs it.
test::SweepOutcome run_with_change(const fs::path& dir, const Examples& examples,
                                   const Target& target, const Variant* variant, bool fp64) {
    auto model = onnx::load_model((dir / "model.onnx").string());
    const runtime::Feeds feeds = test::first_data_set_feeds(dir, *model);
    ir::Node& node = *all_nodes(*model).at(target.node);
    auto& attrs = node.attributes;
    if (target.added)
        attrs.push_back(ir::clone_attribute(examples.at(op_key(node)).at(target.name), nullptr));
    auto it = std::find_if(attrs.begin(), attrs.end(),
                           [&](const ir::Attribute& a) { return a.name == target.name; });
    if (variant)
        variant->apply(*it);
    else if (!target.added)
        attrs.erase(it);
    const test::SweepOutcome fp32 = test::run_changed_model(*model, feeds, {});
    return fp32.what == "ran" && fp64 ? test::run_as_fp64(*model, feeds) : fp32;
}

// Every attribute of every node (subgraphs' too) of the test in `dir`, each changed in each way,
// and each attribute the examples have for its op that it does not set, added; one sweep_case each.
void sweep_test(const fs::path& dir, const Examples& examples, bool fp64, FILE* out) {
    std::unique_ptr<ir::Model> model;
    try {
        model = onnx::load_model((dir / "model.onnx").string());
    } catch (const Error&) {
        return;  // a model this build cannot load is the conformance suite's business
    }
    const std::string test = dir.filename().string();
    const std::vector<ir::Node*> nodes = all_nodes(*model);
    for (size_t k = 0; k < nodes.size(); ++k) {
        const ir::Node& n = *nodes[k];
        const std::string where = test + " node " + std::to_string(k) + " (" + n.op_type + ") ";
        for (const ir::Attribute& a : n.attributes) {
            if (!a.ref_attr_name.empty()) continue;
            const Target t{k, a.name, false};
            test::sweep_case(out, where + a.name + " removed",
                             [&] { return run_with_change(dir, examples, t, nullptr, fp64); });
            for (const Variant& v : variants_of(a))
                test::sweep_case(out, where + a.name + " " + v.label,
                                 [&] { return run_with_change(dir, examples, t, &v, fp64); });
        }
        const auto ex = examples.find(op_key(n));
        if (ex == examples.end()) continue;
        for (const auto& [name, a] : ex->second) {
            if (std::any_of(n.attributes.begin(), n.attributes.end(),
                            [&](const ir::Attribute& b) { return b.name == name; }))
                continue;
            const Target t{k, name, true};
            test::sweep_case(out, where + name + " added",
                             [&] { return run_with_change(dir, examples, t, nullptr, fp64); });
            for (const Variant& v : variants_of(a))
                test::sweep_case(out, where + name + " added " + v.label,
                                 [&] { return run_with_change(dir, examples, t, &v, fp64); });
        }
    }
}

void sweep_suite(const std::string& root, const char* label) {
    logger().set_threshold(Severity::kCritical);
    const char* filter = std::getenv("PG_ATTRIBUTE_SWEEP_FILTER");
    const Examples examples = collect_examples(test::sweep_test_dirs(root, nullptr));
    const bool all = std::getenv("PG_ATTRIBUTE_SWEEP_ALL") != nullptr;
    test::SweepTally tally;
    for (const fs::path& dir : test::sweep_test_dirs(root, filter)) {
        if (!all && dir.filename().string().find("_expanded") != std::string::npos) continue;
        test::sweep_isolated(
            dir.filename().string(), [&](FILE* out) { sweep_test(dir, examples, all, out); },
            kCeiling, kSecondsPerTest, filter != nullptr, tally);
    }
    test::report_sweep("attribute sweep", label, "changed attributes", tally);
}

TEST(AttributeSweep, Onnx122NodeTests) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kOnnx122, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST(AttributeSweep, DebianNodeTests) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kDebianNode, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST(AttributeSweep, DebianOtherSuites) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kDebianOther, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

}  // namespace
}  // namespace pg
