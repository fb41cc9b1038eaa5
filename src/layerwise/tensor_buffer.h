// Internal: a bounded, name-keyed hand-over of tensors from a producer thread to a consumer.
// The producer blocks while the held bytes exceed the budget, unless the consumer is waiting
// for a tensor that is not held (then holding more is the only way forward).
#pragma once

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <string>

#include "tensor/tensor.h"

namespace pg::layerwise {

class TensorBuffer {
  public:
    explicit TensorBuffer(uint64_t budget) : budget_(budget) {}
    // Producer side.
    void put(const std::string& name, const std::string& producer, const Tensor& t);
    void finish(std::exception_ptr error);
    // Consumer gives up: pending and future put() calls return at once, dropping their tensor.
    void cancel();
    // Consumer side: the tensor named `name`, or false when the producer finished without it.
    // Rethrows the producer's error.
    bool take(const std::string& name, Tensor* t, std::string* producer);
    uint64_t peak() const { return peak_; }

  private:
    struct Item {
        Tensor tensor;
        std::string producer;
    };
    std::mutex mu_;
    std::condition_variable cv_;
    std::map<std::string, Item> items_;
    uint64_t budget_, held_ = 0, peak_ = 0;
    std::string waiting_for_;
    bool done_ = false;
    bool cancelled_ = false;
    std::exception_ptr error_;
};

}  // namespace pg::layerwise
