// `polygraph surgeon`: model editing (sanitize, extract, insert, prune).
#include "cli/tools.h"

#include "base/error.h"

namespace pg::cli {

int run_surgeon(const std::vector<std::string>& argv) {
    static const std::vector<ToolEntry> subtools = {};
    return run_subtool("polygraph surgeon", "Modify ONNX models.", subtools, argv);
}

}  // namespace pg::cli
