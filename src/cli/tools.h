// The tool table: one entry per top-level tool, each implemented in its own tool_*.cc file.
// To add a tool: write tool_<name>.cc with a run function, declare it here, add a row to
// kTools in main.cc.
#pragma once

#include <string>
#include <vector>

namespace pg::cli {

using ToolFn = int (*)(const std::vector<std::string>& argv);

struct ToolEntry {
    const char* name;
    const char* summary;
    ToolFn run;
};

int run_inspect(const std::vector<std::string>& argv);
int run_surgeon(const std::vector<std::string>& argv);
int run_run(const std::vector<std::string>& argv);
int run_convert(const std::vector<std::string>& argv);
int run_debug(const std::vector<std::string>& argv);

// Dispatches `argv[0]` among `subtools`; prints a listing for --help or a missing subtool.
int run_subtool(const std::string& prog, const std::string& summary,
                const std::vector<ToolEntry>& subtools, const std::vector<std::string>& argv);

}  // namespace pg::cli
