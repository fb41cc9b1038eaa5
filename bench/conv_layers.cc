// Benchmark: single float32 Conv layers (the shapes ResNet-50, VGG, DenseNet, Inception and the
// MobileNet-style zoo model spend their time in) on the reference interpreter and on ONNX
// Runtime, 2 threads each (--threads N): the best of three alternating rounds' medians of --reps
// runs. Prints per layer both times, the reference's GFLOP/s and the time ratio, then the geometric
// mean of the ratios: where the interpreter's convolution loses time to ONNX Runtime, layer by
// layer. --chain N runs N copies of each layer that keeps its shape (cin == cout, stride 1), each
// with its own weights, and reports the time per layer: the weights then come from memory, as
// inside a whole model, instead of staying in the caches. --bn follows each Conv with a
// BatchNormalization and a Relu, as in the CNNs (the reference fuses them into the Conv's
// epilogue).
//
// --save DIR also writes each layer's model to DIR/<layer>.onnx (spaces and symbols as '_'),
// for kernel_ab and perf.
//
// Usage: bench_conv_layers [--reps N] [--threads N] [--chain N] [--bn] [--only SUBSTRING]
//                          [--save DIR]
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "runners/onnxrt_runner.h"
#include "runners/ref_runner.h"

namespace {

using pg::Tensor;
using Feeds = std::map<std::string, Tensor>;
using Clock = std::chrono::steady_clock;

struct Layer {
    const char* name;
    int64_t cin, cout, kernel, stride, hw, group;
};

const Layer kLayers[] = {
    {"resnet stem 7x7/2", 3, 64, 7, 2, 224, 1},
    {"resnet 1x1 64->64 @56", 64, 64, 1, 1, 56, 1},
    {"resnet 3x3 64 @56", 64, 64, 3, 1, 56, 1},
    {"resnet 1x1 64->256 @56", 64, 256, 1, 1, 56, 1},
    {"resnet 1x1 256->64 @56", 256, 64, 1, 1, 56, 1},
    {"resnet 3x3 128 @28", 128, 128, 3, 1, 28, 1},
    {"resnet 1x1 512->128 @28", 512, 128, 1, 1, 28, 1},
    {"resnet 3x3 256 @14", 256, 256, 3, 1, 14, 1},
    {"resnet 1x1 1024->256 @14", 1024, 256, 1, 1, 14, 1},
    {"resnet 3x3 512 @7", 512, 512, 3, 1, 7, 1},
    {"resnet 1x1 512->2048 @7", 512, 2048, 1, 1, 7, 1},
    {"resnet 1x1 2048->512 @7", 2048, 512, 1, 1, 7, 1},
    {"resnet 3x3/2 128 @56", 128, 128, 3, 2, 56, 1},
    {"resnet 3x3/2 512 @14", 512, 512, 3, 2, 14, 1},
    {"vgg 3x3 3->64 @224", 3, 64, 3, 1, 224, 1},
    {"vgg 3x3 64 @224", 64, 64, 3, 1, 224, 1},
    {"vgg 3x3 128 @112", 128, 128, 3, 1, 112, 1},
    {"vgg 3x3 256 @56", 256, 256, 3, 1, 56, 1},
    {"vgg 3x3 512 @28", 512, 512, 3, 1, 28, 1},
    {"vgg 3x3 512 @14", 512, 512, 3, 1, 14, 1},
    {"densenet 3x3 128->32 @28", 128, 32, 3, 1, 28, 1},
    {"densenet 1x1 512->128 @14", 512, 128, 1, 1, 14, 1},
    {"inception 5x5 16->32 @28", 16, 32, 5, 1, 28, 1},
    {"inception 1x1 192->32 @28", 192, 32, 1, 1, 28, 1},
    {"inception 1x1 576->224 @14", 576, 224, 1, 1, 14, 1},
    {"inception 1x1 1024->352 @7", 1024, 352, 1, 1, 7, 1},
    {"squeezenet stem 3x3/2", 3, 64, 3, 2, 224, 1},
    {"squeezenet 1x1 16->64 @55", 16, 64, 1, 1, 55, 1},
    {"squeezenet 3x3 48->192 @13", 48, 192, 3, 1, 13, 1},
    {"squeezenet 1x1 512->1000 @13", 512, 1000, 1, 1, 13, 1},
    {"mobilenet dw 3x3 128 @56", 128, 128, 3, 1, 56, 128},
    {"mobilenet dw 3x3/2 256 @56", 256, 256, 3, 2, 56, 256},
    {"mobilenet stem 3x3/2 3->32 @224", 3, 32, 3, 2, 224, 1},
    {"mobilenet dw 3x3 32 @112", 32, 32, 3, 1, 112, 32},
    {"mobilenet 1x1 32->64 @112", 32, 64, 1, 1, 112, 1},
    {"mobilenet dw 3x3/2 64 @112", 64, 64, 3, 2, 112, 64},
    {"mobilenet 1x1 512->512 @14", 512, 512, 1, 1, 14, 1},
    {"mobilenet 1x1 1024->1024 @7", 1024, 1024, 1, 1, 7, 1},
    {"mobilenet dw 3x3 512 @14", 512, 512, 3, 1, 14, 512},
    {"shufflenet stem 3x3/2 3->24 @224", 3, 24, 3, 2, 224, 1},
    {"shufflenet g4 1x1 24->112 @56", 24, 112, 1, 1, 56, 4},
    {"shufflenet g4 1x1 136->136 @28", 136, 136, 1, 1, 28, 4},
    {"shufflenet g4 1x1 272->272 @14", 272, 272, 1, 1, 14, 4},
    {"shufflenet g4 1x1 544->544 @7", 544, 544, 1, 1, 7, 4},
    {"shufflenet dw 3x3 136 @28", 136, 136, 3, 1, 28, 136},
    {"shufflenet dw 3x3/2 272 @28", 272, 272, 3, 2, 28, 272},
    {"shufflenet dw 3x3 272 @14", 272, 272, 3, 1, 14, 272},
};

Tensor uniform(std::vector<int64_t> dims, float bound, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-bound, bound);
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return Tensor::from_values(pg::DataType::kFloat32, std::move(dims), v);
}

// Values in [0.5, 1.5): a BatchNormalization's variances.
Tensor positive(std::vector<int64_t> dims, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(0.5f, 1.5f);
    std::vector<float> v(static_cast<size_t>(dims[0]));
    for (float& x : v) x = u(rng);
    return Tensor::from_values(pg::DataType::kFloat32, std::move(dims), v);
}

// `chain` copies of the layer in sequence, each with its own weights (chain > 1 needs cin ==
// cout and an unchanged map size): with enough copies the weights no longer fit the caches and
// come from memory on every run, as they do inside a whole model.
std::unique_ptr<pg::ir::Model> conv_model(const Layer& l, int chain, bool bn, std::mt19937& rng) {
    using pg::ir::Attribute;
    auto model = pg::ir::new_model(17, "conv");
    pg::ir::GraphBuilder b(*model->graph);
    auto* y = b.input("x", pg::DataType::kFloat32, {1, l.cin, l.hw, l.hw});
    const int64_t fan_in = l.cin / l.group * l.kernel * l.kernel;
    const int64_t p = l.kernel / 2;
    for (int i = 0; i < chain; ++i) {
        const std::string n = std::to_string(i);
        auto* w = b.constant("w" + n, uniform({l.cout, l.cin / l.group, l.kernel, l.kernel},
                                              std::sqrt(3.0f / static_cast<float>(fan_in)), rng));
        auto* bias = b.constant("b" + n, uniform({l.cout}, 0.1f, rng));
        y = b.op("Conv", {y, w, bias},
                 pg::ir::attrs(Attribute::make_ints("kernel_shape", {l.kernel, l.kernel}),
                               Attribute::make_ints("strides", {l.stride, l.stride}),
                               Attribute::make_ints("pads", {p, p, p, p}),
                               Attribute::make_int("group", l.group)));
        if (!bn) continue;
        pg::ir::Value* p[4];
        const char* names[] = {"scale", "shift", "mean", "var"};
        for (int k = 0; k < 4; ++k)
            p[k] = b.constant(names[k] + n, k == 3 ? positive({l.cout}, rng)
                                                   : uniform({l.cout}, k == 0 ? 2.0f : 0.5f, rng));
        y = b.op("Relu", {b.op("BatchNormalization", {y, p[0], p[1], p[2], p[3]})});
    }
    const int64_t out = (l.hw + 2 * p - l.kernel) / l.stride + 1;
    b.output(y, pg::DataType::kFloat32, {1, l.cout, out, out});
    return model;
}

// A layer's name as a file name: letters, digits, '-' and '.' kept, anything else '_'.
std::string file_name(const std::string& name) {
    std::string out = name;
    for (char& ch : out)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.') ch = '_';
    return out;
}

double median_ms(pg::runners::Runner& r, const Feeds& feeds, int reps) {
    std::vector<double> ms;
    r.infer(feeds);  // warm-up
    for (int i = 0; i < reps; ++i) {
        const auto start = Clock::now();
        r.infer(feeds);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 15, threads = 2, chain = 1;
    bool bn = false;
    std::string only, save;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--threads" && i + 1 < argc)
            threads = std::max(1, std::atoi(argv[++i]));
        else if (a == "--chain" && i + 1 < argc)
            chain = std::max(1, std::atoi(argv[++i]));
        else if (a == "--bn")
            bn = true;
        else if (a == "--only" && i + 1 < argc)
            only = argv[++i];
        else if (a == "--save" && i + 1 < argc)
            save = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: %s [--reps N] [--threads N] [--chain N] [--bn] [--only SUBSTRING] "
                         "[--save DIR]\n",
                         argv[0]);
            return 2;
        }
    }
    const auto dir =
        std::filesystem::temp_directory_path() / ("pg_conv_layers_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::printf("| layer                        |  ref ms |  ORT ms | ref GFLOP/s | ratio |\n");
    double log_sum = 0;
    int count = 0;
    std::mt19937 rng(7);
    for (const Layer& l : kLayers) {
        if (!only.empty() && std::string(l.name).find(only) == std::string::npos) continue;
        const int64_t out_hw = (l.hw + 2 * (l.kernel / 2) - l.kernel) / l.stride + 1;
        if (chain > 1 && (l.cin != l.cout || out_hw != l.hw)) continue;  // not chainable
        auto model = conv_model(l, chain, bn, rng);
        const std::string path = (dir / "conv.onnx").string();
        pg::onnx::save_model(*model, path);
        if (!save.empty()) pg::onnx::save_model(*model, save + "/" + file_name(l.name) + ".onnx");
        Feeds feeds{{"x", uniform({1, l.cin, l.hw, l.hw}, 1.0f, rng)}};
        pg::runners::RefRunnerOptions ref_opts;
        ref_opts.session.threads = threads;
        pg::runners::RefRunner ref(*model, ref_opts);
        pg::runners::OnnxRtOptions ort_opts;
        ort_opts.intra_op_threads = threads;
        double ref_ms = 0, ort_ms = 0;
        try {
            pg::runners::OnnxRtRunner ort(path, ort_opts);
            // Three alternating rounds, the best median of each: load from other processes
            // (a shared machine) inflates a round, never deflates it.
            ref_ms = ort_ms = 1e300;
            for (int round = 0; round < 3; ++round) {
                ref_ms = std::min(ref_ms, median_ms(ref, feeds, reps));
                std::this_thread::sleep_for(std::chrono::milliseconds(150));
                ort_ms = std::min(ort_ms, median_ms(ort, feeds, reps));
                std::this_thread::sleep_for(std::chrono::milliseconds(150));
            }
        } catch (const pg::Error& e) {
            std::fprintf(stderr, "%s: %s\n", l.name, e.what());
            return 1;
        }
        ref_ms /= chain, ort_ms /= chain;  // per layer
        const double flop =
            2.0 * l.cout * out_hw * out_hw * (l.cin / l.group) * l.kernel * l.kernel;
        std::printf("| %-28s | %7.3f | %7.3f | %11.1f | %5.2f |\n", l.name, ref_ms, ort_ms,
                    flop / ref_ms / 1e6, ref_ms / ort_ms);
        std::fflush(stdout);
        log_sum += std::log(ref_ms / ort_ms);
        ++count;
    }
    std::filesystem::remove_all(dir);
    if (count) std::printf("geometric mean ratio: %.2f\n", std::exp(log_sum / count));
    return 0;
}
