#include "debug/external_check.h"

#include <fcntl.h>
#include <poll.h>
#include <re2/re2.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/log.h"
#include "debug/interrupt.h"

namespace pg::debug {

namespace {

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

struct Pipe {
    int fd[2] = {-1, -1};
    Pipe() {
        if (::pipe2(fd, O_CLOEXEC) != 0)
            throw Error(ErrorKind::kIo, std::string("pipe failed: ") + std::strerror(errno));
    }
    ~Pipe() {
        close_fd(fd[0]);
        close_fd(fd[1]);
    }
};

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& t : v) s += (s.empty() ? "" : " ") + t;
    return s;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv) {
    if (argv.empty()) throw Error(ErrorKind::kUsage, "--check: the command is empty");
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    Pipe out, err, status;  // status: the child reports an exec failure's errno
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(ErrorKind::kIo, std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
        ::dup2(out.fd[1], 1);
        ::dup2(err.fd[1], 2);
        ::execvp(cargv[0], cargv.data());
        const int e = errno;
        (void)!::write(status.fd[1], &e, sizeof e);
        ::_exit(127);
    }
    close_fd(out.fd[1]);
    close_fd(err.fd[1]);
    close_fd(status.fd[1]);
    CommandResult r;
    pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
    std::string* dst[2] = {&r.out, &r.err};
    int open = 2;
    char buf[65536];
    bool forwarded = false;
    while (open > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno != EINTR) break;
            if (interrupted() && !forwarded) {
                ::kill(pid, SIGINT);  // the check stops with us; its verdict is discarded
                forwarded = true;
            }
            continue;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                dst[i]->append(buf, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
                --open;
            }
        }
    }
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    int exec_errno = 0;
    if (::read(status.fd[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno)
        throw Error(ErrorKind::kUsage,
                    "--check: cannot run '" + argv[0] + "': " + std::strerror(exec_errno));
    r.rc = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus)
                              : (WIFSIGNALED(wstatus) ? -WTERMSIG(wstatus) : -1);
    return r;
}

bool check_passed(const CheckCommandOptions& o, const CommandResult& r) {
    auto has = [](const std::vector<int>& v, int x) {
        return std::find(v.begin(), v.end(), x) != v.end();
    };
    if (has(o.ignore_fail_codes, r.rc)) return true;
    const std::string output = r.out + r.err;
    bool has_regex = false;
    for (const auto& pattern : o.fail_regex) {
        RE2::Options options;
        options.set_log_errors(false);  // the error goes into our message instead
        const RE2 re(pattern, options);
        if (!re.ok())
            throw Error(ErrorKind::kUsage, "--fail-regex: invalid regular expression '" + pattern +
                                               "': " + re.error());
        if (RE2::PartialMatch(output, re)) has_regex = true;
    }
    bool failed;
    if (!o.fail_codes.empty()) {
        failed = has(o.fail_codes, r.rc);
        if (!o.fail_regex.empty()) failed = failed && has_regex;
    } else {
        failed = o.fail_regex.empty() ? r.rc != 0 : has_regex;
    }
    return !failed;
}

std::vector<std::string> substitute(const std::vector<std::string>& command,
                                    const std::string& placeholder, const std::string& path) {
    std::vector<std::string> out;
    for (std::string t : command) {
        for (size_t pos = t.find(placeholder); pos != std::string::npos;
             pos = t.find(placeholder, pos + path.size()))
            t.replace(pos, placeholder.size(), path);
        out.push_back(std::move(t));
    }
    return out;
}

bool run_check_command(const CheckCommandOptions& o, const std::vector<std::string>& argv,
                       int* rc) {
    log_info("Running check command: {}", joined(argv));
    const CommandResult r = run_command(argv);
    if (rc) *rc = r.rc;
    if (interrupted()) {  // the check got our SIGINT: its verdict means nothing
        log_warning("Check command interrupted (exit status {})", r.rc);
        return false;
    }
    const bool ok = check_passed(o, r);
    if (o.show_output || (!ok && !o.hide_fail_output)) {
        log_info("========== CAPTURED STDOUT ==========\n{}", r.out);
        if (ok)
            log_warning("========== CAPTURED STDERR ==========\n{}", r.err);
        else
            log_error("========== CAPTURED STDERR ==========\n{}", r.err);
    }
    return ok;
}

bool run_check_with_copies(const CheckCommandOptions& o, const std::vector<std::string>& argv,
                           const std::vector<FixedCopy>& copies, bool keep, int* rc) {
    // The copies written so far go again however the check ends (a program that cannot start
    // throws), unless kept.
    struct Written {
        const std::vector<FixedCopy>& copies;
        bool keep;
        size_t count = 0;
        ~Written() {
            for (size_t i = 0; !keep && i < count; ++i) {
                std::error_code ec;
                std::filesystem::remove(copies[i].to, ec);
            }
        }
    } written{copies, keep};
    for (const FixedCopy& c : copies) {
        const std::string tmp = c.to + ".partial";
        std::error_code ec;
        std::filesystem::copy_file(c.from, tmp, std::filesystem::copy_options::overwrite_existing,
                                   ec);
        if (!ec) std::filesystem::rename(tmp, c.to, ec);
        if (ec) {
            std::filesystem::remove(tmp, ec);
            throw Error(ErrorKind::kIo, "cannot write " + c.to + " for the check command");
        }
        ++written.count;
    }
    return run_check_command(o, argv, rc);
}

std::vector<std::string> split_quoted_command(const std::vector<std::string>& command) {
    std::error_code ec;
    if (command.size() != 1 || command[0].find_first_of(" \t") == std::string::npos ||
        std::filesystem::exists(command[0], ec))  // a program whose path has a blank
        return command;
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    const std::string& s = command[0];
    for (size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        if (quote) {
            if (ch == quote) {
                quote = 0;
            } else if (ch == '\\' && quote == '"' && i + 1 < s.size()) {
                word += s[++i];
            } else {
                word += ch;
            }
        } else if (ch == ' ' || ch == '\t') {
            if (in_word) words.push_back(word), word.clear(), in_word = false;
            continue;
        } else if (ch == '\'' || ch == '"') {
            quote = ch;
        } else if (ch == '\\' && i + 1 < s.size()) {
            word += s[++i];
        } else {
            word += ch;
        }
        in_word = true;
    }
    if (quote) throw Error(ErrorKind::kUsage, "--check: unterminated quote in '" + s + "'");
    if (in_word) words.push_back(word);
    return words;
}

}  // namespace pg::debug
