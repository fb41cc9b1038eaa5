// ONNX Runtime's profile (OnnxRtOptions::profile_prefix, OnnxRtRunner::end_profiling): the
// per-node kernel times it records, read back from its JSON trace ("cat": "Node" events named
// "<node>_kernel_time", "dur" in microseconds, args.op_name the kernel's op type after ONNX
// Runtime's fusions, e.g. FusedConv). Benchmarks compare them with the reference's per-node
// times.
#pragma once

#include <string>
#include <vector>

namespace pg::runners {

struct OrtNodeTime {
    std::string node;  // the node name, "_kernel_time" removed
    std::string op;    // args.op_name
    double us = 0;     // the event's duration
};

// Every kernel-time event of the trace at `path`, in file order (one per node per run).
// kInvalidInput naming the file when it is not an ONNX Runtime trace.
std::vector<OrtNodeTime> read_ort_profile(const std::string& path);

}  // namespace pg::runners
