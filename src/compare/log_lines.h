// Log lines produced by compare/: a severity, an indentation level (4 spaces each, like
// Polygraphy's G_LOGGER.indent()) and the text, possibly multi-line. Functions return lines
// instead of printing so that tests can check them and callers choose where they go.
#pragma once

#include <string>
#include <vector>

#include "base/log.h"

namespace pg::compare {

struct LogLine {
    Severity severity = Severity::kInfo;
    int indent = 0;
    std::string text;
};
using LogLines = std::vector<LogLine>;

// Prints lines through pg::logger(), indenting every line of each text by 4*indent spaces.
void emit(const LogLines& lines, int base_indent = 0);
// The text as printed (indentation applied to every line), without the "[I] " prefix.
std::string indented_text(const LogLine& line, int base_indent = 0);

}  // namespace pg::compare
