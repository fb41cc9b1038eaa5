#include "cli/trt_compat_args.h"

#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace pg::cli {

namespace {

struct CompatFlag {
    std::vector<std::string> names;
    const char* dest;
    Nargs nargs;
    const char* metavar;
    const char* help;
    const char* note;  // why it has no effect here
};

const std::vector<CompatFlag>& compat_flags() {
    static const std::vector<CompatFlag> flags = {
        {{"--trt-min-shapes"}, "trt_min_shapes", Nargs::kOneOrMore, "NAME:[dims]",
         "TensorRT optimization profile, smallest shapes.",
         "the emulator and ONNX Runtime run the shapes of --input-shapes"},
        {{"--trt-opt-shapes"}, "trt_opt_shapes", Nargs::kOneOrMore, "NAME:[dims]",
         "TensorRT optimization profile, shapes to tune for.",
         "the emulator and ONNX Runtime run the shapes of --input-shapes"},
        {{"--trt-max-shapes"}, "trt_max_shapes", Nargs::kOneOrMore, "NAME:[dims]",
         "TensorRT optimization profile, largest shapes.",
         "the emulator and ONNX Runtime run the shapes of --input-shapes"},
        {{"--tactic-sources"}, "tactic_sources", Nargs::kZeroOrMore, "SOURCE",
         "TensorRT tactic sources (CUBLAS, CUDNN, ...).",
         "the emulator computes each node once, with no tactics to choose"},
        {{"--save-engine"}, "save_engine", Nargs::kOne, "PATH", "Save the TensorRT engine.",
         "no TensorRT engine is built"},
        {{"--plugins"}, "plugins", Nargs::kOneOrMore, "LIB", "TensorRT plugin libraries to load.",
         "plugin libraries extend TensorRT only"},
        {{"--builder-optimization-level"}, "builder_optimization_level", Nargs::kOne, "N",
         "TensorRT builder optimization level.", "no TensorRT engine is built"},
        {{"--pool-limit", "--memory-pool-limit"}, "pool_limit", Nargs::kOneOrMore, "POOL:BYTES",
         "TensorRT memory pool limits.", "no TensorRT engine is built"},
        {{"--load-timing-cache", "--timing-cache"}, "timing_cache", Nargs::kOne, "PATH",
         "TensorRT timing cache.", "no TensorRT engine is built"},
        {{"--onnx-flags"}, "onnx_flags", Nargs::kOneOrMore, "FLAG", "TensorRT ONNX parser flags.",
         "models are read by Polygraph's own ONNX loader"},
    };
    return flags;
}

// Scripts that change TensorRT's network or config: refused, since ignoring them would change
// what is compared.
struct ScriptFlag {
    std::vector<std::string> names;
    const char* dest;
};

const std::vector<ScriptFlag>& script_flags() {
    static const std::vector<ScriptFlag> flags = {
        {{"--trt-network-postprocess-script", "--trt-npps"}, "trt_npps"},
        {{"--trt-network-func-name"}, "trt_network_func_name"},
        {{"--trt-config-script"}, "trt_config_script"},
        {{"--trt-config-postprocess-script", "--trt-cpps"}, "trt_cpps"},
    };
    return flags;
}

}  // namespace

void add_trt_compat_args(ArgParser& p) {
    p.group("TensorRT (accepted from Polygraphy's commands; no effect without TensorRT)");
    for (const CompatFlag& f : compat_flags())
        p.add({f.names, f.dest, f.nargs, f.help, f.metavar, {}, ""});
    for (const ScriptFlag& f : script_flags())
        p.add({f.names, f.dest, Nargs::kOneOrMore,
               "TensorRT Python API script: refused (express the same constraints with "
               "--layer-precisions, or as an ONNX model with Casts from `debug precision -o`).",
               "SCRIPT",
               {},
               ""});
}

void check_trt_compat_args(const ParsedArgs& a) {
    if (a.count("trt")) return;
    for (const ScriptFlag& f : script_flags())
        if (a.has(f.dest))
            throw Error(ErrorKind::kUnsupported,
                        f.names.front() +
                            ": TensorRT network and config scripts need TensorRT's Python API. "
                            "Express the same constraints with --layer-precisions (and "
                            "--precision-constraints), or as an ONNX model with Casts "
                            "(`polygraph debug precision ... -o fixed.onnx`).");
    for (const CompatFlag& f : compat_flags()) {
        if (!a.has(f.dest) && !a.count(f.dest)) continue;
        if (std::string(f.dest).find("_shapes") != std::string::npos)
            for (const std::string& s : a.get_all(f.dest))
                if (s.find(":[") == std::string::npos || s.back() != ']')
                    throw Error(ErrorKind::kUsage,
                                f.names.front() + ": expected NAME:[dims], got '" + s + "'");
        log_warning("{} applies to TensorRT engines and has no effect here: {}", f.names.front(),
                    f.note);
    }
}

}  // namespace pg::cli
