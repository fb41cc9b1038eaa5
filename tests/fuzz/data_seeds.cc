// Seed data files for the load_data fuzzer, written with our own writers (data_seeds.h).
#include "data_seeds.h"

#include <string>

#include "data/data_files.h"
#include "data/npy.h"
#include "onnx/tensor_file.h"

namespace {

using pg::DataType;
using pg::Tensor;

Tensor floats() {
    return Tensor::from_values<float>(DataType::kFloat32, {2, 3}, {1, -2, 3.5f, 0, 1e-30f, 7});
}

Tensor longs() {
    return Tensor::from_values<int64_t>(DataType::kInt64, {4}, {1, -2, 1LL << 40, 0});
}

}  // namespace

void write_data_seeds(const std::string& dir) {
    pg::data::save_npy(dir + "/f32.npy", floats());
    pg::data::save_npy(dir + "/i64.npy", longs());
    pg::data::save_npy(dir + "/bool.npy",
                       Tensor::from_values<uint8_t>(DataType::kBool, {1, 2, 2}, {1, 0, 0, 1}));
    pg::data::save_npy(dir + "/f16_scalar.npy",
                       Tensor::from_values<uint16_t>(DataType::kFloat16, {}, {0x3c00}));
    pg::data::save_npy(dir + "/u8_empty.npy",
                       Tensor::from_values<uint8_t>(DataType::kUInt8, {0, 3}, {}));
    const pg::data::FeedList two{{{"x", floats()}, {"y", longs()}}, {{"x", floats()}}};
    pg::data::save_inputs(dir + "/inputs.json", two);
    pg::data::save_inputs(dir + "/feeds.npz", {two[0]});
    pg::data::RunResults results;
    results.runners.push_back({"onnxrt-runner-N0", {{{{"out", floats()}}, 0.25, "onnxrt"}}});
    results.runners.push_back({"ref", {{{{"out", longs()}}, std::nullopt, "ref"}}});
    pg::data::save_outputs(dir + "/outputs.json", results);
    pg::onnx::write_tensor_pb(dir + "/input_0.pb", "x", floats());
    pg::onnx::write_tensor_pb(dir + "/output_0.pb", "out", longs());
}
