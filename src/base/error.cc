#include "base/error.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <stdexcept>

namespace pg {

int exit_code_for(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::kUsage: return 2;
        case ErrorKind::kInvalidInput: return 3;
        case ErrorKind::kIo: return 3;
        case ErrorKind::kUnsupported: return 4;
        case ErrorKind::kInternal: return 5;
    }
    return 5;
}

const char* error_kind_name(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::kUsage: return "usage error";
        case ErrorKind::kInvalidInput: return "invalid input";
        case ErrorKind::kIo: return "I/O error";
        case ErrorKind::kUnsupported: return "unsupported";
        case ErrorKind::kInternal: return "internal error";
    }
    return "error";
}

Error& Error::add_context(std::string line) {
    context_.push_back(std::move(line));
    rebuild();
    return *this;
}

void Error::rebuild() {
    full_ = message_;
    for (const auto& c : context_) full_ += "\n  " + c;
}

void rethrow_as_error(const std::string& context) {
    try {
        throw;
    } catch (Error& e) {
        e.add_context(context);
        throw;
    } catch (const std::bad_alloc&) {
        Error e(ErrorKind::kInvalidInput, "out of memory (the input asks for more memory than is available)");
        throw e.add_context(context);
    } catch (const std::length_error& ex) {
        Error e(ErrorKind::kInvalidInput, std::string("size out of range: ") + ex.what());
        throw e.add_context(context);
    } catch (const std::exception& ex) {
        Error e(ErrorKind::kInternal, ex.what());
        throw e.add_context(context);
    }
}

namespace {

[[noreturn]] void on_terminate() {
    std::string what = "no exception pending";
    if (const std::exception_ptr e = std::current_exception()) {
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            what = ex.what();
        } catch (...) {
            what = "an exception of an unknown type";
        }
    }
    const std::string msg =
        "[!] internal error: the process was terminated (std::terminate: " + what +
        "), from Polygraph or a library it runs (ONNX Runtime ends the process this way on some "
        "inputs it does not handle)\n";
    std::fwrite(msg.data(), 1, msg.size(), stderr);
    std::fflush(nullptr);
    std::_Exit(exit_code_for(ErrorKind::kInternal));
}

}  // namespace

void install_terminate_handler() {
    std::set_terminate(on_terminate);
}

}  // namespace pg
