// A whole ONNX model: the main graph, opset imports, model-local functions and metadata.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace pg::ir {

struct OpsetImport {
    std::string domain;  // "" is the default ONNX domain
    int64_t version = 0;
    bool operator==(const OpsetImport&) const = default;
};

// A model-local function (FunctionProto). The body is a Graph whose inputs and outputs are the
// function's formal parameters.
struct Function {
    std::string name;
    std::string domain;
    std::string overload;
    std::string doc_string;
    std::vector<std::string> attribute_names;
    std::vector<Attribute> attribute_defaults;  // attribute_proto: attributes with defaults
    std::vector<OpsetImport> opset_imports;
    std::unique_ptr<Graph> body;
    Metadata metadata;
    std::string unknown_fields;
};

struct Model {
    int64_t ir_version = 0;
    std::vector<OpsetImport> opset_imports;
    std::string producer_name;
    std::string producer_version;
    std::string domain;
    int64_t model_version = 0;
    std::string doc_string;
    Metadata metadata;
    std::unique_ptr<Graph> graph;
    std::vector<Function> functions;
    std::vector<std::string> training_info;  // serialized TrainingInfoProto, kept opaque
    std::string unknown_fields;

    // The opset version imported for `domain` ("" or "ai.onnx" = default), or 0.
    int64_t opset_version(const std::string& domain) const;
};

// True for "" and "ai.onnx", the names of the default operator domain.
inline bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

}  // namespace pg::ir
