// Internal to `run`: --save-outputs in layer-wise mode. The first runner's tensors are written
// straight into the RunResults file as they arrive; the second runner's are spooled to a
// temporary file and appended when the first runner's section is complete, so at most one
// tensor is in memory at a time.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "tensor/tensor.h"

namespace pg::data {
class RunResultsWriter;
}

namespace pg::cli {

class LayerwiseSaver {
  public:
    LayerwiseSaver(const std::string& path, std::string runner0, std::string runner1);
    ~LayerwiseSaver();
    void add(const std::string& name, const Tensor& a, const Tensor& b);
    // Appends the spooled second runner and renames the file into place.
    void finish();

  private:
    void spool(const std::string& name, const Tensor& t);
    bool read_spooled(std::string* name, Tensor* t);
    std::unique_ptr<data::RunResultsWriter> writer_;
    std::string runner1_;
    std::FILE* spool_ = nullptr;
};

}  // namespace pg::cli
