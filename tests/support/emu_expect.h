// GoogleTest expectations shared by the emulator tests: two RoundingStats (evidence of one
// rounding) must be identical field by field, floating-point figures bit for bit.
#pragma once

#include <string>

#include "emu/precision.h"

namespace pg::test {

// EXPECTs every counter and figure of `a` equal to `b`; `what` names the case in failures.
void expect_same_rounding_stats(const emu::RoundingStats& a, const emu::RoundingStats& b,
                                const std::string& what);

}  // namespace pg::test
