// data/polygraphy_json: Polygraphy's own files re-written byte for byte, streamed RunResults,
// Python number formatting, and files we write loading back bit-exactly.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "base/error.h"
#include "base/fs.h"
#include "data/base64.h"
#include "data/data_files.h"
#include "data/json_text.h"
#include "data/npy.h"
#include "data/polygraphy_json.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::string polygraphy_file(const std::string& name) {
    const std::string p = test::shared_dir() + "/data/polygraphy-files/" + name;
    return test::shared_dir().empty() || !std::filesystem::exists(p) ? "" : p;
}

TEST(PolygraphyJson, InputsFileRewritesByteForByte) {
    const std::string path = polygraphy_file("inputs.json");
    if (path.empty()) GTEST_SKIP() << "shared polygraphy-files absent";
    auto j = data::load_polygraphy_json(path);
    ASSERT_EQ(j.content, data::JsonContent::kInputs);
    ASSERT_EQ(j.inputs.size(), 1u);
    EXPECT_EQ(j.inputs[0][0].first, "x");
    EXPECT_EQ(j.inputs[0][1].first, "i");
    EXPECT_EQ(j.inputs[0][2].first, "b");
    EXPECT_EQ(data::inputs_to_json(j.inputs), read_file(path));
    const std::string out = test::make_temp_dir() + "/inputs.json";
    data::save_inputs(out, j.inputs);
    EXPECT_EQ(read_file(out), read_file(path));
}

TEST(PolygraphyJson, RunResultsFileRewritesByteForByte) {
    const std::string path = polygraphy_file("outputs.json");
    if (path.empty()) GTEST_SKIP() << "shared polygraphy-files absent";
    auto j = data::load_polygraphy_json(path);
    ASSERT_EQ(j.content, data::JsonContent::kRunResults);
    ASSERT_EQ(j.run_results.runners.size(), 1u);
    const auto& it = j.run_results.runners[0].iterations.at(0);
    EXPECT_EQ(it.runtime, 0.000123);
    EXPECT_EQ(it.outputs.at(0).first, "y");
    EXPECT_EQ(data::run_results_to_json(j.run_results), read_file(path));
    const std::string out = test::make_temp_dir() + "/outputs.json";
    data::save_outputs(out, j.run_results);
    EXPECT_EQ(read_file(out), read_file(path));
}

TEST(PolygraphyJson, StreamedWriterMatchesWholeDocument) {
    data::RunResults rr;
    Tensor a = Tensor::from_values<float>(DataType::kFloat32, {2}, {1.5f, -2.0f});
    Tensor b = Tensor::from_values<int64_t>(DataType::kInt64, {}, {7});
    rr.runners.push_back({"ref-runner-N0", {{{{"a", a}, {"b", b}}, 1e-05, "ref-runner-N0"}}});
    rr.runners.push_back({"empty", {}});
    rr.runners.push_back({"noout", {{{}, std::nullopt, "noout"}}});
    const std::string path = test::make_temp_dir() + "/r.json";
    {
        data::RunResultsWriter w(path);
        w.begin_runner("ref-runner-N0");
        w.begin_iteration();
        w.add_output("a", a);
        w.add_output("b", b);
        w.end_iteration(1e-05);
        w.begin_runner("empty");
        w.begin_runner("noout");
        w.begin_iteration();
        w.end_iteration(std::nullopt);
        w.finish();
    }
    EXPECT_EQ(read_file(path), data::run_results_to_json(rr));
    auto back = data::load_outputs(path).runners;
    ASSERT_EQ(back.size(), 3u);
    EXPECT_TRUE(back[0].iterations[0].outputs[0].second.same_contents(a));
    EXPECT_TRUE(back[0].iterations[0].outputs[1].second.same_contents(b));
    EXPECT_TRUE(back[1].iterations.empty());
    EXPECT_FALSE(back[2].iterations[0].runtime.has_value());
    EXPECT_NE(read_file(path).find("\"outputs\": {},"), std::string::npos);
    EXPECT_NE(read_file(path).find("\"empty\",\n            []"), std::string::npos);
}

TEST(PolygraphyJson, UnfinishedWriterLeavesNoFile) {
    const std::string path = test::make_temp_dir() + "/partial.json";
    {
        data::RunResultsWriter w(path);
        w.begin_runner("r");
    }
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(PolygraphyJson, PythonFloatRepr) {
    EXPECT_EQ(data::py_json_float(0.000123), "0.000123");
    EXPECT_EQ(data::py_json_float(1e-05), "1e-05");
    EXPECT_EQ(data::py_json_float(1.0), "1.0");
    EXPECT_EQ(data::py_json_float(123.456), "123.456");
    EXPECT_EQ(data::py_json_float(1e16), "1e+16");
    EXPECT_EQ(data::py_json_float(-2.5e-7), "-2.5e-07");
    EXPECT_EQ(data::py_json_float(1234567890123456.0), "1234567890123456.0");
    EXPECT_EQ(data::py_json_float(0.1), "0.1");
}

TEST(PolygraphyJson, EnsureAsciiStrings) {
    EXPECT_EQ(data::py_json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    EXPECT_EQ(data::py_json_string("\xc3\xa9"), "\"\\u00e9\"");
    EXPECT_EQ(data::py_json_string("\xf0\x9f\x98\x80"), "\"\\ud83d\\ude00\"");
    EXPECT_EQ(data::py_json_string("out:0/x"), "\"out:0/x\"");
}

TEST(PolygraphyJson, Base64RoundTrip) {
    for (const std::string& s :
         std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x93", 3)}) {
        EXPECT_EQ(data::base64_decode(data::base64_encode(s)), s);
    }
    EXPECT_FALSE(data::base64_decode("abc").has_value());
    EXPECT_FALSE(data::base64_decode("a=bc").has_value());
}

TEST(PolygraphyJson, AllDtypesLoadBackBitExactly) {
    data::FeedList feeds(2);
    feeds[0].emplace_back("f64",
                          Tensor::from_values<double>(DataType::kFloat64, {2}, {0.1, -1e300}));
    feeds[0].emplace_back("f16",
                          Tensor::from_values<uint16_t>(DataType::kFloat16, {2}, {0x3c00, 0x7e00}));
    feeds[0].emplace_back("i8", Tensor::from_values<int8_t>(DataType::kInt8, {3}, {-128, 0, 127}));
    feeds[1].emplace_back("u64", Tensor::from_values<uint64_t>(DataType::kUInt64, {1, 1}, {~0ull}));
    feeds[1].emplace_back("bool", Tensor::from_values<uint8_t>(DataType::kBool, {}, {1}));
    feeds[1].emplace_back("empty", Tensor::zeros(DataType::kInt16, {0, 4}));
    const std::string path = test::make_temp_dir() + "/all.json";
    data::save_inputs(path, feeds);
    auto back = data::load_inputs(path);
    ASSERT_EQ(back.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        ASSERT_EQ(back[i].size(), feeds[i].size());
        for (size_t k = 0; k < back[i].size(); ++k) {
            EXPECT_EQ(back[i][k].first, feeds[i][k].first);
            EXPECT_TRUE(back[i][k].second.same_contents(feeds[i][k].second)) << back[i][k].first;
        }
    }
}

TEST(PolygraphyJson, Bfloat16IsStoredAsFloat32) {
    data::FeedList feeds(1);
    feeds[0].emplace_back("bf", Tensor::from_values<uint16_t>(DataType::kBFloat16, {1}, {0x3fc0}));
    const std::string path = test::make_temp_dir() + "/bf.json";
    data::save_inputs(path, feeds);
    auto back = data::load_inputs(path);
    EXPECT_EQ(back[0][0].second.dtype(), DataType::kFloat32);
    EXPECT_EQ(back[0][0].second.element_as_double(0), 1.5);
}

// The .npy bytes as Python's json.dumps writes a latin-1 str: \u00XX past ASCII.
std::string latin1_json_string(const std::string& bytes) {
    std::string out = "\"";
    for (const char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", c);
        out += c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? std::string(1, ch) : esc;
    }
    return out + "\"";
}

TEST(PolygraphyJson, LegacyLatin1ArraysDecode) {
    // Old Polygraphy stored the .npy bytes as latin-1 text: its magic byte 0x93 is U+0093, two
    // bytes in UTF-8, so the text must be turned back into one byte per code point.
    const Tensor t = Tensor::from_values<float>(DataType::kFloat32, {3}, {1.5f, -2, 1e-3f});
    const std::string path = test::make_temp_dir() + "/legacy.json";
    write_file_atomic(path, "[{\"x\": {\"array\": " + latin1_json_string(data::npy_encode(t)) +
                                ", \"polygraphy_class\": \"ndarray\"}}]");
    const data::FeedList back = data::load_inputs(path);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(back[0][0].second.same_contents(t));
    write_file_atomic(
        path, "[{\"x\": {\"array\": \"\\u0193NUMPY\", \"polygraphy_class\": \"ndarray\"}}]");
    test::expect_error([&] { data::load_inputs(path); }, ErrorKind::kInvalidInput,
                       "neither base64 nor latin-1");
}

TEST(PolygraphyJson, WrongKindsAreInvalidInput) {
    const std::string dir = test::make_temp_dir();
    write_file_atomic(dir + "/bad.json", "{\"lst\": 3, \"polygraphy_class\": \"RunResults\"}");
    write_file_atomic(dir + "/junk.json",
                      "[{\"x\": {\"array\": 1, \"polygraphy_class\": \"ndarray\"}}]");
    write_file_atomic(dir + "/text.json", "not json");
    for (const char* name : {"bad.json", "junk.json", "text.json"}) {
        try {
            data::load_data_file(dir + "/" + name);
            FAIL() << name;
        } catch (const Error& e) {
            EXPECT_EQ(exit_code_for(e.kind()), 3) << name;
        }
    }
    const std::string in = polygraphy_file("inputs.json");
    if (!in.empty()) {
        EXPECT_THROW(data::load_outputs(in), Error);
    }
}

}  // namespace
}  // namespace pg
