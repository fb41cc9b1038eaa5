#include "compare/log_lines.h"

namespace pg::compare {

std::string indented_text(const LogLine& line, int base_indent) {
    const std::string pad(static_cast<size_t>(4 * (base_indent + line.indent)), ' ');
    std::string out = pad;
    for (char c : line.text) {
        out += c;
        if (c == '\n') out += pad;
    }
    return out;
}

void emit(const LogLines& lines, int base_indent) {
    for (const auto& l : lines) {
        if (logger().enabled(l.severity)) logger().log(l.severity, indented_text(l, base_indent));
    }
}

}  // namespace pg::compare
