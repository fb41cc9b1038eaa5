// Streaming RunResults writer (to a sink or a file): see polygraphy_json.h.
#include "base/error.h"
#include "data/polygraphy_json.h"

namespace pg::data {

namespace {

[[noreturn]] void misuse(const char* what) {
    throw Error(ErrorKind::kInternal, std::string("RunResultsStream: ") + what);
}

}  // namespace

RunResultsStream::RunResultsStream(std::function<void(std::string_view)> sink)
    : json_(std::move(sink)) {
    json_.begin_object();
    json_.key("lst");
    json_.begin_array();
}

void RunResultsStream::begin_runner(const std::string& runner_name) {
    if (finished_ || in_iteration_) misuse("begin_runner inside an iteration or after finish");
    if (in_runner_) end_runner();
    json_.begin_array();
    json_.string(runner_name);
    json_.begin_array();
    runner_ = runner_name;
    in_runner_ = true;
}

void RunResultsStream::end_runner() {
    json_.end();
    json_.end();
    in_runner_ = false;
}

void RunResultsStream::begin_iteration() {
    if (!in_runner_ || in_iteration_) misuse("begin_iteration outside a runner");
    json_.begin_object();
    json_.key("outputs");
    json_.begin_object();
    in_iteration_ = true;
}

void RunResultsStream::add_output(const std::string& name, const Tensor& t) {
    if (!in_iteration_) misuse("add_output outside an iteration");
    json_.key(name);
    json_.begin_object();
    json_.key("values");
    write_ndarray(json_, name, t);
    json_.key("polygraphy_class");
    json_.string("LazyArray");
    json_.end();
}

void RunResultsStream::end_iteration(std::optional<double> runtime,
                                     const std::optional<std::string>& runner_name) {
    if (!in_iteration_) misuse("end_iteration without begin_iteration");
    json_.end();
    json_.key("runtime");
    json_.raw(runtime ? py_json_float(*runtime) : "null");
    json_.key("runner_name");
    json_.string(runner_name.value_or(runner_));
    json_.key("polygraphy_class");
    json_.string("IterationResult");
    json_.end();
    in_iteration_ = false;
}

void RunResultsStream::add_iteration(const IterationResult& it) {
    begin_iteration();
    for (const auto& [name, t] : it.outputs) add_output(name, t);
    end_iteration(it.runtime, it.runner_name);
}

void RunResultsStream::finish() {
    if (finished_ || in_iteration_) misuse("finish inside an iteration or twice");
    if (in_runner_) end_runner();
    json_.end();
    json_.key("polygraphy_class");
    json_.string("RunResults");
    json_.end();
    finished_ = true;
}

RunResultsWriter::RunResultsWriter(const std::string& path)
    : detail::AtomicFileHolder(path),
      RunResultsStream([this](std::string_view s) { file_.write(s.data(), s.size()); }) {}

void RunResultsWriter::finish() {
    RunResultsStream::finish();
    file_.commit();
}

}  // namespace pg::data
