// Argument groups shared by the tools (logging, model loading, model saving) and small parsers
// for Polygraphy's flag mini-languages. Each add_* registers a titled help section; the
// matching function reads the parsed values back.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "ir/model.h"

namespace pg::cli {

// -v/--verbose, -q/--quiet, --silent, --log-file.
void add_logger_args(ArgParser& p);
void apply_logger_args(const ParsedArgs& a);

// --external-data-dir / --load-external-data / --ext.
void add_model_load_args(ArgParser& p);
// --model-type (Polygraphy's choices; only onnx is read).
void add_model_type_arg(ArgParser& p);
// Loads the model named by positional "model_file", logging "Loading model: PATH". kUnsupported
// for a TensorRT engine (--model-type engine, a .engine or .plan file) or another model type.
std::unique_ptr<ir::Model> load_model_from_args(const ParsedArgs& a);

// -o/--output (when `with_output`), --external-data-path/--save-external-data,
// --external-data-size-threshold.
void add_model_save_args(ArgParser& p, bool with_output = true);
// Saves to the path given by -o, honouring the external-data flags. Logs the path.
void save_model_from_args(const ir::Model& m, const ParsedArgs& a, const std::string& path);

// "1024", "1e6", "4K", "256M", "2G" (powers of 1024). Throws kUsage.
uint64_t parse_num_bytes(const std::string& text);

// Parses Polygraphy's `cast` list syntax "[1,3,'batch']" into tokens ("1", "3", "batch").
// Throws kUsage when not bracketed.
std::vector<std::string> parse_list(const std::string& text);

// Runs a tool body: prints help when asked, applies logger flags, and returns its status.
// `body` is called with the parsed arguments.
template <typename Body>
int run_tool(const ArgParser& p, const std::vector<std::string>& argv, Body body);

std::string absolute_path(const std::string& path);

// Prints the parser's help to stdout.
void print_help(const ArgParser& p);

template <typename Body>
int run_tool(const ArgParser& p, const std::vector<std::string>& argv, Body body) {
    ParsedArgs a = p.parse(argv);
    if (a.has("help")) {
        print_help(p);
        return 0;
    }
    apply_logger_args(a);
    return body(a);
}

// Polygraphy's start and end banner of `run` and the `debug` subtools: "[I] RUNNING | Command:
// polygraph run m.onnx --onnxrt" when made, then finish(status): "[I] PASSED | Runtime: 0.128s |
// Command: ..." for status 0, "[E] FAILED | Runtime: ..." otherwise; it returns the status.
// With --json every log line goes to stderr from here on, the banner's too.
class Banner {
  public:
    Banner(const std::string& prog, const std::vector<std::string>& argv, const ParsedArgs& a);
    int finish(int status) const;

  private:
    std::string command_;
    double start_ = 0;
};

// run_tool with the Banner around the body.
template <typename Body>
int run_tool_with_banner(const ArgParser& p, const std::vector<std::string>& argv, Body body) {
    return run_tool(p, argv, [&](ParsedArgs& a) {
        const Banner banner(p.prog(), argv, a);
        return banner.finish(body(a));
    });
}

}  // namespace pg::cli
