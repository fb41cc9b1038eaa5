// interpreter_bench's row lines (bench/bench_row.h): every field comes back from the line as it
// went in (NaNs, pair ratios, counts, a note with a line break), and lines that are not rows or
// lack fields give nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bench_row.h"

namespace pg {
namespace {

bench::Row full_row() {
    bench::Row r;
    r.name = "resnet50";
    r.ref_ms = 22.125, r.ort_ms = 21.5;
    r.pair_ratios = {1.03, 0.98, 1.0 / 3.0};
    r.agree.max_rel = 1.97e-5, r.agree.max_abs = 7.1e-7, r.agree.max_ort = 0.52;
    r.agree.max_rel_pg = 2.91e-5, r.agree.over = 451, r.agree.count = 1000;
    r.mem.peak = 118e6, r.mem.weights = 102.5e6, r.mem.live = 10.25e6;
    r.mem.loaded = 104e6, r.mem.load_peak = 105e6, r.mem.file = 3.5e6;
    r.mem.anon = 113.25e6;
    r.before.other_us = 3.75, r.before.own_us = 1.25, r.after.other_us = 1.75;
    r.note = "ONNX Runtime failed: first\nsecond";
    return r;
}

TEST(BenchRow, EveryFieldSurvivesTheLine) {
    const bench::Row in = full_row();
    const std::string line = bench::row_line(in);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    const std::optional<bench::Row> out = bench::parse_row_line(line);
    ASSERT_TRUE(out.has_value()) << line;
    EXPECT_EQ(out->name, in.name);
    EXPECT_EQ(out->ref_ms, in.ref_ms);
    EXPECT_EQ(out->ort_ms, in.ort_ms);
    EXPECT_EQ(out->pair_ratios, in.pair_ratios);
    EXPECT_EQ(out->agree.max_rel, in.agree.max_rel);
    EXPECT_EQ(out->agree.max_abs, in.agree.max_abs);
    EXPECT_EQ(out->agree.max_ort, in.agree.max_ort);
    EXPECT_EQ(out->agree.max_rel_pg, in.agree.max_rel_pg);
    EXPECT_EQ(out->agree.over, 451u);
    EXPECT_EQ(out->agree.count, 1000u);
    EXPECT_EQ(out->mem.peak, in.mem.peak);
    EXPECT_EQ(out->mem.weights, in.mem.weights);
    EXPECT_EQ(out->mem.live, in.mem.live);
    EXPECT_EQ(out->mem.loaded, in.mem.loaded);
    EXPECT_EQ(out->mem.load_peak, in.mem.load_peak);
    EXPECT_EQ(out->mem.file, in.mem.file);
    EXPECT_EQ(out->mem.anon, in.mem.anon);
    EXPECT_EQ(out->before.other_us, 3.75);
    EXPECT_EQ(out->before.own_us, 1.25);
    EXPECT_EQ(out->after.other_us, 1.75);
    EXPECT_TRUE(std::isnan(out->after.own_us));
    EXPECT_EQ(out->note, "ONNX Runtime failed: first second");
}

TEST(BenchRow, UnmeasuredFieldsStayNaN) {
    bench::Row in;
    in.name = "zoo_lstm_model";
    const std::optional<bench::Row> out = bench::parse_row_line(bench::row_line(in));
    ASSERT_TRUE(out.has_value());
    EXPECT_TRUE(std::isnan(out->ref_ms));
    EXPECT_TRUE(std::isnan(out->ort_ms));
    EXPECT_TRUE(std::isnan(out->mem.peak));
    EXPECT_TRUE(out->pair_ratios.empty());
    EXPECT_TRUE(out->note.empty());
}

TEST(BenchRow, OtherLinesAreNotRows) {
    EXPECT_FALSE(bench::parse_row_line("threads 2, median of 10").has_value());
    EXPECT_FALSE(bench::parse_row_line("PGROW").has_value());
    EXPECT_FALSE(bench::parse_row_line("PGROW resnet50 2 1.0").has_value());  // cut short
    EXPECT_FALSE(bench::parse_row_line("PGROW resnet50 x").has_value());
    const std::string line = bench::row_line(full_row());
    EXPECT_FALSE(bench::parse_row_line(line.substr(0, line.size() / 2)).has_value());
}

}  // namespace
}  // namespace pg
