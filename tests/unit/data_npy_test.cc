// data/npy + data/npz + data/data_files: numpy's exact .npy bytes, round trips, deflated
// archives, ONNX test-data folders, and hostile headers (kInvalidInput, never a big allocation).
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <functional>

#include "base/error.h"
#include "base/fs.h"
#include "data/data_files.h"
#include "data/npy.h"
#include "data/npz.h"
#include "onnx/tensor_file.h"
#include "support/test_paths.h"

namespace pg {
namespace {

ErrorKind kind_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return e.kind();
    }
    ADD_FAILURE() << "no pg::Error thrown";
    return ErrorKind::kInternal;
}

Tensor decode(const std::string& bytes) {
    return data::npy_decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t");
}

Tensor sample_f32() {
    return Tensor::from_values<float>(DataType::kFloat32, {1, 1, 2, 2}, {0.5f, 1.f, 2.f, 3.f});
}

TEST(Npy, HeaderIsNumpys) {
    const std::string b = data::npy_encode(sample_f32());
    ASSERT_EQ(b.size(), 128u + 16u);
    EXPECT_EQ(b.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
    EXPECT_EQ(b.substr(10, 65),
              "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }");
    EXPECT_EQ(b[127], '\n');
    const std::string s = data::npy_encode(Tensor::from_values<int32_t>(DataType::kInt32, {}, {5}));
    EXPECT_EQ(s.size() % 64, 4u);
    EXPECT_NE(s.find("'shape': (), }"), std::string::npos);
    const std::string v = data::npy_encode(Tensor::zeros(DataType::kBool, {3}));
    EXPECT_NE(v.find("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"),
              std::string::npos);
}

TEST(Npy, RoundTripsEveryMappedDtype) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16, DataType::kInt8,
                        DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kUInt8,
                        DataType::kUInt16, DataType::kUInt32, DataType::kUInt64, DataType::kBool}) {
        Tensor t = Tensor::zeros(dt, {2, 3});
        uint8_t* p = t.mutable_bytes();
        for (uint64_t i = 0; i < t.nbytes(); ++i)
            p[i] = dt == DataType::kBool ? i % 2 : uint8_t(i * 37);
        Tensor back = decode(data::npy_encode(t));
        EXPECT_TRUE(back.same_contents(t)) << dtype_name(dt);
    }
    const std::string path = test::make_temp_dir() + "/a.npy";
    data::save_npy(path, sample_f32());
    EXPECT_TRUE(data::load_npy(path).same_contents(sample_f32()));
}

// bfloat16 / float8 / float4 values are written as float32 (numpy_compatible) and read back as
// the model's type, bit for bit; a value the type cannot hold is rounded, and counted.
TEST(Npy, SmallFloatsComeBackFromFloat32) {
    const std::vector<float> v{0.5f, -1.5f, 3.0f, 0.0f, -0.0f, 6.0f};
    for (const DataType dt : {DataType::kBFloat16, DataType::kFloat8E4M3FN, DataType::kFloat8E5M2,
                              DataType::kFloat8E4M3FNUZ, DataType::kFloat4E2M1}) {
        const Tensor f = Tensor::from_values<float>(DataType::kFloat32, {2, 3}, v);
        const Tensor back = data::from_numpy_compatible(f, dt, "t");
        ASSERT_EQ(back.dtype(), dt) << dtype_name(dt);
        const Tensor again = data::numpy_compatible(back, "t");
        ASSERT_EQ(again.dtype(), DataType::kFloat32);
        for (uint64_t i = 0; i < v.size(); ++i)
            EXPECT_EQ(again.element_as_double(i), v[i]) << dtype_name(dt) << " " << i;
    }
    const Tensor f = Tensor::from_values<float>(DataType::kFloat32, {2}, {1.0f, 1.0625f});
    const Tensor e = data::from_numpy_compatible(f, DataType::kFloat8E4M3FN, "t");
    EXPECT_EQ(e.element_as_double(1), 1.0);  // 1 + 1/16 is a tie between 1 and 1.125: even
    // numpy's own types and other tensors pass through.
    EXPECT_EQ(data::from_numpy_compatible(f, DataType::kFloat16, "t").dtype(), DataType::kFloat32);
    const Tensor i = Tensor::from_values<int32_t>(DataType::kInt32, {1}, {3});
    EXPECT_EQ(data::from_numpy_compatible(i, DataType::kBFloat16, "t").dtype(), DataType::kInt32);
}

TEST(Npy, BigEndianIsSwapped) {
    std::string b =
        data::npy_encode(Tensor::from_values<int32_t>(DataType::kInt32, {1}, {0x01020304}));
    b.replace(b.find("<i4"), 3, ">i4");
    std::string& data = b;
    std::reverse(data.end() - 4, data.end());
    EXPECT_EQ(decode(b).data<int32_t>()[0], 0x01020304);
}

TEST(Npy, HostileHeadersAreInvalidInput) {
    const std::string good = data::npy_encode(sample_f32());
    auto with_header = [&](const std::string& dict) {
        std::string h = dict + "\n";
        std::string b = std::string("\x93NUMPY\x01\x00", 8);
        b += char(h.size() & 0xff);
        b += char(h.size() >> 8);
        return b + h + std::string(16, '\0');
    };
    std::string lying = good;
    lying[8] = '\xff', lying[9] = '\x7f';  // header length past the end of the file
    EXPECT_EQ(kind_of([&] { decode(lying); }), ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of([&] { decode(good.substr(0, 130)); }), ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of([&] { decode("\x93NUM"); }), ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of([&] {
                  decode(
                      with_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                  "(100000000000, 100000000000, 1000000), }"));
              }),
              ErrorKind::kInvalidInput);
    EXPECT_EQ(
        kind_of([&] {
            decode(with_header(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }"));
        }),
        ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of([&] {
                  decode(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"));
              }),
              ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of([&] { decode(with_header("{'descr': '<f4', 'shape': (2,), }")); }),
              ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of([&] {
                  decode(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"));
              }),
              ErrorKind::kInvalidInput);  // 20 bytes needed, 16 present
    EXPECT_EQ(kind_of([&] {
                  decode(with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }"));
              }),
              ErrorKind::kUnsupported);
    EXPECT_EQ(kind_of([&] {
                  decode(with_header("{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }"));
              }),
              ErrorKind::kUnsupported);
}

TEST(Npz, RoundTripKeepsNamesAndOrder) {
    runners::NamedTensors arrays = {
        {"z", sample_f32()}, {"a", Tensor::from_values<int64_t>(DataType::kInt64, {2}, {-1, 9})}};
    const std::string path = test::make_temp_dir() + "/f.npz";
    data::save_npz(path, arrays);
    auto back = data::load_npz(path);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].first, "z");
    EXPECT_EQ(back[1].first, "a");
    EXPECT_TRUE(back[0].second.same_contents(arrays[0].second));
    EXPECT_TRUE(back[1].second.same_contents(arrays[1].second));
    auto feeds = data::load_inputs(path);
    ASSERT_EQ(feeds.size(), 1u);
    EXPECT_EQ(feeds[0][1].first, "a");
}

// A one-member zip whose member is deflated (as numpy.savez_compressed writes).
std::string deflated_zip(const std::string& name, const std::string& payload) {
    std::string comp(compressBound(payload.size()) + 64, '\0');
    z_stream zs{};
    deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    zs.next_in = (Bytef*)payload.data();
    zs.avail_in = payload.size();
    zs.next_out = (Bytef*)comp.data();
    zs.avail_out = comp.size();
    deflate(&zs, Z_FINISH);
    comp.resize(zs.total_out);
    deflateEnd(&zs);
    const uint32_t crc = crc32(0, (const Bytef*)payload.data(), payload.size());
    auto put = [](std::string& s, uint64_t v, int n) {
        for (int i = 0; i < n; ++i) s += char((v >> (8 * i)) & 0xff);
    };
    auto fields = [&](std::string& s) {
        put(s, 20, 2), put(s, 0, 2), put(s, 8, 2), put(s, 0, 4), put(s, crc, 4);
        put(s, comp.size(), 4), put(s, payload.size(), 4), put(s, name.size(), 2), put(s, 0, 2);
    };
    std::string z;
    put(z, 0x04034b50, 4), fields(z), z += name, z += comp;
    std::string cd;
    put(cd, 0x02014b50, 4), put(cd, 20, 2), fields(cd), put(cd, 0, 6), put(cd, 0, 4), put(cd, 0, 4);
    cd += name;
    const uint64_t off = z.size();
    z += cd;
    put(z, 0x06054b50, 4), put(z, 0, 4), put(z, 1, 2), put(z, 1, 2), put(z, cd.size(), 4);
    put(z, off, 4), put(z, 0, 2);
    return z;
}

TEST(Npz, ReadsDeflatedMembers) {
    const std::string z = deflated_zip("x.npy", data::npy_encode(sample_f32()));
    auto back = data::npz_decode(z, "mem");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].first, "x");
    EXPECT_TRUE(back[0].second.same_contents(sample_f32()));
}

TEST(Npz, HostileArchivesAreInvalidInput) {
    const std::string dir = test::make_temp_dir();
    data::save_npz(dir + "/g.npz", {{"x", sample_f32()}});
    const std::string good = read_file(dir + "/g.npz");
    std::string bad_offset = good;
    bad_offset[bad_offset.size() - 6] = '\x7f';  // directory offset past the end
    std::string bad_crc = good;
    bad_crc[30 + 5 + 130] ^= 1;  // a data byte
    std::string bomb = deflated_zip("x.npy", data::npy_encode(sample_f32()));
    const size_t cd = bomb.find("PK\x01\x02");
    bomb[cd + 24 + 3] = '\x7f';  // uncompressed size ~2 GiB from a few bytes
    for (const std::string& b : {good.substr(0, good.size() - 10), bad_offset, bad_crc, bomb}) {
        EXPECT_EQ(kind_of([&] { data::npz_decode(b, "mem"); }), ErrorKind::kInvalidInput);
    }
}

TEST(Npz, AnArchiveWithoutArraysLoadsAgain) {
    // A fuzzer finding: an empty feed dict saved as .npz (a bare end record) was then read as JSON.
    const std::string path = test::make_temp_dir() + "/empty.npz";
    data::save_inputs(path, {{}});
    const data::FeedList back = data::load_inputs(path);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(back[0].empty());
}

TEST(DataFiles, NpyIsNamedAfterTheModelInput) {
    const std::string path = test::make_temp_dir() + "/arr.npy";
    data::save_npy(path, sample_f32());
    EXPECT_EQ(data::load_inputs(path)[0][0].first, "arr");
    data::ModelNames names{{"image"}, {}};
    EXPECT_EQ(data::load_inputs(path, names)[0][0].first, "image");
}

TEST(DataFiles, OnnxTestDataFolders) {
    const std::string dir = test::make_temp_dir();
    for (int set = 0; set < 2; ++set) {
        const std::string d = dir + "/test_data_set_" + std::to_string(set);
        std::filesystem::create_directories(d);
        onnx::write_tensor_pb(d + "/input_0.pb", "pb_name", sample_f32());
        onnx::write_tensor_pb(d + "/input_1.pb", "",
                              Tensor::from_values<int64_t>(DataType::kInt64, {1}, {set}));
        onnx::write_tensor_pb(d + "/output_0.pb", "y", sample_f32());
    }
    auto feeds = data::load_inputs(dir, {{"x"}, {}});
    ASSERT_EQ(feeds.size(), 2u);
    EXPECT_EQ(feeds[1][0].first, "x");
    EXPECT_EQ(feeds[1][1].first, "input_1");
    EXPECT_EQ(feeds[1][1].second.data<int64_t>()[0], 1);
    EXPECT_EQ(data::load_inputs(dir + "/test_data_set_0")[0][0].first, "pb_name");
    auto outs = data::load_outputs(dir);
    ASSERT_EQ(outs.runners.size(), 1u);
    EXPECT_EQ(outs.runners[0].iterations.size(), 2u);
    EXPECT_EQ(outs.runners[0].iterations[0].outputs[0].first, "y");
}

TEST(DataFiles, SaveNpzNeedsOneFeed) {
    const std::string dir = test::make_temp_dir();
    data::FeedList two(2);
    EXPECT_EQ(kind_of([&] { data::save_inputs(dir + "/two.npz", two); }), ErrorKind::kUnsupported);
    EXPECT_FALSE(std::filesystem::exists(dir + "/two.npz"));
    EXPECT_EQ(kind_of([&] { data::load_inputs(dir + "/missing.json"); }), ErrorKind::kIo);
}

}  // namespace
}  // namespace pg
