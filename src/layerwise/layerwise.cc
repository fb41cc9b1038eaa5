#include "layerwise/layerwise.h"

#include <set>
#include <thread>

#include "base/error.h"
#include "layerwise/tensor_buffer.h"

namespace pg::layerwise {

namespace {

using runners::NamedTensors;
using runners::Runner;
using Feeds = std::map<std::string, Tensor>;

// Producer side of a streaming pair: pushes wanted tensors into the buffer.
struct BufferSink : runners::TensorSink {
    TensorBuffer& buffer;
    const std::set<std::string>& wanted;
    BufferSink(TensorBuffer& b, const std::set<std::string>& w) : buffer(b), wanted(w) {}
    void on_tensor(const std::string& producer, const std::string& name, const Tensor& t) override {
        if (wanted.count(name)) buffer.put(name, producer, t);
    }
};

// Consumer side: pairs each wanted tensor of B with A's from the buffer.
struct PairingSink : runners::TensorSink {
    TensorBuffer& buffer;
    const std::set<std::string>& wanted;
    PairSink& out;
    Stats& stats;
    PairingSink(TensorBuffer& b, const std::set<std::string>& w, PairSink& o, Stats& s)
        : buffer(b), wanted(w), out(o), stats(s) {}
    void on_tensor(const std::string& producer, const std::string& name, const Tensor& t) override {
        if (!wanted.count(name)) return;
        Tensor a;
        std::string pa;
        if (!buffer.take(name, &a, &pa)) {
            stats.missing.push_back(name);
            return;
        }
        out.on_pair(producer.empty() ? pa : producer, name, a, t);
        ++stats.pairs;
    }
};

Stats both_streaming(Runner& a, Runner& b, const Feeds& feeds, const Options& o, PairSink& sink) {
    const std::set<std::string> wanted(o.tensors.begin(), o.tensors.end());
    TensorBuffer buffer(o.memory_budget);
    Stats stats;
    std::thread producer([&] {
        try {
            BufferSink s(buffer, wanted);
            a.infer_streaming(feeds, s);
            buffer.finish(nullptr);
        } catch (...) {
            buffer.finish(std::current_exception());
        }
    });
    try {
        PairingSink s(buffer, wanted, sink, stats);
        b.infer_streaming(feeds, s);
    } catch (...) {
        buffer.cancel();
        producer.join();
        throw;
    }
    buffer.cancel();  // B is done: anything A still produces has no partner
    producer.join();
    stats.peak_buffered = buffer.peak();
    return stats;
}

}  // namespace

Stats compare_marked(Runner& a, Runner& b, const Feeds& feeds, const Options& o,
                     PairSink& sink);  // marked_pair.cc

Stats compare_layerwise(Runner& a, Runner& b, const Feeds& feeds, const Options& o,
                        PairSink& sink) {
    if (a.can_stream() && b.can_stream()) return both_streaming(a, b, feeds, o, sink);
    return compare_marked(a, b, feeds, o, sink);
}

}  // namespace pg::layerwise
