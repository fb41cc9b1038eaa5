// New tensors larger than the machine's memory are refused before any allocation (a hostile
// shape could only swap or be killed); placeholders and views of such shapes allocate nothing and
// stay allowed.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "base/error.h"
#include "tensor/tensor.h"

namespace pg {
namespace {

// 2^40 floats: 4 TiB, more than any build machine has.
const std::vector<int64_t> kHuge = {1 << 20, 1 << 20};

std::string refusal(const std::function<void()>& make) {
    try {
        make();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        return e.what();
    }
    return "no error";
}

TEST(TensorAlloc, TensorsLargerThanTheMachineAreRefused) {
    const std::string z = refusal([] { Tensor::zeros(DataType::kFloat32, kHuge); });
    EXPECT_NE(z.find("float32 tensor of shape [1048576, 1048576] would need"), std::string::npos)
        << z;
    EXPECT_NE(refusal([] { Tensor::uninitialized(DataType::kFloat64, kHuge); }).find("would need"),
              std::string::npos);
    EXPECT_NE(refusal([] { Tensor::zeros(DataType::kString, kHuge); }).find("would need"),
              std::string::npos);
}

TEST(TensorAlloc, PlaceholdersOfAnySizeAllocateNothing) {
    const Tensor p = Tensor::placeholder(DataType::kFloat32, kHuge);
    EXPECT_FALSE(p.has_data());
    EXPECT_EQ(p.numel(), uint64_t{1} << 40);
    EXPECT_EQ(Tensor::zeros(DataType::kFloat32, {4}).numel(), 4u);
}

}  // namespace
}  // namespace pg
