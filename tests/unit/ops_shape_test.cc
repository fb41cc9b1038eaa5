// Shape and data-movement kernels: edge cases the ONNX node tests miss (strings, sub-byte and
// 16-bit types, empty tensors, opset differences, invalid input).
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::i64;
using test::run_op;

std::vector<int64_t> ints(const Tensor& t) {
    return {t.data<int64_t>(), t.data<int64_t>() + t.numel()};
}

Tensor strs(std::vector<int64_t> dims, std::vector<std::string> v) {
    return Tensor::from_strings(std::move(dims), std::move(v));
}

void expect_invalid(const std::function<void()>& f, const std::string& needle) {
    try {
        f();
        FAIL() << "expected an error mentioning " << needle;
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(OpsShape, ReshapeZeroCopiesDimUnlessAllowzero) {
    auto out = run_op("Reshape", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {0, -1})});
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3}));
    auto empty = run_op("Reshape", {f32({0, 3}, {}), i64({2}, {3, 0})},
                        ir::attrs(Attribute::make_int("allowzero", 1)), 14);
    EXPECT_EQ(empty[0].dims(), (std::vector<int64_t>{3, 0}));
    expect_invalid(
        [] {
            run_op("Reshape", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {-1, -1})});
        },
        "more than one -1");
    expect_invalid(
        [] {
            run_op("Reshape", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({1}, {4})});
        },
        "cannot reshape");
}

TEST(OpsShape, ReshapeOpset1ReadsTheAttribute) {
    auto out = run_op("Reshape", {f32({2, 2}, {1, 2, 3, 4})},
                      ir::attrs(Attribute::make_ints("shape", {4})), 1);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{4}));
}

TEST(OpsShape, TransposeStrings) {
    auto out = run_op("Transpose", {strs({2, 3}, {"a", "b", "c", "d", "e", "f"})});
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"a", "d", "b", "e", "c", "f"}));
}

TEST(OpsShape, TransposeInt4PacksNibbles) {
    // int4 values 1..6 packed low nibble first: [1,2],[3,4],[5,6].
    Tensor x = Tensor::from_values<uint8_t>(DataType::kInt4, {2, 3}, {0x21, 0x43, 0x65});
    auto out = run_op("Transpose", {x}, {}, 21);
    ASSERT_EQ(out[0].dtype(), DataType::kInt4);
    // Transposed: 1 4 2 5 3 6.
    EXPECT_EQ(out[0].bytes()[0], 0x41);
    EXPECT_EQ(out[0].bytes()[1], 0x52);
    EXPECT_EQ(out[0].bytes()[2], 0x63);
}

TEST(OpsShape, TransposeRejectsBadPerm) {
    expect_invalid(
        [] {
            run_op("Transpose", {f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                   ir::attrs(Attribute::make_ints("perm", {0, 0})));
        },
        "not a permutation");
}

TEST(OpsShape, ConcatNegativeAxisAndEmptyInput) {
    auto out = run_op("Concat", {f32({2, 1}, {1, 2}), f32({2, 0}, {}), f32({2, 2}, {3, 4, 5, 6})},
                      ir::attrs(Attribute::make_int("axis", -1)));
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{1, 3, 4, 2, 5, 6}));
    expect_invalid(
        [] {
            run_op("Concat", {f32({2}, {1, 2}), i64({1}, {3})},
                   ir::attrs(Attribute::make_int("axis", 0)));
        },
        "different types");
}

TEST(OpsShape, SplitAttrBefore13InputAfterAndNumOutputs18) {
    auto a = run_op("Split", {f32({5}, {1, 2, 3, 4, 5})},
                    ir::attrs(Attribute::make_ints("split", {2, 3})), 11, 2);
    EXPECT_EQ(test::values_f32(a[1]), (std::vector<float>{3, 4, 5}));
    auto b = run_op("Split", {f32({5}, {1, 2, 3, 4, 5}), i64({2}, {4, 1})}, {}, 13, 2);
    EXPECT_EQ(test::values_f32(b[0]), (std::vector<float>{1, 2, 3, 4}));
    auto c = run_op("Split", {f32({5}, {1, 2, 3, 4, 5})},
                    ir::attrs(Attribute::make_int("num_outputs", 3)), 18, 3);
    EXPECT_EQ(c[0].dims(), (std::vector<int64_t>{2}));
    EXPECT_EQ(c[2].dims(), (std::vector<int64_t>{1}));
    expect_invalid(
        [] {
            run_op("Split", {f32({5}, {1, 2, 3, 4, 5}), i64({2}, {1, 1})}, {}, 13, 2);
        },
        "add up");
}

// num_outputs (opset 18): n - 1 parts of ceil(dim / n) and the rest, as ONNX's shape inference
// gives them: 9 in 4 parts is 3, 3, 3 and an empty one; 5 in 4 would leave -1 for the last (an
// error, not 2, 2, 1, 0); the node must have num_outputs outputs.
TEST(OpsShape, SplitNumOutputsGivesONNXsParts) {
    const auto split = [](int64_t dim, int64_t n, size_t outputs) {
        return run_op("Split", {f32({dim}, std::vector<float>(static_cast<size_t>(dim), 1.0f))},
                      ir::attrs(Attribute::make_int("num_outputs", n)), 18, outputs);
    };
    const auto nine = split(9, 4, 4);
    EXPECT_EQ(nine[2].dims(), (std::vector<int64_t>{3}));
    EXPECT_EQ(nine[3].dims(), (std::vector<int64_t>{0}));
    expect_invalid([&] { split(5, 4, 4); }, "the last would hold -1");
    expect_invalid([&] { split(6, 3, 2); }, "num_outputs is 3 but the node has 2 outputs");
}

// Ops that build one index per output element refuse hostile sizes before allocating (a Pad
// to 4e9 elements took 34 s to fail under an 8 GB limit, building its per-axis maps first; a
// Tile's length_error named std::vector): the size against the machine's memory, overflowing
// dims, overflowing pads and repeats.
TEST(OpsShape, HostileOutputSizesAreRefusedBeforeAllocating) {
    const int64_t big = 1000000000, huge = int64_t{1} << 62;
    expect_invalid(
        [&] {
            run_op("Pad", {f32({2, 2}, {1, 2, 3, 4}), i64({4}, {0, big, 0, big})});
        },
        "an output of shape [2, 2000000002] (with its index map) would need");
    expect_invalid(
        [&] {
            run_op("Pad", {f32({2, 2}, {1, 2, 3, 4}), i64({4}, {0, huge, 0, huge})});
        },
        "overflow axis 1");
    expect_invalid(
        [&] {
            run_op("Tile", {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {big, big})});
        },
        "would need");
    expect_invalid(
        [&] {
            run_op("Tile", {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {huge, 1})});
        },
        "Tile: 4611686018427387904 repeats overflow axis 0");
    expect_invalid(
        [&] {
            run_op("Expand", {f32({1}, {1}), i64({3}, {big, big, big})}, {}, 13);
        },
        "has a negative or too large size");
    expect_invalid(
        [&] {
            run_op("ConstantOfShape", {i64({2}, {big, big})}, {}, 17);
        },
        "would need");
    expect_invalid(
        [&] {
            run_op("CenterCropPad", {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {big, big})}, {}, 18);
        },
        "would need");
    // Kernels computing in double first check their scratch the same way.
    expect_invalid(
        [&] {
            run_op("RandomNormal", {},
                   ir::attrs(Attribute::make_ints("shape", {big, big, big}),
                             Attribute::make_float("seed", 1.0f)),
                   17);
        },
        "random values: an output of shape [1000000000, 1000000000, 1000000000]");
    expect_invalid([&] { run_op("HannWindow", {i64({}, {big * 10000})}, {}, 17); }, "would need");
    expect_invalid(
        [&] {
            run_op("DFT", {f32({1, 4, 1}, {1, 2, 3, 4}), i64({}, {big * 1000})}, {}, 17);
        },
        "DFT: an output of shape [1, 1000000000000, 2] would need");
    EXPECT_EQ(run_op("Pad", {f32({1, 1}, {5}), i64({4}, {0, 1, 0, 2})})[0].dims(),
              (std::vector<int64_t>{1, 4}));
}

TEST(OpsShape, SqueezeUnsqueezeAxesPerOpset) {
    auto s11 = run_op("Squeeze", {f32({1, 2, 1}, {1, 2})},
                      ir::attrs(Attribute::make_ints("axes", {-1})), 11);
    EXPECT_EQ(s11[0].dims(), (std::vector<int64_t>{1, 2}));
    auto s13 = run_op("Squeeze", {f32({1, 2, 1}, {1, 2})}, {}, 13);
    EXPECT_EQ(s13[0].dims(), (std::vector<int64_t>{2}));
    auto u = run_op("Unsqueeze", {strs({2}, {"x", "y"}), i64({2}, {0, -1})}, {}, 13);
    EXPECT_EQ(u[0].dims(), (std::vector<int64_t>{1, 2, 1}));
    EXPECT_EQ(u[0].strings()[1], "y");
    expect_invalid([] { run_op("Squeeze", {f32({2}, {1, 2}), i64({1}, {0})}, {}, 13); }, "not 1");
    expect_invalid(
        [] {
            run_op("Unsqueeze", {f32({2}, {1, 2}), i64({2}, {0, 0})}, {}, 13);
        },
        "repeated");
}

TEST(OpsShape, FlattenAxisZeroAndNegative) {
    auto a = run_op("Flatten", {f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                    ir::attrs(Attribute::make_int("axis", 0)));
    EXPECT_EQ(a[0].dims(), (std::vector<int64_t>{1, 6}));
    auto b = run_op("Flatten", {f32({2, 3, 1}, {1, 2, 3, 4, 5, 6})},
                    ir::attrs(Attribute::make_int("axis", -1)));
    EXPECT_EQ(b[0].dims(), (std::vector<int64_t>{6, 1}));
}

// A negative dim in Expand's shape (from the data) is invalid input; it became a vector size.
TEST(OpsShape, ExpandToANegativeDimIsInvalid) {
    expect_invalid(
        [] {
            run_op("Expand", {f32({3, 1}, {1, 2, 3}), i64({2}, {1, -5})});
        },
        "negative dim");
}

TEST(OpsShape, ExpandAndTileBool) {
    Tensor b = Tensor::from_values<uint8_t>(DataType::kBool, {2, 1}, {1, 0});
    auto e = run_op("Expand", {b, i64({2}, {1, 3})});
    EXPECT_EQ(e[0].dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(std::vector<uint8_t>(e[0].bytes(), e[0].bytes() + 6),
              (std::vector<uint8_t>{1, 1, 1, 0, 0, 0}));
    auto t = run_op("Tile", {strs({2}, {"a", "b"}), i64({1}, {2})});
    EXPECT_EQ(t[0].strings(), (std::vector<std::string>{"a", "b", "a", "b"}));
    expect_invalid(
        [] {
            run_op("Tile", {f32({2}, {1, 2}), i64({2}, {1, 1})});
        },
        "one value per axis");
}

TEST(OpsShape, PadModes) {
    const Tensor x = f32({3}, {1, 2, 3});
    auto pad = [&](const char* mode, int64_t opset = 19) {
        return test::values_f32(run_op("Pad", {x, i64({2}, {2, 2})},
                                       ir::attrs(Attribute::make_string("mode", mode)), opset)[0]);
    };
    EXPECT_EQ(pad("constant"), (std::vector<float>{0, 0, 1, 2, 3, 0, 0}));
    EXPECT_EQ(pad("reflect"), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
    EXPECT_EQ(pad("edge"), (std::vector<float>{1, 1, 1, 2, 3, 3, 3}));
    EXPECT_EQ(pad("wrap"), (std::vector<float>{2, 3, 1, 2, 3, 1, 2}));
    expect_invalid([&] { pad("wrap", 18); }, "unknown mode");
}

TEST(OpsShape, PadNegativeCropsAndAttrBefore11) {
    auto crop = run_op("Pad", {f32({4}, {1, 2, 3, 4}), i64({2}, {-1, 1}), f32({}, {9})});
    EXPECT_EQ(test::values_f32(crop[0]), (std::vector<float>{2, 3, 4, 9}));
    auto old = run_op(
        "Pad", {f32({2}, {1, 2})},
        ir::attrs(Attribute::make_ints("pads", {1, 0}), Attribute::make_float("value", 7)), 2);
    EXPECT_EQ(test::values_f32(old[0]), (std::vector<float>{7, 1, 2}));
}

// A crop at one end and padding at the other: the padding repeats what is kept (ONNX Runtime,
// PyTorch), never the removed elements.
TEST(OpsShape, PadModesActOnWhatTheCropKeeps) {
    const Tensor x = f32({5}, {0, 1, 2, 3, 4});
    auto pad = [&](const char* mode, int64_t b, int64_t e) {
        return test::values_f32(run_op("Pad", {x, i64({2}, {b, e})},
                                       ir::attrs(Attribute::make_string("mode", mode)), 19)[0]);
    };
    EXPECT_EQ(pad("wrap", -1, 2), (std::vector<float>{1, 2, 3, 4, 1, 2}));
    EXPECT_EQ(pad("wrap", 2, -2), (std::vector<float>{1, 2, 0, 1, 2}));
    EXPECT_EQ(pad("reflect", -2, 4), (std::vector<float>{2, 3, 4, 3, 2, 3, 4}));
    EXPECT_EQ(pad("edge", 2, -3), (std::vector<float>{0, 0, 0, 1}));
    EXPECT_EQ(pad("reflect", -1, 1), (std::vector<float>{1, 2, 3, 4, 3}));
}

TEST(OpsShape, PadAxesInputAndStrings) {
    auto a = run_op("Pad", {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {1, 0}), Tensor(), i64({1}, {-1})},
                    {}, 18);
    EXPECT_EQ(a[0].dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(test::values_f32(a[0]), (std::vector<float>{0, 1, 2, 0, 3, 4}));
    auto s = run_op("Pad", {strs({1}, {"a"}), i64({2}, {1, 1}), strs({}, {"-"})});
    EXPECT_EQ(s[0].strings(), (std::vector<std::string>{"-", "a", "-"}));
}

TEST(OpsShape, ShapeStartEndAndSize) {
    const Tensor x = f32({2, 3, 4}, std::vector<float>(24));
    EXPECT_EQ(ints(run_op("Shape", {x}, ir::attrs(Attribute::make_int("start", -2)), 15)[0]),
              (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(ints(run_op("Shape", {x}, ir::attrs(Attribute::make_int("end", 10)), 15)[0]),
              (std::vector<int64_t>{2, 3, 4}));
    EXPECT_EQ(
        run_op("Shape", {x},
               ir::attrs(Attribute::make_int("start", 2), Attribute::make_int("end", 1)), 15)[0]
            .numel(),
        0u);
    EXPECT_EQ(ints(run_op("Size", {strs({0, 2}, {})})[0]), (std::vector<int64_t>{0}));
}

TEST(OpsShape, IdentityPassesStrings) {
    auto out = run_op("Identity", {strs({1}, {"z"})});
    EXPECT_EQ(out[0].strings()[0], "z");
}

TEST(OpsShape, ConstantForms) {
    EXPECT_EQ(
        ints(run_op("Constant", {}, ir::attrs(Attribute::make_ints("value_ints", {1, 2})), 13)[0]),
        (std::vector<int64_t>{1, 2}));
    auto s = run_op("Constant", {}, ir::attrs(Attribute::make_string("value_string", "hi")), 13);
    EXPECT_EQ(s[0].strings()[0], "hi");
    Attribute sparse;
    sparse.name = "sparse_value";
    sparse.type = ir::AttrType::kSparseTensor;
    sparse.sparse_tensors.emplace_back();
    std::vector<Attribute> a;
    a.push_back(std::move(sparse));
    try {
        run_op("Constant", {}, std::move(a), 13);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
        EXPECT_NE(std::string(e.what()).find("sparse_value"), std::string::npos);
    }
}

TEST(OpsShape, ConstantOfShapeDefaultsToFloatZero) {
    auto out = run_op("ConstantOfShape", {i64({2}, {2, 0})});
    EXPECT_EQ(out[0].dtype(), DataType::kFloat32);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 0}));
    auto v = run_op("ConstantOfShape", {i64({1}, {3})},
                    ir::attrs(Attribute::make_tensor("value", i64({1}, {-5}))));
    EXPECT_EQ(ints(v[0]), (std::vector<int64_t>{-5, -5, -5}));
}

TEST(OpsShape, RangeNegativeDeltaAndEmpty) {
    auto a = run_op("Range", {i64({}, {10}), i64({}, {4}), i64({}, {-3})});
    EXPECT_EQ(ints(a[0]), (std::vector<int64_t>{10, 7}));
    auto b = run_op("Range", {f32({}, {1}), f32({}, {1}), f32({}, {1})});
    EXPECT_EQ(b[0].numel(), 0u);
    expect_invalid(
        [] {
            run_op("Range", {i64({}, {0}), i64({}, {4}), i64({}, {0})});
        },
        "delta is zero");
    // A NaN bound was a count of NaN cast to size_t (a vector "larger than max_size()").
    expect_invalid(
        [] {
            run_op("Range", {f32({}, {0}), f32({}, {std::nanf("")}), f32({}, {1})});
        },
        "NaN");
    expect_invalid(
        [] {
            run_op("Range", {f32({}, {0}), f32({}, {INFINITY}), f32({}, {1})});
        },
        "elements");
}

TEST(OpsShape, DepthToSpaceModesRoundTripThroughSpaceToDepth) {
    std::vector<float> v(16);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    const Tensor x = f32({1, 4, 2, 2}, v);
    for (const char* mode : {"DCR", "CRD"}) {
        auto d = run_op(
            "DepthToSpace", {x},
            ir::attrs(Attribute::make_int("blocksize", 2), Attribute::make_string("mode", mode)),
            13);
        EXPECT_EQ(d[0].dims(), (std::vector<int64_t>{1, 1, 4, 4}));
        auto s = run_op("SpaceToDepth", {d[0]}, ir::attrs(Attribute::make_int("blocksize", 2)));
        // SpaceToDepth inverts DepthToSpace in DCR mode only.
        if (std::string(mode) == "DCR") {
            EXPECT_EQ(test::values_f32(s[0]), v);
        }
    }
    auto crd = run_op(
        "DepthToSpace", {x},
        ir::attrs(Attribute::make_int("blocksize", 2), Attribute::make_string("mode", "CRD")), 13);
    EXPECT_EQ(test::values_f32(crd[0])[1], 4.0f);  // CRD: channel c*4 + 0*2 + 1 at (0, 1)
}

TEST(OpsShape, TriluNegativeKAndEyeLikeDtype) {
    auto t = run_op("Trilu", {f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), i64({}, {-1})},
                    ir::attrs(Attribute::make_int("upper", 0)), 14);
    EXPECT_EQ(test::values_f32(t[0]), (std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
    auto e = run_op("EyeLike", {f32({2, 3}, std::vector<float>(6))},
                    ir::attrs(Attribute::make_int("dtype", 7), Attribute::make_int("k", 1)));
    EXPECT_EQ(ints(e[0]), (std::vector<int64_t>{0, 1, 0, 0, 0, 1}));
}

}  // namespace
}  // namespace pg
