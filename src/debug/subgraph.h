// Candidate subgraphs of `debug reduce` and the values that feed them. ReferenceValues runs the
// original model once per input sample on the reference interpreter and keeps (streamed through
// the session hook) every main-graph tensor a node reads or the graph returns, so a candidate
// cut anywhere takes sample i's values from reference run i. Memory: all of them, for every
// sample (the models debug reduce is meant for fit; a streaming-to-disk store would go here).
// cut_outputs / cut_inputs build one candidate from a copy of a model with passes/extract and
// passes/cleanup. Side branches cut off by new inputs become graph inputs fed from the reference
// values (not constants as in Polygraphy), so every sample keeps its own values.
// To add a cut kind: a function here that picks the tensors and calls make_cut in subgraph.cc.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "data/run_results.h"
#include "ir/model.h"
#include "passes/extract.h"
#include "runtime/session.h"
#include "tensor/tensor.h"

namespace pg::debug {

class ReferenceValues {
  public:
    // Runs `model` on each feed with the reference interpreter, keeping the feeds and every
    // tensor read by a main-graph node (or its subgraphs) or returned by the graph.
    ReferenceValues(const ir::Model& model, const data::FeedList& feeds,
                    const runtime::SessionOptions& session);
    // Values given directly, one map per sample (tests).
    explicit ReferenceValues(std::vector<std::map<std::string, Tensor>> samples,
                             std::string runner = "ref-runner");

    size_t num_samples() const { return samples_.size(); }
    // Sample `i`'s value of `name`, or nullptr when it was not recorded.
    const Tensor* find(size_t i, const std::string& name) const;
    // dtype and shape of `name` (dims that differ between samples become symbolic
    // "<name>_d<k>"); nullopt when not recorded in every sample.
    std::optional<passes::TensorSpec> spec(const std::string& name) const;
    // One feed dict per sample for the graph inputs of `m`. Throws kInternal when one is missing.
    data::FeedList feeds_for(const ir::Model& m) const;
    // The reference outputs of `m`, one list per sample (Polygraphy RunResults form).
    data::RunResults outputs_for(const ir::Model& m) const;
    // The name of the reference runner that produced the values.
    const std::string& runner_name() const { return runner_; }

  private:
    std::vector<std::map<std::string, Tensor>> samples_;
    std::string runner_;
};

// Values of the main graph known without inputs, never cut points: initializers, and outputs of
// nodes without subgraphs that read only such values (Constant, ConstantOfShape of a shape
// initializer, ...). Random ops are not constant (their values come from the reference run).
std::set<const ir::Value*> constant_values(const ir::Graph& g);

// Phase 1 cut points: indices of main-graph nodes with a non-constant output that has a
// reference value, in graph order.
std::vector<size_t> output_cut_points(const ir::Model& m, const ReferenceValues& ref);
// Phase 2 cut points: indices of main-graph nodes that read a non-constant value, directly or
// from inside a subgraph.
std::vector<size_t> input_cut_points(const ir::Model& m);

// A copy of `model` whose outputs are the outputs of main-graph node `node_index` (graph order),
// cleaned up (unused graph inputs dropped).
//   before: [A(x) -> a, B(a) -> b, C(b) -> y]   cut_outputs(1)   after: [A, B], outputs {b}
// Throws kUnsupported when no output of the node has a reference value.
std::unique_ptr<ir::Model> cut_outputs(const ir::Model& model, size_t node_index,
                                       const ReferenceValues& ref);

// A copy of `model` whose inputs are the non-constant inputs of node `node_index` (omitted ""
// inputs skipped), plus every value a kept node reads (directly or from inside an If/Loop
// subgraph) that the cut leaves without a producer: side branches become inputs. Graph outputs
// that do not depend on the cut are dropped, as are outputs that became inputs.
//   before: [A(x) -> a, B(a) -> b, C(x) -> c, D(b, c) -> y]   cut_inputs(1)
//   after:  [B(a) -> b, D(b, c) -> y], inputs {a, c}
// Input types come from the reference values. Throws kUnsupported when the node has no
// non-constant input, no output depends on the cut, or a needed value has no reference value.
std::unique_ptr<ir::Model> cut_inputs(const ir::Model& model, size_t node_index,
                                      const ReferenceValues& ref);

// Names of the main-graph nodes of `m`, in graph order.
std::vector<std::string> node_names(const ir::Model& m);
// Names of the main-graph nodes that compute a non-constant value, in graph order: the nodes
// debug reduce counts (constant producers such as ConstantOfShape of a shape initializer, kept
// in a candidate to make its weights, are left out).
std::vector<std::string> compute_node_names(const ir::Model& m);

}  // namespace pg::debug
