// Writing JSON text exactly as Python's json.dumps(obj, indent="    ") formats it (what
// Polygraphy's save_json produces): 4-space indent, "key": value, "," at line ends, [] and {}
// for empty containers, ensure_ascii escapes, floats as Python's repr, NaN/Infinity tokens,
// no trailing newline. JsonStream emits the text incrementally, so a writer never has to
// build the whole document in memory.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pg::data {

// Python's repr() of a float ("0.000123", "1e-05", "1.0"), or json's NaN / Infinity tokens.
std::string py_json_float(double v);
// A quoted JSON string with Python's ensure_ascii escaping.
std::string py_json_string(std::string_view s);

// Streams nested JSON arrays and objects to a sink, with Python's indent layout.
// Example: begin_object(); key("a"); raw("1"); end(); gives "{\n    \"a\": 1\n}".
class JsonStream {
  public:
    explicit JsonStream(std::function<void(std::string_view)> sink) : sink_(std::move(sink)) {}
    void begin_object() { open('{', '}'); }
    void begin_array() { open('[', ']'); }
    // In an object: the next member's key (the value follows with raw/begin_*).
    void key(std::string_view k);
    // A complete scalar value (already formatted), as an array element or after key().
    void raw(std::string_view text);
    void string(std::string_view s) { raw(py_json_string(s)); }
    // Closes the innermost array or object.
    void end();

  private:
    struct Level {
        char opener, closer;
        size_t count = 0;
    };
    void open(char opener, char closer);
    void element_prefix();
    std::function<void(std::string_view)> sink_;
    std::vector<Level> stack_;
    bool after_key_ = false;
};

}  // namespace pg::data
