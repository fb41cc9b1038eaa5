#include "support/sweep_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <regex>
#include <stdexcept>

#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/heap.h"
#include "onnx/model_io.h"
#include "runners/ref_runner.h"
#include "support/node_test_data.h"
#include "support/test_paths.h"

// Under the sanitizer build (-DPG_SANITIZE=ON), undefined behaviour ends the process with a stack
// trace instead of a line on stderr: the sweeps' child then fails its test naming the case, as
// an AddressSanitizer report does. Read by UBSan at start-up; unused without it.
extern "C" const char* __ubsan_default_options() {
    return "halt_on_error=1:print_stacktrace=1";
}

namespace pg::test {

namespace fs = std::filesystem;

SweepOutcome run_changed_model(const ir::Model& model, const runtime::Feeds& feeds,
                               const std::function<std::string(const runtime::Results&)>& check) {
    try {
        runtime::SessionOptions opts;
        opts.threads = 1;
        runtime::Session session(model, opts);
        const runtime::Results results = session.run(feeds);
        if (const std::string d = check ? check(results) : ""; !d.empty()) return {true, d};
    } catch (const Error& e) {
        const bool internal = e.kind() == ErrorKind::kInternal;
        return {internal, std::string(error_kind_name(e.kind())) + ": " + e.what()};
    } catch (const std::exception& e) {
        return {true, std::string("exception: ") + e.what()};
    }
    return {false, "ran"};
}

std::optional<std::map<std::string, Tensor>> tensor_feeds(const runtime::Feeds& feeds) {
    std::map<std::string, Tensor> tensors;
    for (const auto& [name, v] : feeds) {
        if (!v.is_tensor()) return std::nullopt;
        tensors[name] = v.tensor();
    }
    return tensors;
}

runners::NamedTensors infer_ref(const ir::Model& model, const std::map<std::string, Tensor>& feeds,
                                bool fp64) {
    runners::RefRunnerOptions opts;
    opts.session.threads = 1;
    opts.fp64 = fp64;
    return runners::RefRunner(model, opts).infer(feeds);
}

SweepOutcome run_as_fp64(const ir::Model& model, const runtime::Feeds& feeds) {
    const auto tensors = tensor_feeds(feeds);
    if (!tensors) return {false, "ran"};
    try {
        infer_ref(model, *tensors, true);
    } catch (const Error& e) {
        const bool internal = e.kind() == ErrorKind::kInternal;
        return {internal, std::string("as fp64: ") + error_kind_name(e.kind()) + ": " + e.what()};
    } catch (const std::exception& e) {
        return {true, std::string("as fp64: exception: ") + e.what()};
    }
    return {false, "ran"};
}

namespace {

int skip_cases = 0;  // in a child that goes on after a crash: the cases the crashed ones ran

}  // namespace

void sweep_phase(FILE* out, const char* name) {
    std::fprintf(out, "phase %s\n", name);
    std::fflush(out);
}

void sweep_case(FILE* out, const std::string& what, const std::function<SweepOutcome()>& run) {
    if (skip_cases > 0) {
        --skip_cases;
        return;
    }
    std::fprintf(out, "start %s\n", what.c_str());
    std::fflush(out);  // the last line names the case when a crash ends the process
    const auto t0 = std::chrono::steady_clock::now();
    SweepOutcome r = run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string kind = r.bug              ? "bug"
                             : !r.kind.empty()    ? r.kind
                             : r.what == "ran"  ? "ran"
                             : r.what == "same" ? "same"
                                                : "refused";
    if (s >= 1.0) r.what += " [" + std::to_string(static_cast<int>(s)) + " s]";  // after `kind`
    std::replace(r.what.begin(), r.what.end(), '\n', ' ');
    std::fprintf(out, "%s %s: %s\n", kind.c_str(), what.c_str(), r.what.c_str());
    std::fflush(out);
}

namespace {

// What a child's lines said about how it ended: the case it started last without an outcome
// ("" when none), that case's phase, and how many cases it started.
struct ChildEnd {
    std::string last, phase;
    int started = 0;
};

// Counts the child's lines from `in` into `tally`.
ChildEnd tally_lines(FILE* in, bool verbose, SweepTally& tally) {
    ChildEnd end;
    for (char line[8192]; std::fgets(line, sizeof line, in);) {
        std::string l(line);
        if (!l.empty() && l.back() == '\n') l.pop_back();
        const size_t space = l.find(' ');
        if (space == std::string::npos) continue;
        const std::string kind = l.substr(0, space), rest = l.substr(space + 1);
        if (kind == "start") {
            end.last = rest;
            end.phase.clear();
            ++end.started;
            continue;
        }
        if (kind == "phase") {
            end.phase = rest;
            continue;
        }
        end.last.clear();
        if (verbose) std::printf("  %s %s\n", kind.c_str(), rest.c_str());
        if (kind == "same") continue;
        ++tally.cases;
        ++tally.kinds[kind];
        tally.ran += kind == "ran";
        if (kind == "bug") tally.failures.push_back(rest);
    }
    return end;
}

// One child running `cases` after skipping the first `skip`; returns how it ended (its exit
// status in `status`).
ChildEnd run_child(const std::function<void(FILE*)>& cases, int skip, uint64_t ceiling,
                   unsigned seconds, bool verbose, SweepTally& tally, int& status) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::close(fds[0]);
        set_memory_ceiling(
            ceiling);      // a change asking for 1e12 values is refused as a user sees it
        ::alarm(seconds);  // a hang ends the child (SIGALRM, 14)
        skip_cases = skip;
        FILE* out = ::fdopen(fds[1], "w");
        cases(out);
        std::fclose(out);
        std::_Exit(0);
    }
    ::close(fds[1]);
    FILE* in = ::fdopen(fds[0], "r");
    const ChildEnd end = tally_lines(in, verbose, tally);
    std::fclose(in);
    ::waitpid(pid, &status, 0);
    return end;
}

std::string how_it_ended(int status) {
    return WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                               : "exit " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

void sweep_isolated(const std::string& test, const std::function<void(FILE*)>& cases,
                    uint64_t ceiling, unsigned seconds, bool verbose, SweepTally& tally,
                    const std::map<std::string, std::string>& crash_kinds) {
    ++tally.tests;
    for (int skip = 0;;) {
        int status = 0;
        const ChildEnd end = run_child(cases, skip, ceiling, seconds, verbose, tally, status);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
        const auto kind = crash_kinds.find(end.phase);
        if (end.last.empty() || kind == crash_kinds.end()) {
            tally.failures.push_back(test + ": the process ended (" + how_it_ended(status) + ")" +
                                     (end.last.empty() ? "" : " while running: " + end.last));
            return;
        }
        if (verbose)
            std::printf("  %s %s: %s\n", kind->second.c_str(), end.last.c_str(),
                        how_it_ended(status).c_str());
        ++tally.cases;
        ++tally.kinds[kind->second];
        skip += end.started;
    }
}

std::vector<fs::path> sweep_test_dirs(const std::string& root, const char* filter) {
    std::vector<fs::path> dirs;
    const std::regex re(filter ? filter : "");
    for (const auto& e : fs::directory_iterator(root))
        if (e.is_directory() && fs::exists(e.path() / "model.onnx") &&
            (!filter || std::regex_search(e.path().filename().string(), re)))
            dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

std::unique_ptr<ir::Model> load_test_model(const fs::path& dir) {
    try {
        return onnx::load_model((dir / "model.onnx").string());
    } catch (const Error&) {
        return nullptr;
    }
}

runtime::Feeds first_data_set_feeds(const fs::path& dir, const ir::Model& model,
                                    std::vector<ir::Value*>* inputs) {
    std::vector<ir::Value*> fed;
    for (ir::Value* v : model.graph->inputs())
        if (!v->is_initializer()) fed.push_back(v);
    runtime::Feeds feeds;
    for (size_t i = 0; i < fed.size(); ++i) {
        const fs::path f = dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
        if (fs::exists(f)) feeds[fed[i]->name()] = read_node_test_input(f.string(), fed[i]);
    }
    if (inputs) *inputs = std::move(fed);
    return feeds;
}

std::string for_node_suites(NodeSuites which,
                            const std::function<void(const std::string&, const char*)>& run) {
    if (which == NodeSuites::kOnnx122) {
        const std::string root = shared_dir();
        if (root.empty() || !fs::is_directory(root + "/data/onnx-node-tests-1.22"))
            return "../shared not present";
        run(root + "/data/onnx-node-tests-1.22", "onnx-node-tests-1.22");
        return "";
    }
    const std::string root = onnx_testdata_dir();
    if (root.empty()) return "libonnx-testdata not installed";
    if (which == NodeSuites::kDebianNode) {
        run(root + "/node", "libonnx-testdata/node");
        return "";
    }
    for (const char* s : {"pytorch-converted", "pytorch-operator", "simple"})
        if (fs::is_directory(root + "/" + s)) run(root + "/" + s, s);
    return "";
}

void report_sweep(const char* sweep, const std::string& label, const char* changed,
                  const SweepTally& tally) {
    std::printf("[%s] %s: %d tests, %d %s (%d ran, the others refused), %zu failures\n", sweep,
                label.c_str(), tally.tests, tally.cases, changed, tally.ran, tally.failures.size());
    for (const std::string& f : tally.failures) ADD_FAILURE() << f;
}

}  // namespace pg::test
