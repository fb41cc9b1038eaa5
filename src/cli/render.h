// Text renderings shared by the tools: Python-style numbers and lists, numpy-style arrays,
// and Polygraphy's TensorMetadata blocks.
#pragma once

#include <string>
#include <vector>

#include "base/pyformat.h"
#include "tensor/tensor.h"

namespace pg::cli {

// Python-style number and list text lives in base/pyformat.h; re-exported for the tools.
using pg::py_dict;
using pg::py_float;
using pg::py_list;
// numpy-style array text ("[[1. 1.]\n [1. 1.]]"), summarized with "..." past 1000 elements.
std::string numpy_str(const Tensor& t);
// Indents every line of `text` by `n` spaces.
std::string indent_lines(const std::string& text, int n);

}  // namespace pg::cli
