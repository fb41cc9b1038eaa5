#include "runners/runner.h"

#include <ctime>

namespace pg::runners {

std::string make_runner_name(const std::string& prefix) {
    static std::map<std::string, int> counts;
    const int n = counts[prefix]++;
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%m/%d/%y-%H:%M:%S", &tm);
    return prefix + "-N" + std::to_string(n) + "-" + buf;
}

}  // namespace pg::runners
