// The in-process check of `debug precision`: the model on the reference interpreter (float32,
// once, outputs cached) against the emulator at a reduced default precision with a chosen set
// of nodes forced to float32 (INT8: fake quantization with scales calibrated once); passes when
// every output of every feed matches under the `run` comparator options. Also ranks the candidate
// nodes by local error for --mode minimize.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compare/compare_options.h"
#include "data/run_results.h"
#include "debug/search.h"
#include "emu/emu_runner.h"
#include "ir/model.h"

namespace pg::debug {

class PrecisionCheck {
  public:
    // `base` holds the emulator options (default precision, rounding, ...); its layer entries
    // are kept and the float32 set is appended. `model` must outlive the check. With INT8
    // nodes, the activation scales are base.emulation.int8_scales when given (a calibration
    // cache), else calibrated once over `feeds` with `calibration` and shared by every check.
    PrecisionCheck(const ir::Model& model, data::FeedList feeds, emu::EmuRunnerOptions base,
                   compare::CompareOptions compare,
                   const emu::CalibrationOptions& calibration = {});

    // Nodes the policy runs at a reduced precision, in graph (topological) order.
    const std::vector<std::string>& candidates() const { return candidates_; }
    // True when every output of every feed matches with `fp32_nodes` in float32.
    bool operator()(const NodeSet& fp32_nodes);
    // Candidates, most suspicious first: nodes whose rounding overflowed or produced NaN/Inf,
    // then by how much the node grew the relative error of its inputs (one layer-wise run of
    // both runners on the first feed); ties keep graph order.
    std::vector<std::string> ranked_candidates();
    // The INT8 activation scales (empty without INT8 nodes); calibrated() when computed here.
    const emu::ScaleTable& int8_scales() const { return *base_.emulation.int8_scales; }
    bool calibrated() const { return calibrated_; }
    // The dtype of every tensor of the reference run on the first feed, by name.
    const std::map<std::string, DataType>& tensor_dtypes() const { return dtypes_; }

  private:
    emu::EmuRunnerOptions options_for(const NodeSet& fp32_nodes) const;
    const ir::Model& model_;
    data::FeedList feeds_;
    emu::EmuRunnerOptions base_;
    compare::CompareOptions compare_;
    std::vector<runners::NamedTensors> golden_;
    std::vector<std::string> candidates_;
    bool calibrated_ = false;
    std::map<std::string, DataType> dtypes_;
};

// A --layer-precisions entry for exactly the node named `name` ("Add" -> regex "Add").
emu::LayerPrecision exact_node_precision(const std::string& name, emu::Precision p);

// "A:float32 B:float32" (node names regex-escaped) for --layer-precisions.
std::string layer_precisions_string(const std::vector<std::string>& nodes);
// "--layerPrecisions=A:fp32,B:fp32" for trtexec.
std::string trtexec_string(const std::vector<std::string>& nodes);

}  // namespace pg::debug
