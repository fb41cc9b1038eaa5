// Shared by the `debug` subtools: the --check REMAINDER split, the Pass/Fail Reporting flags
// (--fail-code, --ignore-fail-code, --fail-regex, --show-output, --hide-fail-output) read back
// into debug::CheckCommandOptions (a one-word quoted command split into words), the Iterative
// Debugging flags (--artifacts-dir, --save/--load-debug-replay, --no-remove-intermediate) read
// back into debug::IterationOptions, and the entry point that
// turns SIGINT into exit status 130. To add a reporting flag: register it in add_check_args and
// read it in check_command_options (likewise add_iteration_args / iteration_options).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli/args.h"
#include "debug/external_check.h"
#include "debug/iteration.h"

namespace pg::cli {

// Splits argv at the first --check/--check-inference: the tokens up to and including it (for
// the parser) and the command after it (argparse's REMAINDER).
std::pair<std::vector<std::string>, std::vector<std::string>> split_check_command(
    const std::vector<std::string>& argv);

// The "Pass/Fail Reporting" group; `check_help` is the help of --check.
void add_check_args(ArgParser& p, const std::string& check_help);

// The check options from parsed flags and the command (ParsedArgs::rest). Throws kUsage for a
// non-integer exit code or --check without a command; warns about reporting flags given
// without --check.
debug::CheckCommandOptions check_command_options(const ParsedArgs& a);

// The groups every debug tool ends with: model loading and saving, data loader, comparator and
// logger flags.
void add_debug_common_args(ArgParser& p);

// Whether a token of the command contains one of `placeholders` (which then become the
// candidate's paths).
bool mentions_placeholder(const std::vector<std::string>& command,
                          const std::vector<std::string>& placeholders);
// When none does: says that the candidates are written under those names in the working
// directory (Polygraphy's iteration artifact, which checks read by name).
void note_fixed_copies(const std::vector<std::string>& command,
                       const std::vector<std::string>& placeholders);

// The "Iterative Debugging" group with each tool's help for --artifacts-dir,
// --save-debug-replay and --load-debug-replay.
void add_iteration_args(ArgParser& p, const std::string& artifacts_help,
                        const std::string& save_help, const std::string& load_help);

// The iteration options from those flags; the check needs a model file with --check.
debug::IterationOptions iteration_options(const ParsedArgs& a);

// Runs a `debug` subtool: --check's command goes to ParsedArgs::rest, --json sends every log
// to stderr, and `body` runs under a SIGINT guard (debug/interrupt.h). SearchInterrupted
// becomes exit status 130 and a message beginning with `what` ("Search", "Reduction") that
// says how to resume from the --save-debug-replay file.
int run_debug_tool(const ArgParser& p, const std::vector<std::string>& argv,
                   const std::string& what, const std::function<int(const ParsedArgs&)>& body);

}  // namespace pg::cli
