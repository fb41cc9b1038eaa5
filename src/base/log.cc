#include "base/log.h"

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace pg {

namespace {

const char* prefix_of(Severity s) {
    switch (s) {
        case Severity::kUltraVerbose: return "[U] ";
        case Severity::kSuperVerbose: return "[S] ";
        case Severity::kExtraVerbose: return "[X] ";
        case Severity::kVerbose: return "[V] ";
        case Severity::kInfo:
        case Severity::kStart:
        case Severity::kFinish: return "[I] ";
        case Severity::kWarning: return "[W] ";
        case Severity::kError: return "[E] ";
        case Severity::kCritical: return "[!] ";
    }
    return "[?] ";
}

}  // namespace

void Logger::set_verbosity(int level) {
    if (level >= 4) threshold_ = Severity::kUltraVerbose;
    else if (level == 3) threshold_ = Severity::kSuperVerbose;
    else if (level == 2) threshold_ = Severity::kExtraVerbose;
    else if (level == 1) threshold_ = Severity::kVerbose;
    else if (level == 0) threshold_ = Severity::kInfo;
    else if (level == -1) threshold_ = Severity::kStart;
    else if (level == -2) threshold_ = Severity::kFinish;
    else if (level == -3) threshold_ = Severity::kWarning;
    else if (level == -4) threshold_ = Severity::kError;
    else threshold_ = Severity::kCritical;
}

void Logger::set_log_file(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw Error(ErrorKind::kIo, "cannot open log file '" + path + "': " + std::strerror(errno));
    if (file_) std::fclose(file_);
    file_ = f;
}

std::string Logger::format_lines(Severity s, std::string_view message) {
    const char* prefix = prefix_of(s);
    std::string out = prefix;
    const std::string pad(std::strlen(prefix), ' ');
    size_t start = 0;
    while (true) {
        size_t nl = message.find('\n', start);
        out.append(message.substr(start, nl == std::string_view::npos ? nl : nl - start));
        if (nl == std::string_view::npos) break;
        out += '\n';
        out += pad;
        start = nl + 1;
    }
    out += '\n';
    return out;
}

void Logger::log(Severity s, std::string_view message) {
    if (!enabled(s)) return;
    std::string text = format_lines(s, message);
    std::FILE* stream = s == Severity::kCritical || all_to_stderr_ ? stderr : stdout;
    std::fwrite(text.data(), 1, text.size(), stream);
    std::fflush(stream);
    if (file_) {
        std::fwrite(text.data(), 1, text.size(), file_);
        std::fflush(file_);
    }
}

Logger::~Logger() {
    if (file_) std::fclose(file_);
}

Logger& logger() {
    static Logger instance;
    return instance;
}

}  // namespace pg
