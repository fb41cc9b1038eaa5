// Writing Polygraphy's JSON files byte-compatibly: see polygraphy_json.h.
#include "base/error.h"
#include "data/base64.h"
#include "data/npy.h"
#include "data/polygraphy_json.h"

namespace pg::data {

namespace {

void write_feed(JsonStream& json, const runners::NamedTensors& feed) {
    json.begin_object();
    for (const auto& [name, t] : feed) {
        json.key(name);
        write_ndarray(json, name, t);
    }
    json.end();
}

// Runs `body` with a JsonStream that appends to a string; returns the text.
template <typename Body>
std::string to_text(Body body) {
    std::string out;
    JsonStream json([&out](std::string_view s) { out.append(s); });
    body(json);
    return out;
}

}  // namespace

void write_ndarray(JsonStream& json, const std::string& name, const Tensor& t) {
    json.begin_object();
    json.key("array");
    json.raw("\"" + base64_encode(npy_encode(numpy_compatible(t, name))) + "\"");
    json.key("polygraphy_class");
    json.string("ndarray");
    json.end();
}

std::string inputs_to_json(const FeedList& feeds) {
    return to_text([&](JsonStream& json) {
        json.begin_array();
        for (const auto& feed : feeds) write_feed(json, feed);
        json.end();
    });
}

std::string run_results_to_json(const RunResults& results) {
    std::string out;
    RunResultsStream stream([&out](std::string_view s) { out.append(s); });
    for (const auto& r : results.runners) {
        stream.begin_runner(r.runner_name);
        for (const auto& it : r.iterations) stream.add_iteration(it);
    }
    stream.finish();
    return out;
}

void save_inputs_json(const std::string& path, const FeedList& feeds) {
    AtomicFile f(path);
    JsonStream json([&f](std::string_view s) { f.write(s.data(), s.size()); });
    json.begin_array();
    for (const auto& feed : feeds) write_feed(json, feed);
    json.end();
    f.commit();
}

void save_run_results_json(const std::string& path, const RunResults& results) {
    RunResultsWriter w(path);
    for (const auto& r : results.runners) {
        w.begin_runner(r.runner_name);
        for (const auto& it : r.iterations) w.add_iteration(it);
    }
    w.finish();
}

}  // namespace pg::data
