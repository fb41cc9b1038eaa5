// `polygraph debug`: iterative accuracy debugging, one subtool per row of kDebugTools (each in
// its own tool_debug_*.cc). To add a subtool: write its run function, declare it in a header and
// add a row here.
#include "cli/tool_debug_precision.h"
#include "cli/tool_debug_reduce.h"
#include "cli/tools.h"

namespace pg::cli {

namespace {

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
