// Text renderings shared by the tools: Python-style numbers and lists, numpy-style arrays,
// and Polygraphy's TensorMetadata blocks.
#pragma once

#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace pg::cli {

// Python's repr() of a float: shortest text that reads back the same ("1.0", "1e-05", "inf").
std::string py_float(double v);
// Python list reprs.
std::string py_list(const std::vector<int64_t>& v);
std::string py_list(const std::vector<float>& v);
std::string py_list(const std::vector<std::string>& v);
// Python dict repr of a string->int map in the given order: "{'a': 1, 'b': 2}".
std::string py_dict(const std::vector<std::pair<std::string, int64_t>>& v);
// numpy-style array text ("[[1. 1.]\n [1. 1.]]"), summarized with "..." past 1000 elements.
std::string numpy_str(const Tensor& t);
// Indents every line of `text` by `n` spaces.
std::string indent_lines(const std::string& text, int n);

}  // namespace pg::cli
