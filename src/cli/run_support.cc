#include "cli/run_support.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/error.h"
#include "base/log.h"
#include "cli/run_options.h"
#include "data/data_files.h"
#include "data/python_loader.h"
#include "data/data_loader.h"
#include "data/npy.h"

namespace pg::cli {

namespace {

std::string metadata_text(const runners::NamedTensors& tensors) {
    std::string s = "{";
    for (size_t i = 0; i < tensors.size(); ++i) {
        const Tensor& t = tensors[i].second;
        std::string dims = "(";
        for (size_t k = 0; k < t.dims().size(); ++k)
            dims += (k ? ", " : "") + std::to_string(t.dims()[k]);
        dims += t.dims().size() == 1 ? ",)" : ")";
        s += (i ? ",\n " : "") + tensors[i].first + " [dtype=" + dtype_name(t.dtype()) +
             ", shape=" + dims + "]";
    }
    return s + "}";
}

// "[runner] k/n iterations" on stderr when it is a terminal and there is more than one iteration.
void show_progress(const std::string& runner, size_t done, size_t total) {
    static const bool tty = ::isatty(2) != 0;
    if (!tty || total < 2) return;
    std::fprintf(stderr, "\r[%s] %zu/%zu iterations", runner.c_str(), done, total);
    if (done == total) std::fprintf(stderr, "\n");
}

std::string padded(const std::string& s, size_t n) {
    return s.size() >= n ? s : s + std::string(n - s.size(), ' ');
}

}  // namespace

std::vector<std::string> input_names(const ir::Model& m) {
    std::vector<std::string> out;
    for (const ir::Value* v : m.graph->inputs())
        if (!v->is_initializer()) out.push_back(v->name());
    return out;
}

std::vector<std::string> output_names(const ir::Model& m) {
    std::vector<std::string> out;
    for (const ir::Value* v : m.graph->outputs()) out.push_back(v->name());
    return out;
}

namespace {

// The feeds of one --load-inputs path or data loader script.
data::FeedList load_feed_file(const std::string& path, const ir::Model& model,
                              const std::string& func = "") {
    if (data::is_python_loader(path)) {
        data::PythonLoaderSpec spec = data::parse_python_loader(path);
        if (!func.empty()) spec.function = func;
        log_info("Loading input data from data loader script {} ({})", spec.script,
                 spec.function);
        return data::load_python_inputs(spec);
    }
    log_info("Loading input data from {}", path);
    return data::load_inputs(path, {input_names(model), output_names(model)});
}

}  // namespace

data::FeedList make_feeds(const ParsedArgs& a, const ir::Model& model,
                          const std::vector<runners::TensorMeta>& meta) {
    auto files = a.get_all("load_inputs");
    if (a.has("data_loader_script")) {
        if (!data::is_python_loader(a.get("data_loader_script")))
            throw Error(ErrorKind::kUsage, "--data-loader-script: expected SCRIPT.py[:FUNC], got '" +
                                               a.get("data_loader_script") + "'");
        files.push_back(a.get("data_loader_script"));
    }
    if (!files.empty()) {
        for (const char* f :
             {"seed", "val_range", "iterations", "int_min", "int_max", "float_min", "float_max"})
            if (a.has(f))
                log_warning(
                    "Argument: '--{}' will be ignored since a custom data loader was provided.", f);
        data::FeedList feeds;
        for (const auto& path : files) {
            auto more = load_feed_file(path, model, a.get("data_loader_func_name"));
            feeds.insert(feeds.end(), more.begin(), more.end());
        }
        if (feeds.empty())
            throw Error(ErrorKind::kInvalidInput, "--load-inputs: the files hold no feed dicts");
        for (auto& dict : feeds)  // bfloat16 / float8 inputs saved as float32 (numpy_compatible)
            for (auto& [name, t] : dict)
                for (const runners::TensorMeta& m : meta)
                    if (m.name == name) t = data::from_numpy_compatible(t, m.dtype, name);
        return feeds;
    }
    data::DataLoader loader(meta, data_loader_options(a));
    data::FeedList feeds;
    for (int64_t i = 0; i < loader.size(); ++i) feeds.push_back(loader.get(i));
    return feeds;
}

compare::RunResult run_runner(runners::Runner& r, const data::FeedList& feeds, int64_t warm_up,
                              std::vector<double>* times, double min_seconds) {
    log_info("{} | Activating and starting inference", padded(r.name(), 35));
    auto as_map = [](const runners::NamedTensors& f) {
        return std::map<std::string, Tensor>(f.begin(), f.end());
    };
    for (int64_t w = 0; w < warm_up; ++w) r.infer(as_map(feeds.at(0)));
    compare::RunResult result{r.name(), {}};
    double total = 0;
    for (size_t i = 0; i < feeds.size(); ++i) {
        auto out =
            with_context("while running " + r.name(), [&] { return r.infer(as_map(feeds[i])); });
        if (i == 0) {
            log_info("---- Inference Input(s) ----\n{}", metadata_text(feeds[i]));
            log_info("---- Inference Output(s) ----\n{}", metadata_text(out));
        }
        total += r.last_inference_time();
        times->push_back(r.last_inference_time());
        result.iterations.push_back(std::move(out));
        show_progress(r.name(), i + 1, feeds.size());
    }
    size_t runs = feeds.size();
    for (; total < min_seconds && !feeds.empty(); ++runs) {  // --duration: timed, not compared
        r.infer(as_map(feeds[runs % feeds.size()]));
        total += r.last_inference_time();
    }
    const double ms = total * 1000.0;
    log_info("{} | Completed {} iteration(s) in {:.4g} ms | Average inference time: {:.4g} ms.",
             r.name(), runs, ms, ms / static_cast<double>(std::max<size_t>(runs, 1)));
    return result;
}

data::RunResults to_data_results(const std::vector<compare::RunResult>& runs,
                                 const std::vector<std::vector<double>>& times) {
    data::RunResults out;
    for (size_t r = 0; r < runs.size(); ++r) {
        data::RunnerResults rr{runs[r].runner, {}};
        for (size_t i = 0; i < runs[r].iterations.size(); ++i) {
            std::optional<double> t;
            if (r < times.size() && i < times[r].size()) t = times[r][i];
            rr.iterations.push_back(
                data::IterationResult{runs[r].iterations[i], t, runs[r].runner});
        }
        out.runners.push_back(std::move(rr));
    }
    return out;
}

std::vector<compare::RunResult> from_data_results(const data::RunResults& r) {
    std::vector<compare::RunResult> out;
    for (const auto& rr : r.runners) {
        compare::RunResult c{rr.runner_name, {}};
        for (const auto& it : rr.iterations) c.iterations.push_back(it.outputs);
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace pg::cli
