// `polygraph debug precision` (tool_debug_precision.cc), a row of kDebugTools in tool_debug.cc.
#pragma once

#include <string>
#include <vector>

namespace pg::cli {

// Runs `debug precision` with the arguments after the subtool name; returns the exit status.
int run_debug_precision(const std::vector<std::string>& argv);

}  // namespace pg::cli
