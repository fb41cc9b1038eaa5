#include "support/attribute_changes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/error.h"
#include "ir/clone.h"
#include "support/sweep_harness.h"

namespace pg::test {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntValues[] = {-3, -1, 0, 2, int64_t{1} << 40, kMax, kMin};
constexpr int64_t kListValues[] = {-1, 0, int64_t{1} << 40, kMax, kMin};
constexpr float kFloatValues[] = {NAN, INFINITY, -INFINITY, 0.0f, -1.0f, 1e30f};


std::string int_label(int64_t v) {
    return v == kMax ? "int64 max" : v == kMin ? "int64 min" : std::to_string(v);
}

std::string float_label(float v) {
    char s[32];
    std::snprintf(s, sizeof s, "%g", static_cast<double>(v));
    return s;
}

// a as attribute type t, holding `set`'s value.
AttributeVariant retyped(const char* label, ir::AttrType t, std::function<void(ir::Attribute&)> set) {
    return {label, [t, set](ir::Attribute& a) {
                a.type = t;
                set(a);
            }};
}

void int_variants(const ir::Attribute& a, std::vector<AttributeVariant>& out) {
    for (const int64_t v : kIntValues)
        if (v != a.i) out.push_back({"= " + int_label(v), [v](ir::Attribute& x) { x.i = v; }});
    out.push_back(retyped("as a float", ir::AttrType::kFloat,
                          [](ir::Attribute& x) { x.f = static_cast<float>(x.i); }));
    out.push_back(
        retyped("as a list", ir::AttrType::kInts, [](ir::Attribute& x) { x.ints = {x.i}; }));
}

void float_variants(const ir::Attribute& a, std::vector<AttributeVariant>& out) {
    for (const float v : kFloatValues)
        if (!(v == a.f)) out.push_back({"= " + float_label(v), [v](ir::Attribute& x) { x.f = v; }});
    out.push_back(retyped("as an int", ir::AttrType::kInt, [](ir::Attribute& x) {
        x.i = std::isfinite(x.f) && std::fabs(x.f) < 1e18f ? static_cast<int64_t>(x.f) : 0;
    }));
}

void string_variants(std::vector<AttributeVariant>& out) {
    out.push_back({"= \"\"", [](ir::Attribute& x) { x.s.clear(); }});
    out.push_back({"= \"no such value\"", [](ir::Attribute& x) { x.s = "no such value"; }});
    out.push_back(
        retyped("as a list", ir::AttrType::kStrings, [](ir::Attribute& x) { x.strings = {x.s}; }));
}

void ints_variants(std::vector<AttributeVariant>& out) {
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

void floats_variants(std::vector<AttributeVariant>& out) {
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

void strings_variants(std::vector<AttributeVariant>& out) {
    out.push_back({"empty", [](ir::Attribute& x) { x.strings.clear(); }});
    out.push_back({"one longer", [](ir::Attribute& x) { x.strings.emplace_back(); }});
    out.push_back(retyped("as a string", ir::AttrType::kString,
                          [](ir::Attribute& x) { x.s = x.strings.empty() ? "" : x.strings[0]; }));
}

// A tensor attribute (Constant's value, ConstantOfShape's) replaced by `t`.
AttributeVariant tensor_variant(const char* label, Tensor t) {
    return {label, [t](ir::Attribute& x) {
                x.tensors.clear();
                x.tensors.push_back({"", t, {}, {}, {}, {}});
            }};
}

void tensor_variants(std::vector<AttributeVariant>& out) {
    out.push_back(tensor_variant("an empty float tensor", Tensor::zeros(DataType::kFloat32, {0})));
    out.push_back(tensor_variant("int64 min as a 1x1 tensor",
                                 Tensor::from_values(DataType::kInt64, {1, 1}, std::vector{kMin})));
    out.push_back(tensor_variant(
        "two float64 NaNs",
        Tensor::from_values(DataType::kFloat64, {2}, std::vector<double>{NAN, NAN})));
}

// The changes made to attribute `a` (a graph or other kind: none but its removal, which the
// caller adds).
std::vector<AttributeVariant> variants_of(const ir::Attribute& a) {
    std::vector<AttributeVariant> out;
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
void add_window_examples(AttributeExamples& out) {
    for (const char* op : {"Conv", "ConvTranspose", "DeformConv", "AveragePool", "MaxPool",
                           "LpPool", "ConvInteger", "QLinearConv", "Col2Im"}) {
        const auto it = out.find(std::string("::") + op);
        if (it == out.end()) continue;
        it->second.try_emplace("strides", ir::Attribute::make_ints("strides", {1, 1}));
        it->second.try_emplace("dilations", ir::Attribute::make_ints("dilations", {1, 1}));
        it->second.try_emplace("pads", ir::Attribute::make_ints("pads", {0, 0, 0, 0}));
    }
}

}  // namespace

AttributeExamples collect_attribute_examples(const std::vector<fs::path>& dirs) {
    AttributeExamples out;
    for (const fs::path& dir : dirs) {
        const std::unique_ptr<ir::Model> model = load_test_model(dir);
        if (!model) continue;
        for (const ir::Node* n : all_nodes(*model))
            for (const ir::Attribute& a : n->attributes)
                if (addable(a) && !out[op_key(*n)].count(a.name))
                    out[op_key(*n)].emplace(a.name, ir::clone_attribute(a, nullptr));
    }
    add_window_examples(out);
    return out;
}


void apply_attribute_change(ir::Model& model, const AttributeExamples& examples,
                            const AttributeTarget& target, const AttributeVariant* variant) {
    ir::Node& node = *all_nodes(model).at(target.node);
    auto& attrs = node.attributes;
    if (target.added)
        attrs.push_back(ir::clone_attribute(examples.at(op_key(node)).at(target.name), nullptr));
    auto it = std::find_if(attrs.begin(), attrs.end(),
                           [&](const ir::Attribute& a) { return a.name == target.name; });
    if (variant)
        variant->apply(*it);
    else if (!target.added)
        attrs.erase(it);
}

namespace {

// An added example's value, for the case's label: " \"half_pixel\"", " 2", " 0.5", or "" for
// lists and tensors.
std::string example_text(const ir::Attribute& a) {
    switch (a.type) {
        case ir::AttrType::kInt:
            return " " + std::to_string(a.i);
        case ir::AttrType::kFloat:
            return " " + float_label(a.f);
        case ir::AttrType::kString:
            return " \"" + a.s + "\"";
        default:
            return "";
    }
}

bool sets(const ir::Node& n, const std::string& name) {
    return std::any_of(n.attributes.begin(), n.attributes.end(),
                       [&](const ir::Attribute& a) { return a.name == name; });
}

}  // namespace

void for_each_attribute_change(
    const ir::Model& model, const AttributeExamples& examples,
    const std::function<void(const std::string&, const AttributeTarget&, const AttributeVariant*)>&
        change) {
    const std::vector<ir::Node*> nodes = all_nodes(model);
    for (size_t k = 0; k < nodes.size(); ++k) {
        const ir::Node& n = *nodes[k];
        const std::string where = "node " + std::to_string(k) + " (" + n.op_type + ") ";
        for (const ir::Attribute& a : n.attributes) {
            if (!a.ref_attr_name.empty()) continue;
            const AttributeTarget t{k, a.name, false};
            change(where + a.name + " removed", t, nullptr);
            for (const AttributeVariant& v : variants_of(a))
                change(where + a.name + " " + v.label, t, &v);
        }
        const auto ex = examples.find(op_key(n));
        if (ex == examples.end()) continue;
        for (const auto& [name, a] : ex->second) {
            if (sets(n, name)) continue;
            const AttributeTarget t{k, name, true};
            change(where + name + " added" + example_text(a), t, nullptr);
            for (const AttributeVariant& v : variants_of(a))
                change(where + name + " added " + v.label, t, &v);
        }
    }
}

}  // namespace pg::test
