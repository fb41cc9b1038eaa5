#include "ops/type_groups.h"

#include <map>
#include <string_view>
#include <vector>

namespace pg::ops {

namespace {

constexpr int kRest = -1;  // this index and every later input (variadic ops)

using Groups = std::vector<std::vector<int>>;

// Groups of ONNX's default domain, from the ops' schemas (ONNX Runtime checks the same); ops
// whose tied inputs changed between opsets (BatchNormalization's statistics, Pad's constant)
// list only what holds in every version.
const std::map<std::string_view, Groups>& table() {
    static const std::map<std::string_view, Groups> t = [] {
        std::map<std::string_view, Groups> m;
        for (const char* op :
             {"Add",       "Sub",        "Mul",     "Div",         "Mod",
              "Equal",     "Less",       "Greater", "LessOrEqual", "GreaterOrEqual",
              "And",       "Or",         "Xor",     "BitShift",    "BitwiseAnd",
              "BitwiseOr", "BitwiseXor", "PRelu",   "MatMul",      "RoiAlign"})
            m[op] = {{0, 1}};
        for (const char* op : {"Sum", "Max", "Min", "Mean", "Concat", "Einsum"})
            m[op] = {{0, kRest}};
        for (const char* op : {"Gemm", "Conv", "ConvTranspose", "Clip", "Range",
                               "LayerNormalization", "InstanceNormalization", "GroupNormalization"})
            m[op] = {{0, 1, 2}};
        m["Attention"] = {{0, 1, 4}, {2, 5}};  // Q, K, past_key: T1; V, past_value: T2
        m["Where"] = {{1, 2}};
        m["BatchNormalization"] = {{1, 2}, {3, 4}};
        m["DeformConv"] = {{0, 1, 2, 3, 4}};
        for (const char* op : {"RNN", "GRU", "LSTM"}) m[op] = {{0, 1, 2, 3, 5, 6, 7}};
        for (const char* op : {"ScatterElements", "ScatterND", "NegativeLogLikelihoodLoss",
                               "SoftmaxCrossEntropyLoss", "DequantizeLinear", "STFT"})
            m[op] = {{0, 2}};
        return m;
    }();
    return t;
}

// The first tensor input of `group` present in ctx, and every other one checked against its type
// (no allocation: this runs before every call of the kernel).
void check_group(const KernelContext& ctx, const std::vector<int>& group, const std::string& op) {
    size_t first = ctx.num_inputs();
    for (size_t k = 0; k < group.size(); ++k) {
        const bool rest = k + 1 < group.size() && group[k + 1] == kRest;
        const size_t end = rest ? ctx.num_inputs() : static_cast<size_t>(group[k]) + 1;
        for (size_t i = static_cast<size_t>(group[k]); i < end && i < ctx.num_inputs(); ++i) {
            if (!ctx.has_input(i) || !ctx.value(i)->is_tensor()) continue;
            if (first == ctx.num_inputs()) {
                first = i;
                continue;
            }
            const DataType a = ctx.input(first).dtype(), b = ctx.input(i).dtype();
            if (a != b)
                fail(op + ": inputs " + std::to_string(first) + " and " + std::to_string(i) +
                     " have different types (" + dtype_name(a) + " and " + dtype_name(b) +
                     "); ONNX requires one type for them");
        }
        if (rest) break;
    }
}

}  // namespace

KernelFn with_type_groups(const std::string& domain, const std::string& op_type, int64_t opset,
                          KernelFn kernel) {
    if (!domain.empty() && domain != "ai.onnx") return kernel;
    const auto it = table().find(op_type);
    if (it == table().end()) return kernel;
    Groups groups = it->second;
    if (op_type == "BatchNormalization" && opset < 15) groups = {{0, 1, 2, 3, 4}};
    return [groups = std::move(groups), op_type, kernel = std::move(kernel)](KernelContext& ctx) {
        for (const std::vector<int>& g : groups) check_group(ctx, g, op_type);
        kernel(ctx);
    };
}

}  // namespace pg::ops
