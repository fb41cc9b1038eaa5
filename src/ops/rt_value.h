// What flows along an edge at run time: a tensor, a sequence of tensors, or nothing (an empty
// optional). Maps are not supported by any ONNX operator we run.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace pg::ops {

class RtValue {
public:
    enum class Kind { kNone, kTensor, kSequence };

    RtValue() = default;
    static RtValue of(Tensor t) {
        RtValue v;
        v.kind_ = Kind::kTensor;
        v.tensor_ = std::move(t);
        return v;
    }
    static RtValue of_sequence(std::vector<Tensor> s) {
        RtValue v;
        v.kind_ = Kind::kSequence;
        v.sequence_ = std::move(s);
        return v;
    }
    Kind kind() const { return kind_; }
    bool is_tensor() const { return kind_ == Kind::kTensor; }
    bool is_sequence() const { return kind_ == Kind::kSequence; }
    bool is_none() const { return kind_ == Kind::kNone; }
    const Tensor& tensor() const { return tensor_; }
    Tensor& tensor() { return tensor_; }
    const std::vector<Tensor>& sequence() const { return sequence_; }

private:
    Kind kind_ = Kind::kNone;
    Tensor tensor_;
    std::vector<Tensor> sequence_;
};

}  // namespace pg::ops
