#include "compare/output_matching.h"

#include <algorithm>
#include <cctype>

namespace pg::compare {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

size_t position(const std::vector<std::string>& seq, const std::string& name) {
    return static_cast<size_t>(std::find(seq.begin(), seq.end(), name) - seq.begin());
}

}  // namespace

std::optional<std::string> find_str_in_iterable(const std::string& name,
                                                const std::vector<std::string>& seq,
                                                std::optional<size_t> index) {
    if (std::find(seq.begin(), seq.end(), name) != seq.end()) return name;
    const std::string ln = lower(name);
    for (const auto& e : seq) {
        const std::string le = lower(e);
        if (le.find(ln) != std::string::npos || ln.find(le) != std::string::npos) return e;
    }
    if (index && *index < seq.size()) return seq[*index];
    return std::nullopt;
}

OutputMatching match_outputs(const std::vector<std::string>& names0,
                             const std::vector<std::string>& names1, const std::string& runner1) {
    OutputMatching m;
    for (size_t i = 0; i < names0.size(); ++i) {
        const auto found = find_str_in_iterable(names0[i], names1, i);
        if (!found) continue;
        if (*found != names0[i]) {
            if (find_str_in_iterable(*found, names0) == *found) {
                m.lines.push_back({Severity::kVerbose, 0,
                                   "Will not compare " + *found + " with " + names0[i] +
                                       ", since the former already has an exact match: " + *found});
                continue;
            }
            m.lines.push_back({Severity::kWarning, 0,
                               "Output names did not match exactly. Assuming " + runner1 +
                                   " output: " + *found + " corresponds to output: " + names0[i]});
        }
        m.matches.push_back({i, position(names1, *found)});
    }
    return m;
}

std::vector<std::pair<size_t, size_t>> consecutive_pairs(size_t runners) {
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t i = 0; i + 1 < runners; ++i) out.emplace_back(i, i + 1);
    return out;
}

}  // namespace pg::compare
