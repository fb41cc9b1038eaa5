// Tensor::from_view keeps aligned data as a view and copies data that typed reads would access
// misaligned (an .npz member or external data at an odd offset).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace pg {
namespace {

// 64 bytes at an 8-byte boundary, holding floats from byte `shift` on.
struct Bytes {
    alignas(8) uint8_t raw[72] = {};
    const uint8_t* at(int shift) {
        const float v[4] = {1.5f, -2, 3, 4};
        std::memcpy(raw + shift, v, sizeof v);
        return raw + shift;
    }
};

bool aligned_to(const void* p, uintptr_t n) {
    return reinterpret_cast<uintptr_t>(p) % n == 0;
}

TEST(TensorView, AlignedDataStaysAView) {
    Bytes b;
    const uint8_t* p = b.at(4);
    const Tensor t = Tensor::from_view(DataType::kFloat32, {4}, p, 16, nullptr);
    EXPECT_EQ(t.bytes(), p);
}

TEST(TensorView, MisalignedFloatsAreCopiedToAlignedStorage) {
    Bytes b;
    const uint8_t* p = b.at(3);
    const Tensor t = Tensor::from_view(DataType::kFloat32, {4}, p, 16, nullptr);
    EXPECT_NE(t.bytes(), p);
    EXPECT_TRUE(aligned_to(t.bytes(), 64));
    EXPECT_TRUE(
        t.same_contents(Tensor::from_values<float>(DataType::kFloat32, {4}, {1.5f, -2, 3, 4})));
}

TEST(TensorView, ElementAlignmentIsWhatCounts) {
    Bytes b;
    const uint8_t* p = b.at(2);
    // Two-byte elements at an even address, bytes anywhere: views.
    EXPECT_EQ(Tensor::from_view(DataType::kFloat16, {8}, p, 16, nullptr).bytes(), p);
    EXPECT_EQ(Tensor::from_view(DataType::kInt8, {3}, b.raw + 1, 3, nullptr).bytes(), b.raw + 1);
    // complex64 needs its float parts aligned, not 8 bytes: a view at 4.
    EXPECT_EQ(Tensor::from_view(DataType::kComplex64, {2}, b.raw + 4, 16, nullptr).bytes(),
              b.raw + 4);
    EXPECT_NE(Tensor::from_view(DataType::kInt64, {2}, b.raw + 4, 16, nullptr).bytes(), b.raw + 4);
}

}  // namespace
}  // namespace pg
