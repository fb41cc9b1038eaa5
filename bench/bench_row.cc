// row_line / parse_row_line (bench_row.h): space-separated fields in a fixed order, numbers
// printed with 17 significant digits so that they come back unchanged.
#include "bench_row.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace pg::bench {

namespace {

constexpr const char* kPrefix = "PGROW ";

void put(std::string& s, double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " %.17g", v);
    s += buf;
}

// The fixed-position numbers of a row, in line order (pair ratios come before them).
std::vector<double*> numbers(Row& r) {
    return {&r.ref_ms,          &r.ort_ms,           &r.agree.max_rel,  &r.agree.max_abs,
            &r.agree.max_ort,   &r.agree.max_rel_pg, &r.mem.peak,       &r.mem.weights,
            &r.mem.live,        &r.mem.loaded,       &r.mem.load_peak,  &r.mem.file,
            &r.mem.anon,
            &r.before.other_us, &r.before.own_us,    &r.after.other_us, &r.after.own_us};
}

bool number(std::istringstream& in, double* v) {
    std::string tok;
    if (!(in >> tok)) return false;
    char* end = nullptr;
    *v = std::strtod(tok.c_str(), &end);
    return end && *end == '\0';
}

}  // namespace

std::string row_line(const Row& r) {
    Row copy = r;
    std::string s = kPrefix + r.name;
    put(s, static_cast<double>(r.pair_ratios.size()));
    for (double p : r.pair_ratios) put(s, p);
    for (double* v : numbers(copy)) put(s, *v);
    put(s, static_cast<double>(r.agree.over));
    put(s, static_cast<double>(r.agree.count));
    std::string note = r.note;
    for (char& ch : note)
        if (ch == '\n' || ch == '\r') ch = ' ';
    return s + " " + note;
}

std::optional<Row> parse_row_line(const std::string& line) {
    if (line.rfind(kPrefix, 0) != 0) return std::nullopt;
    std::istringstream in(line.substr(std::string(kPrefix).size()));
    Row r;
    double pairs = 0, over = 0, count = 0;
    if (!(in >> r.name) || !number(in, &pairs) || pairs < 0 || pairs > 1e6) return std::nullopt;
    r.pair_ratios.resize(static_cast<size_t>(pairs));
    for (double& p : r.pair_ratios)
        if (!number(in, &p)) return std::nullopt;
    for (double* v : numbers(r))
        if (!number(in, v)) return std::nullopt;
    if (!number(in, &over) || !number(in, &count)) return std::nullopt;
    r.agree.over = static_cast<uint64_t>(over), r.agree.count = static_cast<uint64_t>(count);
    std::getline(in, r.note);
    if (!r.note.empty() && r.note.front() == ' ') r.note.erase(0, 1);
    return r;
}

}  // namespace pg::bench
