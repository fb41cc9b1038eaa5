// Shared by the `debug` subtools: the --check REMAINDER split and the Pass/Fail Reporting flags
// (--fail-code, --ignore-fail-code, --fail-regex, --show-output, --hide-fail-output) read back
// into debug::CheckCommandOptions. To add a reporting flag: register it in add_check_args and
// read it in check_command_options.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/args.h"
#include "debug/external_check.h"

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

// Warns when no token of the command contains any of `placeholders`.
void warn_without_placeholder(const std::vector<std::string>& command,
                              const std::vector<std::string>& placeholders);

}  // namespace pg::cli
