// Helpers for the hostile-input CLI tests: a small valid model as a ModelProto to corrupt, raw
// file writing, `polygraph inspect model` runs with the checks every hostile case shares, and an
// inotify watch that proves which files a run opened.
#pragma once

#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "onnx/model_io.h"
#include "onnx/onnx.pb.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace pg::test {

// 1 when built with AddressSanitizer, which reserves terabytes of address space: memory limits
// (`ulimit -v`) are then off.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kSanitized = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr long kSanitized = 1;
#else
constexpr long kSanitized = 0;
#endif
#else
constexpr long kSanitized = 0;
#endif

// Memory limit for runs that must not allocate what a lying header asks for (0 = none).
constexpr long kLimitKib = kSanitized ? 0 : 512 * 1024;

// x[1,4] -> Mul(x, w) "mul" -> mul_out -> Relu "relu" -> relu_out (graph output); w = float[4].
inline std::unique_ptr<ir::Model> hostile_base_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 4});
    ir::Value* w = b.constant_f32("w", {4}, {1, 2, 3, 4});
    ir::Value* y = b.op("Mul", {x, w}, {}, "mul");
    b.output(b.op("Relu", {y}, {}, "relu"), DataType::kFloat32, {1, 4});
    return m;
}

// The base model as a protobuf message, ready to be corrupted.
inline onnxpb::ModelProto hostile_base_proto() {
    onnxpb::ModelProto mp;
    EXPECT_TRUE(mp.ParseFromString(onnx::serialize_model(*hostile_base_model())));
    return mp;
}

inline void write_raw(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(f.good()) << path;
}

inline std::string read_raw(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

inline std::string write_proto(const onnxpb::ModelProto& mp, const std::string& path) {
    write_raw(path, mp.SerializeAsString());
    return path;
}

inline onnxpb::ModelProto read_proto(const std::string& path) {
    onnxpb::ModelProto mp;
    EXPECT_TRUE(mp.ParseFromString(read_raw(path))) << path;
    return mp;
}

// Runs `polygraph inspect model path` (optionally under `ulimit -v kib`) and checks that it ended
// with `status` (never by a signal or a sanitizer report) and that stderr holds every key word.
inline CliResult expect_rejected(const std::string& path, int status,
                                 const std::vector<std::string>& words, long limit_kib = 0) {
    std::vector<std::string> argv = {polygraph_binary(), "inspect", "model", path};
    if (limit_kib > 0)
        argv.insert(
            argv.begin(),
            {"/bin/sh", "-c", "ulimit -v " + std::to_string(limit_kib) + " && exec \"$@\"", "sh"});
    CliResult r = run_program(argv, 30);
    EXPECT_LT(r.status, 128) << "killed by a signal (crash or hang)\n" << r.all();
    EXPECT_EQ(r.status, status) << r.all();
    EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
    for (const auto& w : words)
        EXPECT_NE(r.err.find(w), std::string::npos) << "no '" << w << "' in:\n" << r.err;
    return r;
}

// Records the names of files opened or read in one folder (not its subfolders) while alive.
class OpenWatch {
  public:
    explicit OpenWatch(const std::string& dir) {
        fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        EXPECT_GE(fd_, 0);
        EXPECT_GE(inotify_add_watch(fd_, dir.c_str(), IN_OPEN | IN_ACCESS), 0) << dir;
    }
    ~OpenWatch() { ::close(fd_); }
    OpenWatch(const OpenWatch&) = delete;
    OpenWatch& operator=(const OpenWatch&) = delete;

    // Names of the files opened or read so far ("." for the folder itself).
    std::vector<std::string> touched() {
        std::vector<std::string> names;
        alignas(inotify_event) char buf[8192];
        for (ssize_t n; (n = ::read(fd_, buf, sizeof buf)) > 0;) {
            for (char* p = buf; p < buf + n;) {
                auto* e = reinterpret_cast<inotify_event*>(p);
                names.push_back(e->len ? std::string(e->name) : std::string("."));
                p += sizeof(inotify_event) + e->len;
            }
        }
        return names;
    }

  private:
    int fd_ = -1;
};

}  // namespace pg::test
