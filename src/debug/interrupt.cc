#include "debug/interrupt.h"

#include <csignal>

namespace pg::debug {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
struct sigaction g_previous;

void on_sigint(int) {
    g_interrupted = 1;
}

}  // namespace

InterruptGuard::InterruptGuard() {
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;  // no SA_RESTART: blocking calls see EINTR
    sigaction(SIGINT, &sa, &g_previous);
}

InterruptGuard::~InterruptGuard() {
    sigaction(SIGINT, &g_previous, nullptr);
}

bool interrupted() {
    return g_interrupted != 0;
}

void clear_interrupted() {
    g_interrupted = 0;
}

}  // namespace pg::debug
