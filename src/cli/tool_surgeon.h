// `polygraph surgeon` internals shared by the subtool files (tool_surgeon_*.cc): the subtool
// entry points and the flag parsers they have in common. To add a subtool: write
// tool_surgeon_<name>.cc with a surgeon_<name>() function, declare it here and list it in
// tool_surgeon.cc.
#pragma once

#include <string>
#include <vector>

#include "cli/args.h"
#include "ir/model.h"
#include "passes/extract.h"

namespace pg::cli {

int surgeon_extract(const std::vector<std::string>& argv);
int surgeon_sanitize(const std::vector<std::string>& argv);
int surgeon_insert(const std::vector<std::string>& argv);
int surgeon_prune(const std::vector<std::string>& argv);

// Polygraphy's shape syntax "[1,3,'batch']": integers are static dims, strings symbolic, negative
// numbers unknown; "[]" is a scalar. Throws kUsage naming `flag`.
ir::Shape parse_shape(const std::string& text, const std::string& flag);

// Polygraphy's parse_meta: each argument is NAME[:SHAPE][:DTYPE], fields popped from the right
// ("auto" = unspecified; a bare NAME leaves both unspecified). Throws kUsage naming `flag`.
std::vector<passes::TensorSpec> parse_meta(const std::vector<std::string>& args, bool with_shape,
                                           bool with_dtype, const std::string& flag);

// The value of -o/--output; kUsage when missing (it is required by every surgeon subtool).
std::string required_output(const ParsedArgs& a);

// Logs "<title>:" followed by the model summary (inspect model's layout, without layers).
void log_model_summary(const std::string& title, const ir::Model& m);

}  // namespace pg::cli
