// Typed access to a node's attributes with ONNX defaults. A present attribute of the wrong type
// is an error (kInvalidInput naming the attribute). A tracked Attrs also notes which attributes
// were looked at, so that planning can name the ones a kernel ignores (unread()).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace pg::ops {

class Attrs {
  public:
    explicit Attrs(const ir::Node& node) : node_(node) {}
    // An Attrs that notes every attribute looked at through it or its copies (has, get_*,
    // require_*).
    static Attrs tracked(const ir::Node& node);
    // With tracked(): the node's attributes, in the node's order, never looked at so far (an
    // attribute ONNX does not define for the op at this opset, or one the kernel ignores). Empty
    // when not tracked.
    std::vector<std::string> unread() const;
    bool has(const std::string& name) const;
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
    const ir::Attribute* find(const std::string& name) const;
    const ir::Node& node_;
    std::shared_ptr<std::vector<bool>> read_;  // per attribute of the node, when tracked
};

}  // namespace pg::ops
