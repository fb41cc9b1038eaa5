#include "runners/runner.h"

#include <ctime>

#include "base/error.h"

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

NamedTensors Runner::infer_streaming(const std::map<std::string, Tensor>&, TensorSink&) {
    throw Error(ErrorKind::kUnsupported,
                "runner " + name() + " cannot stream intermediate tensors");
}

std::unique_ptr<Runner> Runner::with_outputs(const std::vector<std::string>&) const {
    return nullptr;
}

std::unique_ptr<Runner> Runner::for_model(const ir::Model&) const { return nullptr; }

}  // namespace pg::runners
