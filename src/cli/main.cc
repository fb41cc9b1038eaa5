// polygraph: entry point. Dispatches to a tool and turns errors into exit statuses
// (0 pass, 1 check failed, 2 usage, 3 invalid input, 4 unsupported, 5 internal).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "cli/tools.h"

namespace pg::cli {

namespace {

constexpr const char* kVersion = "0.1.0";

const std::vector<ToolEntry> kTools = {
    {"run", "Run a model on several runners and compare their outputs, optionally layer by layer.", run_run},
    {"convert", "Convert ONNX models to float16 or bfloat16, keeping chosen ops in float32.", run_convert},
    {"inspect", "Display information about models and data files.", run_inspect},
    {"surgeon", "Modify ONNX models: extract subgraphs, sanitize, insert and prune nodes.", run_surgeon},
    {"debug", "Iterative debugging: find the nodes that must stay in float32 (debug precision).", run_debug},
};

void print_listing(const std::string& prog, const std::string& summary, const std::vector<ToolEntry>& tools) {
    std::string out = "usage: " + prog + " [-h] {";
    for (size_t i = 0; i < tools.size(); ++i) out += (i ? "," : "") + std::string(tools[i].name);
    out += "} ...\n\n" + summary + "\n\n";
    for (const auto& t : tools) {
        std::string left = std::string("  ") + t.name;
        out += left + std::string(left.size() < 22 ? 22 - left.size() : 1, ' ') + t.summary + "\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace

int run_subtool(const std::string& prog, const std::string& summary, const std::vector<ToolEntry>& subtools,
                const std::vector<std::string>& argv) {
    if (argv.empty() || argv[0] == "-h" || argv[0] == "--help") {
        print_listing(prog, summary, subtools);
        if (argv.empty()) throw Error(ErrorKind::kUsage, prog + ": error: a subtool is required");
        return 0;
    }
    for (const auto& t : subtools)
        if (argv[0] == t.name) return t.run(std::vector<std::string>(argv.begin() + 1, argv.end()));
    throw Error(ErrorKind::kUsage, prog + ": error: unknown subtool '" + argv[0] + "'");
}

int main_impl(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && (args[0] == "--version" || args[0] == "-V")) {
        std::printf("Polygraph | Version: %s\n", kVersion);
        return 0;
    }
    return run_subtool("polygraph",
                       "Polygraph: an accuracy debugger for ONNX inference (a native Polygraphy).",
                       kTools, args);
}

}  // namespace pg::cli

int main(int argc, char** argv) {
    pg::install_terminate_handler();
    try {
        return pg::cli::main_impl(argc, argv);
    } catch (const pg::Error& e) {
        std::string msg = e.kind() == pg::ErrorKind::kUsage
                              ? std::string(e.what())
                              : std::string(pg::error_kind_name(e.kind())) + ": " + e.what();
        pg::logger().log(pg::Severity::kCritical, msg);
        return pg::exit_code_for(e.kind());
    } catch (const std::bad_alloc&) {
        pg::logger().log(pg::Severity::kCritical, "out of memory");
        return 3;
    } catch (const std::exception& e) {
        pg::logger().log(pg::Severity::kCritical, std::string("internal error: ") + e.what());
        return 5;
    }
}
