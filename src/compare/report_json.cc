// JSON of comparison results (see report.h). Non-finite numbers are written as the strings
// "nan", "inf" and "-inf", since JSON has no literal for them.
#include <cmath>

#include "base/pyformat.h"
#include "compare/report.h"

namespace pg::compare {

namespace {

nlohmann::ordered_json num(double v) {
    if (std::isfinite(v)) return v;
    return py_float(v);
}

nlohmann::ordered_json histogram_json(const Histogram& h) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    if (h.empty()) return nullptr;
    j["edges"] = nlohmann::ordered_json::array();
    for (double e : h.edges) j["edges"].push_back(num(e));
    j["counts"] = h.counts;
    return j;
}

nlohmann::ordered_json metrics_json(const PairStats& p) {
    nlohmann::ordered_json j;
    j["cosine_similarity"] = num(p.cosine_similarity);
    j["snr_db"] = num(p.snr_db);
    j["rmse"] = num(p.rmse);
    j["elemwise_mismatches"] = p.elemwise_mismatches;
    if (p.channel_axis) {
        j["channel_axis"] = *p.channel_axis;
        j["worst_channels"] = nlohmann::ordered_json::array();
        for (const auto& c : p.worst_channels) {
            j["worst_channels"].push_back({{"channel", c.channel},
                                           {"max_abs", num(c.max_abs)},
                                           {"mean_abs", num(c.mean_abs)},
                                           {"max_rel", num(c.max_rel)}});
        }
    }
    return j;
}

}  // namespace

nlohmann::ordered_json array_stats_to_json(const ArrayStats& s) {
    nlohmann::ordered_json j;
    j["count"] = s.count;
    j["mean"] = num(s.mean);
    j["std_dev"] = num(s.std_dev);
    j["var"] = num(s.var);
    j["median"] = num(s.median);
    j["min"] = num(s.min);
    j["min_at"] = s.argmin;
    j["max"] = num(s.max);
    j["max_at"] = s.argmax;
    j["avg_magnitude"] = num(s.avg_magnitude);
    if (!s.is_bool) {
        j["p90"] = num(s.p90);
        j["p95"] = num(s.p95);
        j["p99"] = num(s.p99);
    }
    if (s.quantile) j["quantile"] = num(*s.quantile);
    j["nan_count"] = s.nan_count;
    j["inf_count"] = s.inf_count;
    j["histogram"] = histogram_json(s.histogram);
    return j;
}

nlohmann::ordered_json output_to_json(const OutputResult& r) {
    nlohmann::ordered_json j;
    j["output"] = r.name0;
    j["reference_output"] = r.name1;
    j["passed"] = r.passed;
    j["compare_func"] = r.func == CompareFunc::kSimple ? "simple" : "indices";
    if (r.func == CompareFunc::kSimple) {
        j["atol"] = num(r.settings.atol.value);
        j["rtol"] = num(r.settings.rtol.value);
        j["check_error_stat"] = error_stat_name(r.settings.stat);
        if (r.settings.stat == ErrorStat::kQuantile)
            j["error_quantile"] = r.settings.quantile.value;
    } else {
        j["index_tolerance"] = r.index_tolerance;
    }
    if (!r.not_compared.empty()) j["not_compared"] = r.not_compared;
    if (!r.index_failures.empty()) j["index_failures"] = r.index_failures;
    if (!r.stats) return j;
    j["output0"] = array_stats_to_json(r.stats->out0);
    j["output1"] = array_stats_to_json(r.stats->out1);
    if (r.func == CompareFunc::kIndices) return j;
    j["required_abs"] = num(r.required_abs());
    j["required_rel"] = num(r.required_rel());
    j["absolute_difference"] = array_stats_to_json(r.stats->absdiff);
    j["relative_difference"] = array_stats_to_json(r.stats->reldiff);
    j["metrics"] = metrics_json(*r.stats);
    return j;
}

}  // namespace pg::compare
