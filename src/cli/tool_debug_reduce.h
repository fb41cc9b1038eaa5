// `polygraph debug reduce` (tool_debug_reduce.cc), a row of kDebugTools in tool_debug.cc.
#pragma once

#include <string>
#include <vector>

namespace pg::cli {

// Runs `debug reduce` with the arguments after the subtool name; returns the exit status.
int run_debug_reduce(const std::vector<std::string>& argv);

}  // namespace pg::cli
