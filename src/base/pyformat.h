// Python-style text of numbers and lists, shared by every layer that prints what Polygraphy
// prints: repr() of a float, list and dict reprs, and C/Python "%.Ng" formatting that spells
// NaN as "nan" whatever its sign bit. To add a format: add a function here and a unit test.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pg {

// Python's repr() of a float: shortest text that reads back the same ("1.0", "1e-05", "inf").
std::string py_float(double v);
// Python's format(v, ".<digits>g"), e.g. py_g(1e-5, 5) == "1e-05"; "nan", "inf", "-inf".
std::string py_g(double v, int digits);
// Python list reprs: "[1, 2]", "[1.0, 0.5]", "['a', 'b']".
std::string py_list(const std::vector<int64_t>& v);
std::string py_list(const std::vector<float>& v);
std::string py_list(const std::vector<std::string>& v);
// Python tuple repr of integers: "(2, 3)", "(2,)", "()".
std::string py_tuple(const std::vector<int64_t>& v);
// Python dict repr of a string->int map in the given order: "{'a': 1, 'b': 2}".
std::string py_dict(const std::vector<std::pair<std::string, int64_t>>& v);

}  // namespace pg
