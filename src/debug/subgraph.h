// Candidate subgraphs of `debug reduce` and the values that feed them. ReferenceValues runs the
// original model once per input sample on the reference interpreter (streamed through the
// session hook) and records the dtype and dims of every main-graph tensor a node reads or the
// graph returns. Memory is bounded by a budget: while the kept tensors of all samples fit, it
// keeps them all (kept mode: a candidate cut anywhere takes sample i's values from reference run
// i). When they would exceed it, it drops them and switches to on-demand mode: a candidate's
// values are recomputed by re-running the reference per sample with a hook that captures only
// the tensors asked for, caching the most recent request. Both modes give the same values.
// cut_outputs / cut_inputs build one candidate from a copy of a model with passes/extract and
// passes/cleanup. Side branches cut off by new inputs become graph inputs fed from the reference
// values (not constants as in Polygraphy), so every sample keeps its own values.
// To add a cut kind: a function here that picks the tensors and calls make_cut in subgraph.cc.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "data/run_results.h"
#include "ir/model.h"
#include "passes/extract.h"
#include "runners/ref_runner.h"
#include "runtime/session.h"
#include "tensor/tensor.h"

namespace pg::debug {

class ReferenceValues {
  public:
    // Runs `model` on each feed with the reference interpreter, recording the feeds and every
    // tensor read by a main-graph node (or its subgraphs) or returned by the graph. Keeps their
    // values while their bytes (feeds not counted) fit `memory_budget`, else switches to
    // on-demand mode (logged with the reason). `model` must outlive this object.
    ReferenceValues(const ir::Model& model, const data::FeedList& feeds,
                    const runtime::SessionOptions& session,
                    uint64_t memory_budget = std::numeric_limits<uint64_t>::max());
    // Values given directly, one map per sample (tests; kept mode).
    explicit ReferenceValues(std::vector<std::map<std::string, Tensor>> samples,
                             std::string runner = "ref-runner");
    ~ReferenceValues();

    size_t num_samples() const { return metas_.size(); }
    // Sample `i`'s value of `name`, or nullptr when it is not held: in on-demand mode only the
    // values of the most recent feeds_for / outputs_for / fetch are held.
    const Tensor* find(size_t i, const std::string& name) const;
    // Makes the values of `names` held (on-demand mode: re-runs the reference per sample unless
    // the cache already holds them all; kept mode: nothing to do).
    void fetch(const std::set<std::string>& names) const;
    // dtype and shape of `name` (dims that differ between samples become symbolic
    // "<name>_d<k>"); nullopt when not recorded in every sample.
    std::optional<passes::TensorSpec> spec(const std::string& name) const;
    // One feed dict per sample for the graph inputs of `m`. Throws kInternal when one is missing.
    data::FeedList feeds_for(const ir::Model& m) const;
    // The reference outputs of `m`, one list per sample (Polygraphy RunResults form).
    data::RunResults outputs_for(const ir::Model& m) const;
    // The name of the reference runner that produced the values.
    const std::string& runner_name() const { return runner_; }
    // True when values are recomputed per candidate instead of kept.
    bool on_demand() const { return on_demand_; }
    // Reference runs of all samples made after construction (on-demand cache misses).
    size_t reruns() const { return reruns_; }
    // Bytes of the recorded tensors of every sample (what kept mode holds beyond the feeds).
    uint64_t recorded_bytes() const { return recorded_bytes_; }

  private:
    struct Meta {
        DataType dtype;
        std::vector<int64_t> dims;
    };
    using Values = std::map<std::string, Tensor>;
    void record(size_t sample, const std::string& name, const Tensor& t);
    void run_all(const data::FeedList& feeds, uint64_t budget);
    // Values of the graph inputs and outputs of `m`, fetched.
    void fetch_io(const ir::Model& m) const;

    std::vector<std::map<std::string, Meta>> metas_;  // per sample
    std::vector<Values> feeds_;                       // per sample (on-demand mode)
    mutable std::vector<Values> samples_;             // kept values, or the on-demand cache
    mutable std::set<std::string> cached_;            // names the on-demand cache holds
    mutable size_t reruns_ = 0;
    std::set<std::string> keep_;
    std::unique_ptr<runners::RefRunner> ref_;
    std::string runner_;
    bool on_demand_ = false;
    uint64_t recorded_bytes_ = 0;
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
