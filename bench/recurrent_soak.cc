// recurrent_soak: a soak test of the recurrent ops' thread teams (base/team.h, run_steps), which
// a unit test cannot cover: a race there shows once in about a million runs. One-node RNN, GRU
// (both linear_before_reset modes) and LSTM models with hidden 192 (large enough to run on a
// team) run back to back, with N threads, against each model's 1-thread output, bit for bit.
// A watchdog thread aborts with a message when no run finishes for 10 s (a hang), and a
// mismatch exits 1. Session 7 found the admission race this way (docs/performance.md).
//
// Usage: recurrent_soak [--seconds S] [--threads N]   (defaults 60 and 2; exits 0 when clean)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ir/builder.h"
#include "ir/model.h"
#include "runtime/session.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
    std::string op;
    bool lbr;
};

std::unique_ptr<pg::ir::Model> one_node(const Case& c, pg::runtime::Feeds& feeds) {
    const int64_t H = 192, I = 64, S = 32, G = c.op == "RNN" ? 1 : c.op == "GRU" ? 3 : 4;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const std::vector<std::vector<int64_t>> dims = {
        {S, 1, I}, {1, G * H, I}, {1, G * H, H}, {1, 2 * G * H}};
    const float scale[] = {1.0f, 0.2f, 0.1f, 0.1f};
    auto m = pg::ir::new_model(14);
    pg::ir::GraphBuilder b(*m->graph);
    std::vector<pg::ir::Value*> ins;
    for (size_t i = 0; i < dims.size(); ++i) {
        int64_t n = 1;
        for (int64_t d : dims[i]) n *= d;
        std::vector<float> v(static_cast<size_t>(n));
        for (float& x : v) x = scale[i] * u(rng);
        const std::string name = "x" + std::to_string(i);
        ins.push_back(b.input(name, pg::DataType::kFloat32, dims[i]));
        feeds[name] =
            pg::ops::RtValue::of(pg::Tensor::from_values(pg::DataType::kFloat32, dims[i], v));
    }
    std::vector<pg::ir::Attribute> attrs;
    attrs.push_back(pg::ir::Attribute::make_int("hidden_size", H));
    if (c.lbr) attrs.push_back(pg::ir::Attribute::make_int("linear_before_reset", 1));
    pg::ir::Node* n = b.op_multi(c.op, ins, 2, std::move(attrs), "node");
    for (pg::ir::Value* out : n->outputs()) b.output(out);
    return m;
}

bool same(const pg::runtime::Results& a, const pg::runtime::Results& b) {
    for (size_t i = 0; i < a.size(); ++i) {
        const pg::Tensor& x = a[i].second.tensor();
        const pg::Tensor& y = b[i].second.tensor();
        if (x.nbytes() != y.nbytes() || std::memcmp(x.bytes(), y.bytes(), x.nbytes()) != 0)
            return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 60;
    int threads = 2;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--seconds" && i + 1 < argc)
            seconds = std::atof(argv[++i]);
        else if (a == "--threads" && i + 1 < argc)
            threads = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--seconds S] [--threads N]\n", argv[0]);
            return 2;
        }
    }
    std::atomic<long> runs{0};
    std::atomic<bool> finished{false};
    std::thread watchdog([&] {
        long last = -1;
        while (!finished.load()) {
            for (int i = 0; i < 100 && !finished.load(); ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            const long now = runs.load();
            if (!finished.load() && now == last) {
                std::fprintf(
                    stderr, "recurrent_soak: no run finished for 10 s after %ld runs: hang\n", now);
                std::abort();
            }
            last = now;
        }
    });
    const Case cases[] = {{"RNN", false}, {"GRU", false}, {"GRU", true}, {"LSTM", false}};
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    int status = 0;
    while (Clock::now() < end && status == 0) {
        for (const Case& c : cases) {
            pg::runtime::Feeds feeds;
            auto m = one_node(c, feeds);
            pg::runtime::SessionOptions one, many;
            one.threads = 1, many.threads = threads;
            const pg::runtime::Results want = pg::runtime::Session(*m, one).run(feeds);
            pg::runtime::Session s(*m, many);
            for (int r = 0; r < 500; ++r, ++runs)
                if (!same(want, s.run(feeds))) {
                    std::fprintf(stderr,
                                 "recurrent_soak: %s (lbr %d) run %d differs from 1 thread\n",
                                 c.op.c_str(), c.lbr, r);
                    status = 1;
                    break;
                }
        }
    }
    finished = true;
    watchdog.join();
    std::printf("recurrent_soak: %ld runs on %d threads, %s\n", runs.load(), threads,
                status ? "MISMATCH" : "all equal to 1 thread, no hang");
    return status;
}
