#include "emu/policy.h"

#include <set>

#include "base/error.h"

namespace pg::emu {

namespace {

// Ops computed in floating point that take a reduced precision (activations and weights rounded
// on the way in, outputs rounded on the way out).
const std::set<std::string>& reduced_precision_ops() {
    static const std::set<std::string> ops = {
        // linear algebra
        "MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum",
        // elementwise math
        "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Abs", "Neg", "Reciprocal", "Min",
        "Max", "Mean", "Sum", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
        "Acosh", "Atanh", "Erf", "Floor", "Ceil", "Round", "Sign",
        // activations
        "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "Tanh", "Elu", "Selu", "Celu",
        "Gelu", "Softplus", "Softsign", "HardSwish", "Mish", "ThresholdedRelu", "Clip",
        // normalization
        "BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
        "LpNormalization", "MeanVarianceNormalization", "RMSNormalization",
        // pooling
        "AveragePool", "MaxPool", "GlobalAveragePool", "GlobalMaxPool", "LpPool", "GlobalLpPool",
        // reductions and softmax
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Softmax", "LogSoftmax", "CumSum"};
    return ops;
}

bool is_tensor_core_op(const std::string& op) {
    return op == "MatMul" || op == "Gemm" || op == "Conv" || op == "ConvTranspose";
}

// False when the node's first output is known to be a non-float tensor (integer Add, ...).
bool float_typed(const ir::Node& n) {
    if (n.outputs().empty() || !n.output(0)) return true;
    const ir::TypeInfo& t = n.output(0)->type();
    if (!t.is_tensor() || t.elem_type == DataType::kUndefined) return true;
    return t.elem_type == DataType::kFloat32;
}

std::string strip_quotes(std::string s) {
    while (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
        s = s.substr(1, s.size() - 2);
    return s;
}

// Splits on commas outside (), [] and {}.
std::vector<std::string> split_entries(const std::string& v) {
    std::vector<std::string> out;
    std::string cur;
    int depth = 0;
    for (char c : v) {
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        if (c == ',' && depth == 0) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

LayerPrecision parse_entry(const std::string& raw) {
    const std::string e = strip_quotes(raw);
    const size_t colon = e.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == e.size())
        throw Error(ErrorKind::kUsage,
                    "--layer-precisions: expected SELECTOR:PRECISION, got '" + raw + "'");
    LayerPrecision lp;
    lp.selector = strip_quotes(e.substr(0, colon));
    lp.precision = parse_precision(strip_quotes(e.substr(colon + 1)));
    lp.by_op = lp.selector.rfind("op:", 0) == 0;
    if (lp.by_op) {
        lp.op_type = lp.selector.substr(3);
        return lp;
    }
    const std::string& pat = lp.selector;
    try {
        lp.pattern = std::regex(pat);
    } catch (const std::regex_error& err) {
        throw Error(ErrorKind::kUsage,
                    "--layer-precisions: invalid regex '" + pat + "': " + err.what());
    }
    return lp;
}

}  // namespace

Constraints parse_constraints(const std::string& s) {
    if (s == "none") return Constraints::kNone;
    if (s == "prefer") return Constraints::kPrefer;
    if (s == "obey") return Constraints::kObey;
    throw Error(ErrorKind::kUsage,
                "--precision-constraints: expected obey, prefer or none, got '" + s + "'");
}

bool LayerPrecision::matches(const ir::Node& n) const {
    return by_op ? n.op_type == op_type : std::regex_match(n.name, pattern);
}

std::vector<LayerPrecision> parse_layer_precisions(const std::vector<std::string>& values) {
    std::vector<LayerPrecision> out;
    for (const auto& v : values)
        for (const auto& e : split_entries(v))
            if (!e.empty()) out.push_back(parse_entry(e));
    return out;
}

bool op_supports(const std::string& domain, const std::string& op_type, Precision p) {
    if (p == Precision::kFP32) return true;
    if (!domain.empty() && domain != "ai.onnx") return false;
    // TF32 and INT8: only the tensor-core ops. INT8 is deliberately conservative (TensorRT's
    // implicit INT8 quantizes these; elementwise ops, norms and activations stay float32).
    if (p == Precision::kTF32 || p == Precision::kINT8) return is_tensor_core_op(op_type);
    return reduced_precision_ops().count(op_type) > 0;
}

Precision PrecisionPolicy::resolve(const ir::Node& n) const {
    const LayerPrecision* chosen = nullptr;
    for (const auto& lp : layers)
        if (lp.matches(n)) chosen = &lp;
    const Precision want = chosen ? chosen->precision : default_precision;
    if (op_supports(n.domain, n.op_type, want) && (want == Precision::kFP32 || float_typed(n)))
        return want;
    if (chosen && constraints == Constraints::kObey)
        throw Error(ErrorKind::kUnsupported,
                    "node '" + n.name + "' (" + n.op_type + ") has no " + precision_name(want) +
                        " form, and --precision-constraints obey "
                        "forbids falling back to float32 (selected by --layer-precisions '" +
                        chosen->selector + "')");
    return Precision::kFP32;
}

}  // namespace pg::emu
