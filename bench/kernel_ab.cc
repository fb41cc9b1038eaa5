// kernel_ab: one kernel switch measured inside whole models. Each model runs in the reference
// session with the switch on and off in alternation, run by run, in one process, so that the
// shared machine's drift (which moves separate runs by 10-50 %) hits both sides alike (the two
// sessions share one thread pool, so neither side's idle workers spin beside the other's run); it
// prints both medians and on / off. This is how a fast path's effect in a model is measured
// (docs/performance.md); the models come from `interpreter_bench --save DIR`. The machine's
// cross-core read time (cross_core.h) is printed before and after.
//
// Usage: kernel_ab --switch NAME [--threads N] [--reps N] MODEL.onnx...
//   NAME: winograd (ops::set_conv_winograd), filters_once (ops::set_winograd_filters_once),
//   maxpool (ops::set_separable_max_pool), gemv (ops::set_gemv_row_blocks), rowvec
//   (ops::set_gemm_rowvec), static (ops::set_gemm_direct_static), rowbases
//   (ops::set_gemm_direct_row_bases), bstrips (ops::set_gemm_direct_b_strips), nchwc_winograd
//   (ops::set_nchwc_winograd), wino_filters (ops::set_nchwc_winograd_transposed_filters),
//   wino_prefetch
//   (ops::set_nchwc_winograd_input_prefetch), wino_out (ops::set_nchwc_winograd_output_prefetch),
//   in_prefetch (ops::set_nchwc_input_prefetch), group_pack (ops::set_nchwc_group_pack),
//   pack_ahead (ops::set_pack_prefetch_ahead),
//   unblock_groups (ops::set_nchwc_unblock_groups), conv_out (ops::set_nchwc_output_prefetch),
//   dw_out (ops::set_depthwise_nchwc_output_prefetch), dw_stream
//   (ops::set_depthwise_nchwc_stream_stores), dw_bands (ops::set_depthwise_nchwc_row_bands),
//   pool_stream (ops::set_nchwc_pool_stream_stores), dw_edges (ops::set_depthwise_nchwc_edges),
//   a_ahead (ops::set_gemm_direct_a_ahead), blocked_dw (ops::set_blocked_depthwise),
//   dw_plane_epilogue (ops::set_depthwise_plane_epilogue), wino_stream
//   (ops::set_nchwc_winograd_stream_stores), prefetch (the five together), pack_buffer
//   (ops::set_nchwc_thread_pack_buffer), align (set_aligned_buffers), affine
//   (ops::set_affine_parts), steal (ops::set_steal_tails), late_yield (set_pool_late_yield),
//   rnn_avx512 (ops::rnn_limit_isa: AVX-512 or AVX2 recurrent products), and the plan-time
//   switches,
//   for which each side has a session of its own: shuffle (runtime::set_fuse_channel_shuffle),
//   concat (runtime::set_fuse_concat_in_place), nchwc (runtime::set_nchwc_layout),
//   cached_for_pools (runtime::set_nchwc_cached_for_pools), fold_averages
//   (runtime::set_nchwc_fold_global_averages),
//   transposes (runtime::set_fuse_matmul_transposes), scaled_softmax
//   (runtime::set_fuse_scaled_softmax), scaled_rows (ops::set_softmax_scaled_rows). --threads N
//   (default 2), --reps N runs per side (default 30). --steps N: the runs time each step
//   (Session::run_timed) and the N steps whose median time moved most (in ms, either way) are
//   listed under the model, by the name of the step's first node: a change to one kernel shows
//   there even when the whole model's drift hides it. Inputs are uniform in [-1, 1) for float32,
//   zero otherwise, with symbolic dims set to 1.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/aligned.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "cross_core.h"
#include "onnx/model_io.h"
#include "ops/conv_winograd.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_kernels.h"
#include "ops/nchwc.h"
#include "ops/nchwc_winograd.h"
#include "ops/pool_kernels.h"
#include "ops/rnn_kernels.h"
#include "ops/softmax_fused.h"
#include "random_feeds.h"
#include "runtime/session.h"

namespace {

using Switch = std::function<bool(bool)>;  // sets the switch, returns its previous value

const std::map<std::string, Switch>& switches() {
    static const std::map<std::string, Switch> s = {
        {"winograd", [](bool on) { return pg::ops::set_conv_winograd(on); }},
        {"filters_once", [](bool on) { return pg::ops::set_winograd_filters_once(on); }},
        {"shuffle", [](bool on) { return pg::runtime::set_fuse_channel_shuffle(on); }},
        {"maxpool", [](bool on) { return pg::ops::set_separable_max_pool(on); }},
        {"gemv", [](bool on) { return pg::ops::set_gemv_row_blocks(on); }},
        {"rowvec", [](bool on) { return pg::ops::set_gemm_rowvec(on); }},
        {"static", [](bool on) { return pg::ops::set_gemm_direct_static(on); }},
        {"concat", [](bool on) { return pg::runtime::set_fuse_concat_in_place(on); }},
        {"nchwc", [](bool on) { return pg::runtime::set_nchwc_layout(on); }},
        {"plain_out", [](bool on) { return pg::runtime::set_nchwc_plain_outputs(on); }},
        {"cached_for_pools", [](bool on) { return pg::runtime::set_nchwc_cached_for_pools(on); }},
        {"fold_averages", [](bool on) { return pg::runtime::set_nchwc_fold_global_averages(on); }},
        {"transposes", [](bool on) { return pg::runtime::set_fuse_matmul_transposes(on); }},
        {"scaled_softmax", [](bool on) { return pg::runtime::set_fuse_scaled_softmax(on); }},
        {"scaled_rows", [](bool on) { return pg::ops::set_softmax_scaled_rows(on); }},
        {"align", [](bool on) { return pg::set_aligned_buffers(on); }},
        {"rowbases", [](bool on) { return pg::ops::set_gemm_direct_row_bases(on); }},
        {"bstrips", [](bool on) { return pg::ops::set_gemm_direct_b_strips(on); }},
        {"nchwc_winograd", [](bool on) { return pg::ops::set_nchwc_winograd(on); }},
        {"wino_filters",
         [](bool on) { return pg::ops::set_nchwc_winograd_transposed_filters(on); }},
        {"pack_buffer", [](bool on) { return pg::ops::set_nchwc_thread_pack_buffer(on); }},
        {"wino_prefetch", [](bool on) { return pg::ops::set_nchwc_winograd_input_prefetch(on); }},
        {"wino_out", [](bool on) { return pg::ops::set_nchwc_winograd_output_prefetch(on); }},
        {"conv_out", [](bool on) { return pg::ops::set_nchwc_output_prefetch(on); }},
        {"prefetch",  // wino_prefetch, wino_out, conv_out, dw_out and in_prefetch at once
         [](bool on) {
             pg::ops::set_nchwc_winograd_input_prefetch(on);
             pg::ops::set_nchwc_winograd_output_prefetch(on);
             pg::ops::set_nchwc_output_prefetch(on);
             pg::ops::set_depthwise_nchwc_output_prefetch(on);
             return pg::ops::set_nchwc_input_prefetch(on);
         }},
        {"dw_out", [](bool on) { return pg::ops::set_depthwise_nchwc_output_prefetch(on); }},
        {"in_prefetch", [](bool on) { return pg::ops::set_nchwc_input_prefetch(on); }},
        {"group_pack", [](bool on) { return pg::ops::set_nchwc_group_pack(on); }},
        {"pack_ahead", [](bool on) { return pg::ops::set_pack_prefetch_ahead(on); }},
        {"unblock_groups", [](bool on) { return pg::ops::set_nchwc_unblock_groups(on); }},
        {"late_yield", [](bool on) { return pg::set_pool_late_yield(on); }},
        {"steal", [](bool on) { return pg::ops::set_steal_tails(on); }},
        {"balanced_groups", [](bool on) { return pg::ops::set_nchwc_balanced_groups(on); }},
        {"dw_stream", [](bool on) { return pg::ops::set_depthwise_nchwc_stream_stores(on); }},
        {"pool_stream", [](bool on) { return pg::ops::set_nchwc_pool_stream_stores(on); }},
        {"wino_stream", [](bool on) { return pg::ops::set_nchwc_winograd_stream_stores(on); }},
        {"blocked_dw", [](bool on) { return pg::ops::set_blocked_depthwise(on); }},
        {"dw_plane_epilogue", [](bool on) { return pg::ops::set_depthwise_plane_epilogue(on); }},
        {"a_ahead", [](bool on) { return pg::ops::set_gemm_direct_a_ahead(on); }},
        {"dw_edges", [](bool on) { return pg::ops::set_depthwise_nchwc_edges(on); }},
        {"dw_bands", [](bool on) { return pg::ops::set_depthwise_nchwc_row_bands(on); }},
        {"pool_parts", [](bool on) { return pg::ops::set_nchwc_pool_parts(on); }},
        {"affine", [](bool on) { return pg::ops::set_affine_parts(on); }},
        {"rnn_avx512",
         [](bool on) {
             const auto isa = on ? pg::ops::RnnIsa::kAvx512 : pg::ops::RnnIsa::kAvx2;
             return pg::ops::rnn_limit_isa(isa) == pg::ops::RnnIsa::kAvx512;
         }},
    };
    return s;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// Each step's times (ms) by the name of its first node, over the runs of one side.
using StepTimes = std::map<std::string, std::vector<double>>;

// The `top` steps whose medians differ most between the sides, with both and on / off.
void print_steps(const StepTimes& off, const StepTimes& on, int top) {
    std::vector<std::tuple<double, std::string, double, double>> rows;
    for (const auto& [name, t_off] : off) {
        const auto it = on.find(name);
        if (it == on.end()) continue;
        const double a = median(t_off), b = median(it->second);
        rows.emplace_back(std::abs(b - a), name, a, b);
    }
    std::sort(rows.rbegin(), rows.rend());
    for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(top); ++i) {
        const auto& [d, name, a, b] = rows[i];
        std::printf("|   step %-33s | %9.4f | %9.4f | %6.3f |\n", name.c_str(), a, b, b / a);
    }
}

// Runs `path` reps times per side, alternating, after one warm-up run per side.
void measure(const std::string& path, const Switch& set, int threads, int reps, int steps) {
    const auto model = pg::onnx::load_model(path);
    pg::runtime::SessionOptions so;
    so.threads = threads;
    // One pool for both sides: a pool of each would leave one side's worker spinning beside the
    // other side's run.
    so.pool = std::make_shared<pg::ThreadPool>(threads);
    const bool before = set(false);
    pg::runtime::Session off_session(*model, so);  // each side planned with its setting
    set(true);
    pg::runtime::Session on_session(*model, so);
    const pg::runtime::Feeds feeds = pg::bench::random_feeds(*model);
    std::vector<double> ms[2];
    StepTimes step_ms[2];
    std::vector<pg::runtime::Session::StepTime> times;
    for (int r = -1; r < reps; ++r) {
        for (int side = 0; side < 2; ++side) {
            set(side == 1);
            pg::runtime::Session& session = side == 1 ? on_session : off_session;
            times.clear();
            const auto t0 = std::chrono::steady_clock::now();
            if (steps > 0)
                session.run_timed(feeds, times);
            else
                session.run(feeds);
            const auto t1 = std::chrono::steady_clock::now();
            if (r < 0) continue;
            ms[side].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            for (const auto& t : times)
                if (!t.reorder) step_ms[side][t.node->name].push_back(t.ms);
        }
    }
    set(before);
    const double off = median(ms[0]), on = median(ms[1]);
    std::printf("| %-40s | %9.3f | %9.3f | %6.3f |\n", path.c_str(), off, on, on / off);
    if (steps > 0) print_steps(step_ms[0], step_ms[1], steps);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    std::string name;
    int threads = 2, reps = 30, steps = 0;
    std::vector<std::string> models;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--switch" && i + 1 < argc)
            name = argv[++i];
        else if (a == "--threads" && i + 1 < argc)
            threads = std::max(1, std::atoi(argv[++i]));
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--steps" && i + 1 < argc)
            steps = std::max(0, std::atoi(argv[++i]));
        else
            models.push_back(a);
    }
    const auto it = switches().find(name);
    if (it == switches().end() || models.empty()) {
        std::fprintf(
            stderr,
            "usage: %s --switch winograd [--threads N] [--reps N] [--steps N] MODEL.onnx...\n",
            argv[0]);
        return 2;
    }
    std::printf("switch %s, threads %d, median of %d runs per side, interleaved\n", name.c_str(),
                threads, reps);
    std::printf("before: %s\n",
                pg::bench::cross_core_text(pg::bench::measure_cross_core()).c_str());
    std::printf("| %-40s | %9s | %9s | %6s |\n", "model", "off ms", "on ms", "on/off");
    try {
        for (const std::string& m : models) measure(m, it->second, threads, reps, steps);
    } catch (const pg::Error& e) {
        std::fprintf(stderr, "kernel_ab: %s\n", e.what());
        return 1;
    }
    std::printf("after: %s\n", pg::bench::cross_core_text(pg::bench::measure_cross_core()).c_str());
    return 0;
}
