// SIGINT during a `debug` search. While an InterruptGuard lives, the first SIGINT only sets a
// flag (a second one kills the process as usual): the running check finishes or, for an
// external check, receives the SIGINT too (run_command forwards it); the interrupted
// iteration is then discarded and the search stops with SearchInterrupted, leaving the debug
// replay as saved after the last complete iteration. The CLI turns that into exit status 130.
#pragma once

#include <stdexcept>
#include <string>

namespace pg::debug {

// Installs the flag-setting SIGINT handler for its lifetime (restores the previous one).
class InterruptGuard {
  public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// True once SIGINT arrived while a guard was installed.
bool interrupted();
// Clears the flag (tests, or a new search in the same process).
void clear_interrupted();

// Thrown at an iteration boundary after SIGINT.
class SearchInterrupted : public std::runtime_error {
  public:
    explicit SearchInterrupted(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace pg::debug
