// run_after: how a model's multi-thread run time depends on what the process did just before
// the run. One session of MODEL (N threads, default 2) is timed while, between its runs, the
// process does one of these (all in one process, interleaved run by run, so that a drift of the
// machine falls on every case alike):
//   same      nothing (back-to-back runs, as interpreter_bench's blocks)
//   one       a 1-thread run of MODEL (its own session)
//   pool      an N-thread run of MODEL by a second session on the same thread pool
//   own-pool  an N-thread run of MODEL by a second session with a pool of its own
//   other     an N-thread run of --other MODEL2 on the same pool (when given)
//   idle      a sleep as long as a run (every thread idle)
//   spin      a busy loop on the calling thread as long as a run (no memory traffic)
// It prints each case's median wall time of the timed session and its ratio to `same`. On the
// 2-core VM of sessions 21-23 the cases split in two (docs/performance.md, session 23).
//
// Usage: run_after [--threads N] [--reps N] [--other MODEL2.onnx] MODEL.onnx
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "onnx/model_io.h"
#include "random_feeds.h"
#include "runtime/session.h"

namespace {

using pg::runtime::Session;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Case {
    std::string name;
    std::function<void()> between;  // what the process does before each timed run
    std::vector<double> ms;
};

struct Options {
    int threads = 2, reps = 30;
    std::string model, other;
};

// The cases for `o`, their sessions kept alive in `keep`; `run_ms` is the length of one timed
// run (idle and spin last as long).
std::vector<Case> make_cases(const Options& o, const pg::ir::Model& model,
                             const pg::ir::Model* other,
                             const std::shared_ptr<pg::ThreadPool>& pool,
                             std::vector<std::unique_ptr<Session>>& keep,
                             const pg::runtime::Feeds& feeds, const pg::runtime::Feeds& other_feeds,
                             const double& run_ms) {
    auto session = [&](const pg::ir::Model& m, int threads, std::shared_ptr<pg::ThreadPool> p) {
        pg::runtime::SessionOptions so;
        so.threads = threads, so.pool = std::move(p);
        keep.push_back(std::make_unique<Session>(m, so));
        return keep.back().get();
    };
    Session* one = session(model, 1, nullptr);
    Session* same_pool = session(model, o.threads, pool);
    Session* own_pool = session(model, o.threads, nullptr);
    std::vector<Case> cases = {
        {"same", [] {}, {}},
        {"one", [=, &feeds] { one->run(feeds); }, {}},
        {"pool", [=, &feeds] { same_pool->run(feeds); }, {}},
        {"own-pool", [=, &feeds] { own_pool->run(feeds); }, {}},
        {"idle",
         [&run_ms] {
             std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(run_ms));
         },
         {}},
        {"spin",
         [&run_ms] {
             const auto t0 = Clock::now();
             while (ms_since(t0) < run_ms) {
             }
         },
         {}},
    };
    if (other) {
        Session* s = session(*other, o.threads, pool);
        cases.push_back({"other", [=, &other_feeds] { s->run(other_feeds); }, {}});
    }
    return cases;
}

void report(const Options& o) {
    const auto model = pg::onnx::load_model(o.model);
    const auto other = o.other.empty() ? nullptr : pg::onnx::load_model(o.other);
    const pg::runtime::Feeds feeds = pg::bench::random_feeds(*model);
    const pg::runtime::Feeds other_feeds =
        other ? pg::bench::random_feeds(*other) : pg::runtime::Feeds{};
    auto pool = std::make_shared<pg::ThreadPool>(o.threads);
    pg::runtime::SessionOptions so;
    so.pool = pool;
    Session timed(*model, so);
    double run_ms = 0;
    timed.run(feeds);
    {
        const auto t0 = Clock::now();
        timed.run(feeds);
        run_ms = ms_since(t0);
    }
    std::vector<std::unique_ptr<Session>> keep;
    std::vector<Case> cases =
        make_cases(o, *model, other.get(), pool, keep, feeds, other_feeds, run_ms);
    for (int r = -1; r < o.reps; ++r)
        for (Case& c : cases) {  // each case: three timed runs, each after its `between`
            for (int k = 0; k < 3; ++k) {
                c.between();
                const auto t0 = Clock::now();
                timed.run(feeds);
                if (r >= 0) c.ms.push_back(ms_since(t0));
            }
        }
    std::printf("%s, %d threads, median of %d runs per case\n", o.model.c_str(), o.threads,
                3 * o.reps);
    const double base = median(cases[0].ms);
    for (const Case& c : cases)
        std::printf("  %-9s %8.3f ms  %5.3f\n", c.name.c_str(), median(c.ms), median(c.ms) / base);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc)
            o.threads = std::max(2, std::atoi(argv[++i]));
        else if (a == "--reps" && i + 1 < argc)
            o.reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--other" && i + 1 < argc)
            o.other = argv[++i];
        else if (o.model.empty() && a.rfind("--", 0) != 0)
            o.model = a;
        else {
            std::fprintf(stderr,
                         "usage: %s [--threads N] [--reps N] [--other MODEL2.onnx] MODEL.onnx\n",
                         argv[0]);
            return 2;
        }
    }
    if (o.model.empty()) {
        std::fprintf(stderr,
                     "usage: %s [--threads N] [--reps N] [--other MODEL2.onnx] MODEL.onnx\n",
                     argv[0]);
        return 2;
    }
    try {
        report(o);
    } catch (const pg::Error& e) {
        std::fprintf(stderr, "run_after: %s\n", e.what());
        return 1;
    }
    return 0;
}
