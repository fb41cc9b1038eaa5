#include "layerwise/tensor_buffer.h"

namespace pg::layerwise {

void TensorBuffer::put(const std::string& name, const std::string& producer, const Tensor& t) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
        const bool consumer_stuck = !waiting_for_.empty() && !items_.count(waiting_for_);
        return cancelled_ || items_.empty() || held_ + t.nbytes() <= budget_ || consumer_stuck;
    });
    if (cancelled_) return;
    items_[name] = Item{t, producer};
    held_ += t.nbytes();
    peak_ = std::max(peak_, held_);
    cv_.notify_all();
}

void TensorBuffer::finish(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    error_ = error;
    cv_.notify_all();
}

void TensorBuffer::cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
}

bool TensorBuffer::take(const std::string& name, Tensor* t, std::string* producer) {
    std::unique_lock<std::mutex> lock(mu_);
    waiting_for_ = name;
    cv_.notify_all();
    cv_.wait(lock, [&] { return items_.count(name) || done_; });
    waiting_for_.clear();
    if (error_) std::rethrow_exception(error_);
    auto it = items_.find(name);
    if (it == items_.end()) return false;
    *t = std::move(it->second.tensor);
    *producer = std::move(it->second.producer);
    held_ -= t->nbytes();
    items_.erase(it);
    cv_.notify_all();
    return true;
}

}  // namespace pg::layerwise
