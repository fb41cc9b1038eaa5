// String ops: StringNormalizer, StringConcat, StringSplit, RegexFullMatch (RE2, the syntax ONNX
// specifies: matching takes time linear in the string and no stack per character, where
// std::regex's backtracking crashed on a 200,000-character string and ran for minutes on
// "(a+)+$" against 40 a's and a '!').
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "ir/graph.h"
#include "ops/broadcast.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

const Tensor& string_input(KernelContext& ctx, size_t i, const char* op) {
    const Tensor& t = ctx.input(i);
    if (!t.is_string())
        fail(std::string(op) + ": input " + std::to_string(i) + " must be a string tensor");
    return t;
}

std::string change_case(std::string s, const std::string& action) {
    if (action == "LOWER")
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return std::tolower(c); });
    if (action == "UPPER")
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return std::toupper(c); });
    return s;
}

KernelFn make_string_normalizer(const Attrs& a, int64_t) {
    const std::string action = a.get_string("case_change_action", "NONE");
    const bool case_sensitive = a.get_flag("is_case_sensitive", false);
    std::set<std::string> stop;
    for (const auto& w : a.get_strings("stopwords"))
        stop.insert(case_sensitive ? w : change_case(w, "LOWER"));
    return [=](KernelContext& ctx) {
        const Tensor& x = string_input(ctx, 0, "StringNormalizer");
        std::vector<std::string> kept;
        for (const auto& s : x.strings())
            if (!stop.count(case_sensitive ? s : change_case(s, "LOWER")))
                kept.push_back(change_case(s, action));
        if (kept.empty()) kept.push_back("");  // ONNX: an all-stopword input gives [""]
        std::vector<int64_t> dims = x.dims();
        dims.back() = static_cast<int64_t>(kept.size());
        ctx.set_output(0, Tensor::from_strings(dims, std::move(kept)));
    };
}

KernelFn make_string_concat(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& a = string_input(ctx, 0, "StringConcat");
        const Tensor& b = string_input(ctx, 1, "StringConcat");
        const Dims out = broadcast_shape(a.dims(), b.dims());
        int64_t n = 1;
        for (int64_t d : out) n *= d;
        std::vector<std::string> v(static_cast<size_t>(n));
        for_each_broadcast2(out, broadcast_strides(a.dims(), out), broadcast_strides(b.dims(), out),
                            [&](int64_t o, int64_t ia, int64_t ib) {
                                v[static_cast<size_t>(o)] = a.strings()[static_cast<size_t>(ia)] +
                                                            b.strings()[static_cast<size_t>(ib)];
                            });
        ctx.set_output(0, Tensor::from_strings(out, std::move(v)));
    };
}

// Splits like Python's str.split(delimiter, maxsplit); an empty delimiter splits on runs of
// whitespace and drops empty pieces. ONNX's text says leading and trailing whitespace is removed,
// so the rest kept whole after maxsplit splits loses its trailing whitespace too (Python's keeps
// it; ONNX Runtime follows the text).
std::vector<std::string> split(const std::string& s, const std::string& delim, int64_t maxsplit) {
    std::vector<std::string> out;
    if (delim.empty()) {
        size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
            if (i >= s.size()) break;
            if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
                size_t end = s.size();
                while (std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
                out.push_back(s.substr(i, end - i));
                break;
            }
            size_t j = i;
            while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
            out.push_back(s.substr(i, j - i));
            i = j;
        }
        return out;
    }
    size_t start = 0;
    while (true) {
        size_t at = s.find(delim, start);
        if (at == std::string::npos ||
            (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit)) {
            out.push_back(s.substr(start));
            return out;
        }
        out.push_back(s.substr(start, at - start));
        start = at + delim.size();
    }
}

KernelFn make_string_split(const Attrs& a, int64_t) {
    const std::string delim = a.get_string("delimiter", "");
    const int64_t maxsplit = a.has("maxsplit") ? a.get_int("maxsplit", -1) : -1;
    return [=](KernelContext& ctx) {
        const Tensor& x = string_input(ctx, 0, "StringSplit");
        std::vector<std::vector<std::string>> parts;
        size_t width = 0;
        for (const auto& s : x.strings()) {
            parts.push_back(split(s, delim, maxsplit));
            width = std::max(width, parts.back().size());
        }
        std::vector<int64_t> dims = x.dims();
        std::vector<int64_t> counts;
        std::vector<std::string> flat;
        for (auto& p : parts) {
            counts.push_back(static_cast<int64_t>(p.size()));
            p.resize(width);
            flat.insert(flat.end(), p.begin(), p.end());
        }
        std::vector<int64_t> ydims = dims;
        ydims.push_back(static_cast<int64_t>(width));
        ctx.set_output(0, Tensor::from_strings(ydims, std::move(flat)));
        ctx.set_output(1, Tensor::from_values(DataType::kInt64, dims, counts));
    };
}

KernelFn make_regex_full_match(const Attrs& a, int64_t) {
    const std::string pattern = a.get_string("pattern", "");
    RE2::Options options;
    options.set_log_errors(false);  // the error goes into our message instead
    auto re = std::make_shared<const RE2>(pattern, options);
    if (!re->ok()) fail("RegexFullMatch: invalid pattern '" + pattern + "': " + re->error());
    return [re](KernelContext& ctx) {
        const Tensor& x = string_input(ctx, 0, "RegexFullMatch");
        Tensor out = Tensor::zeros(DataType::kBool, x.dims());
        uint8_t* y = out.mutable_bytes();
        for (uint64_t i = 0; i < x.numel(); ++i) y[i] = RE2::FullMatch(x.strings()[i], *re);
        ctx.set_output(0, std::move(out));
    };
}

}  // namespace

void register_string_ops(OpTable& t) {
    using C = NumericContract;
    t.add("StringNormalizer", 10, C::kExact, make_string_normalizer);
    t.add("StringConcat", 20, C::kExact, make_string_concat);
    t.add("StringSplit", 20, C::kExact, make_string_split);
    t.add("RegexFullMatch", 20, C::kExact, make_regex_full_match);
}

}  // namespace pg::ops
