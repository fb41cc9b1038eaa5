// The benches' machine probe (bench/cross_core.h): both read times measured and positive where
// the process may use two CPUs, NaN and "not measured" where it may use one.
#include <gtest/gtest.h>
#include <sched.h>

#include <cmath>
#include <string>

#include "cross_core.h"

namespace pg {
namespace {

int allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

TEST(BenchCrossCore, MeasuresBothReadsOnTwoCpus) {
    if (allowed_cpus() < 2) GTEST_SKIP() << "one CPU";
    const bench::CrossCore c = bench::measure_cross_core(64 << 10, 5);
    EXPECT_GT(c.other_us, 0.0);
    EXPECT_GT(c.own_us, 0.0);
    const std::string text = bench::cross_core_text(c, 64 << 10);
    EXPECT_NE(text.find("64 KiB"), std::string::npos) << text;
    EXPECT_NE(text.find("own writes"), std::string::npos) << text;
}

TEST(BenchCrossCore, SaysWhenNotMeasured) {
    EXPECT_NE(bench::cross_core_text(bench::CrossCore{}).find("not measured"), std::string::npos);
    cpu_set_t saved, one;
    ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &saved)) {
            CPU_SET(c, &one);
            break;
        }
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    const bench::CrossCore c = bench::measure_cross_core(64 << 10, 5);
    sched_setaffinity(0, sizeof saved, &saved);
    EXPECT_TRUE(std::isnan(c.other_us));
    EXPECT_TRUE(std::isnan(c.own_us));
}

}  // namespace
}  // namespace pg
