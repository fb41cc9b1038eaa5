// Logger in Polygraphy's format: "[I] message", continuation lines indented under the prefix,
// severities filtered by a threshold set from -v/-q. CRITICAL goes to stderr, the rest to stdout.
// An optional log file receives every printed message as well.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace pg {

enum class Severity : int {
    kUltraVerbose = -20,
    kSuperVerbose = -10,
    kExtraVerbose = 0,
    kVerbose = 10,
    kInfo = 20,
    kStart = 22,
    kFinish = 28,
    kWarning = 30,
    kError = 40,
    kCritical = 50,
};

class Logger {
public:
    // Threshold from Polygraphy's level = (#-v) - (#-q).
    void set_verbosity(int level);
    void set_threshold(Severity s) { threshold_ = s; }
    Severity threshold() const { return threshold_; }
    // Also writes every printed message to `path` (created, truncated). Throws pg::Error on failure.
    void set_log_file(const std::string& path);
    // Sends every severity to stderr (keeps stdout clean for --json output).
    void set_all_to_stderr(bool v) { all_to_stderr_ = v; }
    bool enabled(Severity s) const { return static_cast<int>(s) >= static_cast<int>(threshold_); }
    // Prints a possibly multi-line message with Polygraphy's prefix and continuation rules.
    void log(Severity s, std::string_view message);
    // Formats the message the way log() prints it (without writing it).
    static std::string format_lines(Severity s, std::string_view message);
    ~Logger();

private:
    Severity threshold_ = Severity::kInfo;
    bool all_to_stderr_ = false;
    std::FILE* file_ = nullptr;
};

// The process-wide logger.
Logger& logger();

template <typename... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
    if (logger().enabled(Severity::kInfo)) logger().log(Severity::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_verbose(fmt::format_string<Args...> f, Args&&... args) {
    if (logger().enabled(Severity::kVerbose)) logger().log(Severity::kVerbose, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warning(fmt::format_string<Args...> f, Args&&... args) {
    if (logger().enabled(Severity::kWarning)) logger().log(Severity::kWarning, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
    if (logger().enabled(Severity::kError)) logger().log(Severity::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace pg
