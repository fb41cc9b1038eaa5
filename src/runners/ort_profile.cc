// read_ort_profile (ort_profile.h).
#include "runners/ort_profile.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"

namespace pg::runners {

std::vector<OrtNodeTime> read_ort_profile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::kIo, "cannot read ONNX Runtime profile '" + path + "'");
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json trace = nlohmann::json::parse(text.str(), nullptr, false);
    if (!trace.is_array())
        throw Error(ErrorKind::kInvalidInput,
                    "'" + path + "' is not an ONNX Runtime profile (expected a JSON array)");
    static const std::string kSuffix = "_kernel_time";
    std::vector<OrtNodeTime> out;
    for (const auto& e : trace) {
        if (!e.is_object() || e.value("cat", "") != "Node") continue;
        const std::string name = e.value("name", "");
        if (name.size() <= kSuffix.size() ||
            name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
            continue;
        OrtNodeTime t;
        t.node = name.substr(0, name.size() - kSuffix.size());
        const auto args = e.find("args");
        if (args != e.end() && args->is_object()) t.op = args->value("op_name", "");
        const auto dur = e.find("dur");
        if (dur != e.end() && dur->is_number()) t.us = dur->get<double>();
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace pg::runners
