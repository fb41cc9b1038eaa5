#include "data/python_loader.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/error.h"
#include "base/fs.h"
#include "data/data_files.h"

extern char** environ;

namespace pg::data {

namespace {

// The child's program: imports the script from its own folder, calls the function and saves
// each feed dict as OUT/feed_<n>.npz, as numpy.savez lays it out (written entry by entry, so that
// an input named "file" does not collide with savez's own parameter). Exit 10: no numpy; 11: no
// such function; 12: not a dict.
constexpr const char* kDriver = R"PY(
import importlib.util, io, os, sys, zipfile
try:
    import numpy as np
except ImportError:
    sys.exit(10)
script, func, out = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
spec = importlib.util.spec_from_file_location("polygraph_data_loader", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
fn = getattr(module, func, None)
if not callable(fn):
    sys.exit(11)
n = 0
for feed in fn():
    if not isinstance(feed, dict):
        sys.stderr.write("feed dict %d is a %s, not a dict of arrays\n" % (n, type(feed).__name__))
        sys.exit(12)
    with zipfile.ZipFile(os.path.join(out, "feed_%d.npz" % n), "w") as z:
        for k, v in feed.items():
            buf = io.BytesIO()
            np.save(buf, np.asarray(v), allow_pickle=False)
            z.writestr(str(k) + ".npy", buf.getvalue())
    n += 1
)PY";

// Runs `python` with the driver; its stderr goes to `err_path`. Returns the exit status (-1
// when it could not be started).
int run_driver(const std::string& python, const PythonLoaderSpec& spec, const std::string& dir,
               const std::string& err_path) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    std::vector<std::string> args = {python, "-c", kDriver, spec.script, spec.function, dir};
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, python.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The interpreters to try in order: $POLYGRAPH_PYTHON alone when set, else python3 from PATH
// and then the system's /usr/bin/python3 (a PATH python3 from pyenv or a virtualenv may lack
// numpy where the system one has Debian's python3-numpy).
std::vector<std::string> pythons() {
    if (const char* p = std::getenv("POLYGRAPH_PYTHON"); p && *p) return {p};
    return {"python3", "/usr/bin/python3"};
}

// The error for a failed driver run.
Error driver_error(const PythonLoaderSpec& spec, int status, const std::string& err) {
    const std::string where = "data loader script '" + spec.script + "'";
    if (status == -1)
        return Error(ErrorKind::kUnsupported,
                     where + ": python3 was not found (install python3 and python3-numpy, or "
                             "set POLYGRAPH_PYTHON)");
    if (status == 10)
        return Error(ErrorKind::kUnsupported,
                     where + ": numpy is missing from python3 (install python3-numpy, or set "
                             "POLYGRAPH_PYTHON to a python with numpy)");
    if (status == 11)
        return Error(ErrorKind::kInvalidInput,
                     where + " defines no function '" + spec.function + "'");
    return Error(ErrorKind::kInvalidInput, where + " failed (exit status " +
                                               std::to_string(status) + "):\n" + err);
}

// The end of the child's stderr (a traceback ends with its error), at most 8 KiB of it: a
// script printing without end must not make the error message as large.
std::string stderr_tail(const std::string& path) {
    constexpr size_t kTail = 8 << 10;
    const auto m = MappedFile::open(path);
    const size_t n = std::min<size_t>(m->size(), kTail);
    std::string tail(reinterpret_cast<const char*>(m->data()) + (m->size() - n), n);
    return n < m->size() ? "...\n" + tail : tail;
}

// Removes the private folder however the load ends.
struct TempDir {
    std::string path;
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
};

}  // namespace

PythonLoaderSpec parse_python_loader(const std::string& arg) {
    PythonLoaderSpec s;
    const size_t colon = arg.rfind(':');
    if (colon != std::string::npos && colon > 3 && arg.compare(colon - 3, 3, ".py") == 0) {
        s.script = arg.substr(0, colon);
        s.function = arg.substr(colon + 1);
    } else {
        s.script = arg;
    }
    if (s.function.empty()) throw Error(ErrorKind::kUsage, "'" + arg + "': empty function name");
    return s;
}

bool is_python_loader(const std::string& arg) {
    const std::string script = parse_python_loader(arg).script;
    return script.size() > 3 && script.compare(script.size() - 3, 3, ".py") == 0;
}

FeedList load_python_inputs(const PythonLoaderSpec& spec) {
    if (!std::filesystem::is_regular_file(spec.script))
        throw Error(ErrorKind::kIo, "data loader script '" + spec.script + "' not found");
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/polygraph_loader.XXXXXX";
    if (!::mkdtemp(tmpl.data()))
        throw Error(ErrorKind::kIo, "cannot create a temporary folder: " +
                                        std::string(std::strerror(errno)));
    const TempDir dir{tmpl};
    const std::string err_path = dir.path + "/stderr";
    int status = -1;
    for (const std::string& python : pythons()) {  // the next one only when no usable numpy
        status = run_driver(python, spec, dir.path, err_path);
        if (status != -1 && status != 10) break;
    }
    if (status != 0) throw driver_error(spec, status, status == -1 ? "" : stderr_tail(err_path));
    FeedList feeds;
    for (size_t n = 0;; ++n) {
        const std::string f = dir.path + "/feed_" + std::to_string(n) + ".npz";
        if (!std::filesystem::exists(f)) break;
        FeedList one = load_inputs(f);
        feeds.insert(feeds.end(), one.begin(), one.end());
    }
    if (feeds.empty())
        throw Error(ErrorKind::kInvalidInput,
                    "data loader script '" + spec.script + "': " + spec.function +
                        "() gave no feed dicts");
    return feeds;
}

}  // namespace pg::data
