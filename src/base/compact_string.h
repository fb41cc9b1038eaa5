// CompactString: a string that is usually empty, held in one pointer (8 bytes, std::string
// takes 32). The IR keeps several rarely set strings per value, node, attribute and dim (doc
// strings, unknown protobuf fields, denotations, symbolic dim names); a large model has
// thousands of each, so their inline size is a measurable part of the reference's memory
// (docs/performance.md, memory). Unset and empty are the same state.
//
// It reads like a const std::string (str(), an implicit conversion to const std::string&,
// empty(), size(), ==, +) and assigns from strings, so code written against a std::string
// member mostly reads the same; in-place edits go through mutable_str(). To add an operation,
// express it through str() / mutable_str() so the unset state stays equal to "".
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace pg {

class CompactString {
  public:
    CompactString() = default;
    CompactString(const std::string& s) { assign(s); }  // NOLINT: implicit, like std::string
    CompactString(std::string&& s) { assign(std::move(s)); }
    CompactString(const char* s) { assign(std::string(s)); }
    CompactString(const CompactString& o) { assign(o.str()); }
    CompactString(CompactString&&) noexcept = default;
    CompactString& operator=(const CompactString& o) {
        if (this != &o) assign(o.str());
        return *this;
    }
    CompactString& operator=(CompactString&&) noexcept = default;
    CompactString& operator=(std::string s) {
        assign(std::move(s));
        return *this;
    }
    CompactString& operator=(const char* s) {
        assign(std::string(s));
        return *this;
    }

    // The text ("" when unset).
    const std::string& str() const { return p_ ? *p_ : empty_string(); }
    operator const std::string&() const { return str(); }  // NOLINT: reads as a std::string
    bool empty() const { return !p_ || p_->empty(); }
    size_t size() const { return p_ ? p_->size() : 0; }
    const char* c_str() const { return str().c_str(); }
    const char* data() const { return str().data(); }
    // The string to edit in place (allocated on first use).
    std::string* mutable_str() {
        if (!p_) p_ = std::make_unique<std::string>();
        return p_.get();
    }
    CompactString& operator+=(std::string_view s) {
        if (!s.empty()) mutable_str()->append(s);
        return *this;
    }
    void clear() { p_.reset(); }

    friend bool operator==(const CompactString& a, const CompactString& b) {
        return a.str() == b.str();
    }
    friend bool operator==(const CompactString& a, const std::string& b) { return a.str() == b; }
    friend bool operator==(const CompactString& a, const char* b) { return a.str() == b; }
    friend std::string operator+(const CompactString& a, const std::string& b) {
        return a.str() + b;
    }
    friend std::string operator+(const std::string& a, const CompactString& b) {
        return a + b.str();
    }
    friend std::string operator+(const CompactString& a, const char* b) { return a.str() + b; }
    friend std::string operator+(const char* a, const CompactString& b) { return a + b.str(); }

  private:
    static const std::string& empty_string() {
        static const std::string empty;
        return empty;
    }
    void assign(std::string s) {
        if (s.empty())
            p_.reset();
        else if (p_)
            *p_ = std::move(s);
        else
            p_ = std::make_unique<std::string>(std::move(s));
    }

    std::unique_ptr<std::string> p_;
};

}  // namespace pg
