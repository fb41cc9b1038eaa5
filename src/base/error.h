// Errors: the one error channel of Polygraph. Library code throws pg::Error; only main() turns
// an error into an exit status. An error carries a kind (which decides the exit status) and a
// context chain that callers extend while it propagates ("while loading model 'm.onnx'").
// To add a kind: extend ErrorKind and exit_code_for() together.
#pragma once

#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace pg {

// What went wrong, from the user's point of view. Decides the process exit status.
enum class ErrorKind {
    kUsage,         // bad command line (exit 2)
    kInvalidInput,  // a model or data file is broken, hostile or inconsistent (exit 3)
    kIo,            // a file cannot be opened, read or written (exit 3)
    kUnsupported,   // a valid input we cannot handle: op, dtype, feature (exit 4)
    kInternal,      // a bug in Polygraph (exit 5)
};

// Exit status of the process for an error of this kind (see docs/product.md).
int exit_code_for(ErrorKind kind);

// Short lowercase name of the kind, for messages.
const char* error_kind_name(ErrorKind kind);

// Makes std::terminate print "[!] internal error: ..." (with the pending exception's message,
// if any) to stderr and end the process with exit status 5, instead of aborting (status 134 with
// the C++ runtime's one-line note). A library inside the process, such as ONNX Runtime on an LSTM
// with a batch of 0, can call it where nothing can be caught. main() installs it.
void install_terminate_handler();

class Error : public std::exception {
public:
    Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {
        rebuild();
    }

    ErrorKind kind() const { return kind_; }
    // The innermost message, without context.
    const std::string& message() const { return message_; }
    // Context lines, innermost first.
    const std::vector<std::string>& context() const { return context_; }
    // Appends an outer context line ("while ...") and returns *this for rethrowing.
    Error& add_context(std::string line);
    // Message followed by the context chain, one "  while ..." line each.
    const char* what() const noexcept override { return full_.c_str(); }

private:
    void rebuild();

    ErrorKind kind_;
    std::string message_;
    std::vector<std::string> context_;
    std::string full_;
};

// Runs fn(); if it throws pg::Error, adds `context` and rethrows. Other exceptions thrown by
// fn (std::bad_alloc, std::length_error, ...) are converted to pg::Error first.
template <typename Fn>
decltype(auto) with_context(const std::string& context, Fn&& fn);

[[noreturn]] void rethrow_as_error(const std::string& context);

template <typename Fn>
decltype(auto) with_context(const std::string& context, Fn&& fn) {
    try {
        return fn();
    } catch (...) {
        rethrow_as_error(context);
    }
}

}  // namespace pg
