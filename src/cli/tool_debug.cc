// `polygraph debug`: iterative accuracy debugging. `debug precision` searches for the nodes that
// must run in float32 for a reduced-precision model (emulated with --fp16/--bf16) to match the
// float32 reference, using the in-process check (debug/precision_check.h) and the search modes
// of debug/search.h. To add a subtool: write its run function here and a row in kDebugTools.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/run_options.h"
#include "cli/run_support.h"
#include "cli/tools.h"
#include "data/data_files.h"
#include "debug/external_check.h"
#include "debug/iteration.h"
#include "debug/precision_check.h"
#include "debug/search.h"
#include "passes/convert_fp16.h"
#include "runners/ref_runner.h"

namespace pg::cli {

int run_debug_reduce(const std::vector<std::string>& argv);  // tool_debug_reduce.cc

namespace {

constexpr const char* kPlaceholder = "polygraph_debug.onnx";

ArgParser precision_parser() {
    ArgParser p("polygraph debug precision",
                "Find the nodes that must run in float32 for an emulated float16/bfloat16 run to "
                "match the float32 reference. Exit status 1 when no set passes. Example: "
                "polygraph debug precision model.onnx --fp16 -o fixed.onnx");
    p.positional("model_file", "Path to the ONNX model.");
    p.group("Precision search");
    p.flag({"--fp16"}, "fp16", "Reduced precision: float16 (default).");
    p.flag({"--bf16"}, "bf16", "Reduced precision: bfloat16.");
    p.value({"--mode"}, "mode", "{minimize,bisect,linear}",
            "minimize (default): rank nodes by local error, add float32 nodes greedily, then drop "
            "the unneeded ones. bisect / linear: Polygraphy's search over a topological "
            "prefix or suffix.",
            {"minimize", "bisect", "linear"});
    p.value({"--dir", "--direction"}, "direction", "{forward,reverse}",
            "bisect/linear: float32 for the first (forward, default) or last k nodes.",
            {"forward", "reverse"});
    p.value({"--threads"}, "threads", "N", "Threads for each run (default: every core).");
    p.flag({"--json"}, "json", "Print the result as JSON on stdout (logs go to stderr).");
    p.group("Pass/Fail Reporting");
    p.flag({"--check", "--check-inference"}, "check",
           "An external check: every token after --check is the command (run without a shell; "
           "exit status 0 = pass). Tokens containing polygraph_debug.onnx get the path of the "
           "iteration's candidate model (float16/bfloat16 with the float32 set kept). Without "
           "--check the in-process check runs (reference float32 vs the emulator).");
    p.values({"--fail-code", "--fail-returncode"}, "fail_code", "CODE",
             "Only these exit codes of the check mean failure.");
    p.values({"--ignore-fail-code", "--ignore-fail-returncode"}, "ignore_fail_code", "CODE",
             "Exit codes of the check that always mean success.");
    p.values({"--fail-regex"}, "fail_regex", "REGEX",
             "Fail when the check's stdout or stderr matches one of these (ECMAScript syntax). "
             "Without --fail-code the exit code is then ignored.");
    p.flag({"--show-output"}, "show_output", "Show the check's output for every iteration.");
    p.flag({"--hide-fail-output"}, "hide_fail_output",
           "Do not show the check's output when an iteration fails.");
    p.group("Iterative Debugging");
    p.value({"--art-dir", "--artifacts-dir"}, "artifacts_dir", "DIR",
            "Keep each iteration's candidate model (iteration_N.onnx) and its verdict "
            "(verdicts.txt) here.");
    p.value({"--save-debug-replay"}, "save_debug_replay", "PATH",
            "Save the verdict of every evaluated float32 set to this JSON file after each "
            "iteration.");
    p.value({"--load-debug-replay"}, "load_debug_replay", "PATH",
            "Answer the float32 sets recorded in this replay without running the check (resume "
            "an interrupted search).");
    add_model_load_args(p);
    add_model_save_args(p);
    add_data_loader_args(p);
    add_comparator_args(p);
    add_logger_args(p);
    return p;
}

emu::Precision reduced_precision(const ParsedArgs& a) {
    if (a.has("fp16") && a.has("bf16"))
        throw Error(ErrorKind::kUsage, "debug precision: choose one of --fp16 and --bf16");
    return a.has("bf16") ? emu::Precision::kBF16 : emu::Precision::kFP16;
}

std::vector<int> int_list(const ParsedArgs& a, const std::string& dest, const std::string& flag) {
    std::vector<int> out;
    for (const auto& v : a.get_all(dest)) {
        size_t used = 0;
        int x = 0;
        try {
            x = std::stoi(v, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != v.size() || v.empty())
            throw Error(ErrorKind::kUsage,
                        flag + ": expected an integer exit code, got '" + v + "'");
        out.push_back(x);
    }
    return out;
}

// The candidate model for one iteration: the reduced-precision conversion with `fp32_nodes`
// kept in float32 (as -o writes the answer).
void write_candidate(const ParsedArgs& a, emu::Precision p, const std::vector<std::string>& nodes,
                     const std::string& path) {
    auto model = load_model_from_args(a);
    passes::ConvertFp16Options o;
    o.target = p == emu::Precision::kBF16 ? DataType::kBFloat16 : DataType::kFloat16;
    o.node_block_list = nodes;
    passes::convert_float_to_fp16(*model, o);
    save_model_from_args(*model, a, path);
}

debug::SearchResult search(const ParsedArgs& a, debug::PrecisionCheck& check,
                           const debug::CheckFn& fn) {
    const std::string mode = a.get("mode", "minimize");
    const auto dir = debug::parse_direction(a.get("direction", "forward"));
    log_info("Searching {} candidate node(s) with --mode {}", check.candidates().size(), mode);
    if (mode == "bisect") return debug::bisect(check.candidates(), dir, fn);
    if (mode == "linear") return debug::linear(check.candidates(), dir, fn);
    auto r = debug::minimize(check.ranked_candidates(), fn);
    // Report in graph order, as the other modes do.
    const debug::NodeSet found(r.fp32_nodes.begin(), r.fp32_nodes.end());
    r.fp32_nodes.clear();
    for (const auto& n : check.candidates())
        if (found.count(n)) r.fp32_nodes.push_back(n);
    return r;
}

void save_fixed(const ParsedArgs& a, emu::Precision p, const std::vector<std::string>& nodes) {
    auto model = load_model_from_args(a);
    passes::ConvertFp16Options o;
    o.target = p == emu::Precision::kBF16 ? DataType::kBFloat16 : DataType::kFloat16;
    o.node_block_list = nodes;
    const auto rep = passes::convert_float_to_fp16(*model, o);
    log_info("Converted to {} with {} node(s) kept in float32, {} Cast(s) inserted",
             emu::precision_name(p), rep.nodes_blocked, rep.casts_inserted);
    save_model_from_args(*model, a, a.get("output"));
}

void report(const ParsedArgs& a, const debug::SearchResult& r, const debug::IterativeCheck& it) {
    const std::string lp = debug::layer_precisions_string(r.fp32_nodes);
    const std::string trt = debug::trtexec_string(r.fp32_nodes);
    if (a.count("json")) {
        nlohmann::ordered_json j{{"fp32_nodes", r.fp32_nodes},
                                 {"evaluations", r.evaluations},
                                 {"checks_run", it.checks_run()},
                                 {"replayed", it.replayed()},
                                 {"passed", r.passed},
                                 {"layer_precisions", lp},
                                 {"trtexec", trt}};
        std::printf("%s\n", j.dump(2).c_str());
        return;
    }
    if (!r.passed) {
        log_error("No float32 node set passed the check ({} evaluation(s))", r.evaluations);
        return;
    }
    std::string names;
    for (const auto& n : r.fp32_nodes) names += "\n    " + n;
    log_info("Nodes to run in float32 ({}, {} evaluation(s), {} check(s) run, {} from replay):{}",
             r.fp32_nodes.size(), r.evaluations, it.checks_run(), it.replayed(), names);
    log_info("--layer-precisions {}", lp);
    log_info("trtexec {}", trt);
}

int precision_main(const ParsedArgs& a) {
    if (a.count("json")) logger().set_all_to_stderr(true);
    const emu::Precision p = reduced_precision(a);
    const auto opts = compare::parse_compare_options(compare_args(a));
    auto model = load_model_from_args(a);
    emu::EmuRunnerOptions base;
    base.session.threads = static_cast<int>(int_arg(a, "threads", "--threads", 0));
    base.policy.default_precision = p;
    auto feeds = make_feeds(a, *model, runners::graph_input_metadata(*model->graph));
    if (a.has("save_inputs")) data::save_inputs(a.get("save_inputs"), feeds);
    debug::PrecisionCheck check(*model, std::move(feeds), base, opts);
    debug::CheckCommandOptions cmd;
    cmd.command = a.rest;
    cmd.fail_codes = int_list(a, "fail_code", "--fail-code");
    cmd.ignore_fail_codes = int_list(a, "ignore_fail_code", "--ignore-fail-code");
    cmd.fail_regex = a.get_all("fail_regex");
    cmd.show_output = a.has("show_output");
    cmd.hide_fail_output = a.has("hide_fail_output");
    const bool external = a.has("check");
    if (external && cmd.command.empty())
        throw Error(ErrorKind::kUsage, "--check: expected a command after --check");
    if (!external &&
        (!cmd.fail_codes.empty() || !cmd.ignore_fail_codes.empty() || !cmd.fail_regex.empty()))
        log_warning("--fail-code/--ignore-fail-code/--fail-regex apply only with --check");
    if (external) {
        bool placeholder = false;
        for (const auto& t : cmd.command)
            placeholder = placeholder || t.find(kPlaceholder) != std::string::npos;
        if (!placeholder)
            log_warning(
                "--check: the command does not mention {}; it will not see the "
                "candidate model",
                kPlaceholder);
    }
    debug::IterationOptions io;
    io.artifacts_dir = a.get("artifacts_dir");
    io.save_replay = a.get("save_debug_replay");
    io.load_replay = a.get("load_debug_replay");
    io.needs_model = external;
    debug::IterativeCheck iter(
        io,
        [&](const debug::NodeSet& s, const std::string& path) {
            write_candidate(a, p, std::vector<std::string>(s.begin(), s.end()), path);
        },
        [&](const debug::NodeSet& s, const std::string& path) {
            if (!external) return check(s);
            return debug::run_check_command(cmd,
                                            debug::substitute(cmd.command, kPlaceholder, path));
        });
    const auto r = search(a, check, [&iter](const debug::NodeSet& s) { return iter(s); });
    report(a, r, iter);
    if (r.passed && a.has("output")) save_fixed(a, p, r.fp32_nodes);
    return r.passed ? 0 : 1;
}

// --check is argparse's REMAINDER: every later token belongs to the command. The parser sees
// the tokens before it (plus "--check" itself) and the command lands in ParsedArgs::rest.
int run_debug_precision(const std::vector<std::string>& argv) {
    std::vector<std::string> head, command;
    bool in_command = false;
    for (const auto& t : argv) {
        if (in_command) {
            command.push_back(t);
        } else {
            head.push_back(t);
            in_command = t == "--check" || t == "--check-inference";
        }
    }
    return run_tool(precision_parser(), head, [&command](ParsedArgs& a) {
        a.rest = command;
        return precision_main(a);
    });
}

const std::vector<ToolEntry> kDebugTools = {
    {"precision", "Find the nodes that must run in float32 under float16/bfloat16.",
     run_debug_precision},
    {"reduce", "Reduce a failing model to a small failing subgraph.", run_debug_reduce},
};

}  // namespace

int run_debug(const std::vector<std::string>& argv) {
    return run_subtool("polygraph debug", "Iterative accuracy debugging.", kDebugTools, argv);
}

}  // namespace pg::cli
