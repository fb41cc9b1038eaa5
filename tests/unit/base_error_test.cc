// base/error.h: the terminate handler main() installs turns std::terminate (which a library in
// the process may call where nothing can be caught) into a message and exit status 5.
#include <gtest/gtest.h>

#include <exception>
#include <stdexcept>

#include "base/error.h"

namespace pg {
namespace {

TEST(BaseErrorDeathTest, TerminateEndsWithAnInternalErrorStatus) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            install_terminate_handler();
            std::terminate();
        },
        ::testing::ExitedWithCode(5), "internal error: the process was terminated");
    EXPECT_EXIT(
        {
            install_terminate_handler();
            try {
                throw std::runtime_error("lstm batch of 0");
            } catch (...) {
                std::terminate();
            }
        },
        ::testing::ExitedWithCode(5), "lstm batch of 0");
}

}  // namespace
}  // namespace pg
