// Typed access to a node's attributes with ONNX defaults. A present attribute of the wrong type
// is an error (kInvalidInput naming the attribute).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace pg::ops {

class Attrs {
  public:
    explicit Attrs(const ir::Node& node) : node_(node) {}
    bool has(const std::string& name) const { return node_.find_attribute(name) != nullptr; }
    int64_t get_int(const std::string& name, int64_t fallback) const;
    // An int attribute ONNX defines as 0 or 1 only (keepdims, ceil_mode, ...): another value is
    // kInvalidInput, not read as true (runtimes disagree: ONNX Runtime reads keepdims 2 as 0).
    bool get_flag(const std::string& name, bool fallback) const;
    float get_float(const std::string& name, float fallback) const;
    std::string get_string(const std::string& name, const std::string& fallback) const;
    std::vector<int64_t> get_ints(const std::string& name,
                                  std::vector<int64_t> fallback = {}) const;
    std::vector<float> get_floats(const std::string& name, std::vector<float> fallback = {}) const;
    std::vector<std::string> get_strings(const std::string& name,
                                         std::vector<std::string> fallback = {}) const;
    // The tensor of a TENSOR attribute, or nullptr.
    const Tensor* get_tensor(const std::string& name) const;
    // The graph of a GRAPH attribute, or nullptr.
    const ir::Graph* get_graph(const std::string& name) const;
    // An int attribute that must be present.
    int64_t require_int(const std::string& name) const;
    const ir::Node& node() const { return node_; }

  private:
    const ir::Attribute* typed(const std::string& name, ir::AttrType type) const;
    const ir::Node& node_;
};

}  // namespace pg::ops
