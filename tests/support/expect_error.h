// Tests that a call is refused: expect_error(fn, kind, text) runs fn and expects a pg::Error of
// `kind` whose message holds `text` (a failure naming the text when fn returns).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace pg::test {

template <typename Fn>
void expect_error(Fn&& fn, ErrorKind kind, const std::string& text) {
    try {
        fn();
        ADD_FAILURE() << "expected an error naming '" << text << "'";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), kind) << e.what();
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
}

}  // namespace pg::test
