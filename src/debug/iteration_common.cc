#include "debug/iteration_common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/error.h"
#include "base/fs.h"
#include "debug/interrupt.h"

namespace pg::debug {

nlohmann::json read_replay_object(const std::string& path) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(read_file(path));
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::kInvalidInput,
                    "--load-debug-replay: " + path + " is not valid JSON: " + e.what());
    }
    if (!j.is_object())
        throw Error(ErrorKind::kInvalidInput,
                    "--load-debug-replay: " + path + " must hold a JSON object");
    return j;
}

std::string prepare_iteration_dir(const IterationOptions& o) {
    if (!o.artifacts_dir.empty()) {
        ::mkdir(o.artifacts_dir.c_str(), 0777);
        if (!is_directory(o.artifacts_dir))
            throw Error(ErrorKind::kIo,
                        "--artifacts-dir: cannot create directory " + o.artifacts_dir);
        std::ofstream(o.artifacts_dir + "/verdicts.txt", std::ios::trunc);
        return "";
    }
    if (!o.needs_model) return "";
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/polygraph_debug.XXXXXX";
    if (!::mkdtemp(tmpl.data()))
        throw Error(ErrorKind::kIo,
                    "cannot create a temporary directory: " + std::string(std::strerror(errno)));
    return tmpl;
}

void append_verdict_line(const std::string& artifacts_dir, const std::string& line) {
    if (artifacts_dir.empty()) return;
    std::ofstream f(artifacts_dir + "/verdicts.txt", std::ios::app);
    f << line << '\n';
    if (!f) throw Error(ErrorKind::kIo, "cannot write " + artifacts_dir + "/verdicts.txt");
}

nlohmann::ordered_json replay_entry(const nlohmann::json& state, size_t iteration, bool success) {
    return {{"state", state},
            {"iteration_info", {{"iteration", iteration}}},
            {"success", success},
            {"polygraphy_class", "IterationContext"}};
}

void save_replay_file(const std::string& path, const nlohmann::ordered_json& replay) {
    write_file_atomic(path, replay.dump(4) + "\n");
}

void throw_interrupted(const std::string& save_replay, size_t completed) {
    if (!save_replay.empty()) std::remove(skip_current_path(save_replay).c_str());
    throw SearchInterrupted("interrupted by SIGINT after " + std::to_string(completed) +
                            " complete iteration(s)");
}

}  // namespace pg::debug
