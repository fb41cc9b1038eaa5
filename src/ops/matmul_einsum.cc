// Einsum reference: see matmul_einsum.h. Accumulates in T (float32 for float32).
#include "ops/matmul_einsum.h"

#include <algorithm>
#include <map>

#include "ops/kernel.h"

namespace pg::ops {

namespace {

constexpr int kEllipsisBase = 52;  // label ids: a-z, A-Z = 0..51, ellipsis axes from 52 on

int letter_id(char ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
    fail(std::string("Einsum: invalid label '") + ch + "' in equation");
}

// Label ids of one term; an ellipsis expands to `ell` axes right-aligned in [52, 52 + ell_rank).
std::vector<int> term_labels(const std::string& term, int64_t rank, int ell_rank, bool is_output) {
    const size_t dots = term.find("...");
    std::string letters = term;
    if (dots != std::string::npos) letters.erase(dots, 3);
    if (letters.find('.') != std::string::npos)
        fail("Einsum: malformed ellipsis in '" + term + "'");
    const int64_t ell = dots == std::string::npos ? 0
                        : is_output               ? ell_rank
                                                  : rank - static_cast<int64_t>(letters.size());
    if (ell < 0 || (!is_output && ell + static_cast<int64_t>(letters.size()) != rank))
        fail("Einsum: term '" + term + "' does not match its input's rank");
    std::vector<int> out;
    for (size_t i = 0; i < term.size(); ++i) {
        if (i == dots) {
            for (int64_t e = 0; e < ell; ++e) out.push_back(kEllipsisBase + ell_rank - ell + e);
            i += 2;
        } else {
            out.push_back(letter_id(term[i]));
        }
    }
    return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out(1);
    for (char ch : s) {
        if (ch == sep)
            out.emplace_back();
        else
            out.back().push_back(ch);
    }
    return out;
}

// The implicit output: ellipsis axes, then letters used exactly once, in alphabetical order.
std::vector<int> implicit_output(const std::vector<std::vector<int>>& ins, int ell_rank) {
    std::vector<int> out;
    for (int e = 0; e < ell_rank; ++e) out.push_back(kEllipsisBase + e);
    std::vector<int> uses(kEllipsisBase, 0);
    for (const auto& t : ins)
        for (int l : t)
            if (l < kEllipsisBase) ++uses[l];
    for (int l = 26; l < 52; ++l)  // uppercase sorts before lowercase
        if (uses[l] == 1) out.push_back(l);
    for (int l = 0; l < 26; ++l)
        if (uses[l] == 1) out.push_back(l);
    return out;
}

}  // namespace

EinsumPlan plan_einsum(const std::string& equation, const std::vector<std::vector<int64_t>>& dims) {
    std::string eq;
    for (char ch : equation)
        if (ch != ' ') eq.push_back(ch);
    const size_t arrow = eq.find("->");
    const auto terms = split(eq.substr(0, arrow), ',');
    if (terms.size() != dims.size()) fail("Einsum: equation has a different number of inputs");
    int ell_rank = 0;
    for (size_t i = 0; i < terms.size(); ++i) {
        if (terms[i].find("...") == std::string::npos) continue;
        std::string letters = terms[i];
        letters.erase(letters.find("..."), 3);
        ell_rank = std::max<int>(ell_rank, static_cast<int>(dims[i].size() - letters.size()));
    }
    EinsumPlan p;
    p.label_size.assign(kEllipsisBase + ell_rank, -1);
    for (size_t i = 0; i < terms.size(); ++i) {
        p.input_labels.push_back(
            term_labels(terms[i], static_cast<int64_t>(dims[i].size()), ell_rank, false));
        for (size_t ax = 0; ax < dims[i].size(); ++ax) {
            int64_t& s = p.label_size[p.input_labels[i][ax]];
            const int64_t d = dims[i][ax];
            if (s == -1 || s == 1)
                s = d;
            else if (d != 1 && d != s)
                fail("Einsum: label sizes differ between inputs");
        }
    }
    p.output_labels = arrow == std::string::npos
                          ? implicit_output(p.input_labels, ell_rank)
                          : term_labels(eq.substr(arrow + 2), 0, ell_rank, true);
    for (int l : p.output_labels)
        if (p.label_size[l] < 0) fail("Einsum: output label does not appear in any input");
    return p;
}

template <typename T>
Tensor einsum_reference(const std::string& equation, const std::vector<Tensor>& inputs) {
    std::vector<std::vector<int64_t>> dims;
    for (const Tensor& t : inputs) {
        if (t.dtype() != inputs[0].dtype()) fail("Einsum: inputs have different types");
        dims.push_back(t.dims());
    }
    const EinsumPlan p = plan_einsum(equation, dims);
    const size_t nl = p.label_size.size(), ni = inputs.size();
    // Loop order: output labels, then summed labels; strides[label][input].
    std::vector<int> order = p.output_labels;
    for (size_t l = 0; l < nl; ++l)
        if (p.label_size[l] > 0 && std::find(order.begin(), order.end(), int(l)) == order.end())
            order.push_back(static_cast<int>(l));
    std::vector<std::vector<int64_t>> stride(nl, std::vector<int64_t>(ni, 0));
    for (size_t i = 0; i < ni; ++i) {
        int64_t s = 1;
        for (size_t ax = dims[i].size(); ax-- > 0;) {
            const int l = p.input_labels[i][ax];
            if (dims[i][ax] != 1 || p.label_size[l] == 1) stride[l][i] += s;
            s *= dims[i][ax];
        }
    }
    std::vector<int64_t> out_dims;
    for (int l : p.output_labels) out_dims.push_back(p.label_size[l]);
    Tensor out = Tensor::zeros(inputs[0].dtype(), out_dims);
    T* dst = reinterpret_cast<T*>(out.mutable_bytes());
    int64_t inner = 1;  // combinations of the summed labels
    for (size_t o = p.output_labels.size(); o < order.size(); ++o) inner *= p.label_size[order[o]];
    std::vector<int64_t> idx(order.size(), 0), off(ni, 0);
    if (out.numel() == 0) return out;
    for (uint64_t o = 0; o < out.numel(); ++o) {
        T acc = T(0);
        for (int64_t s = 0; s < inner; ++s) {
            T prod = T(1);
            for (size_t i = 0; i < ni; ++i)
                prod = static_cast<T>(prod * inputs[i].data<T>()[off[i]]);
            acc = static_cast<T>(acc + prod);
            for (size_t a = order.size(); a-- > 0;) {  // odometer over every label
                const int l = order[a];
                for (size_t i = 0; i < ni; ++i) off[i] += stride[l][i];
                if (++idx[a] < p.label_size[l]) break;
                for (size_t i = 0; i < ni; ++i) off[i] -= stride[l][i] * p.label_size[l];
                idx[a] = 0;
            }
        }
        dst[o] = acc;
    }
    return out;
}

#define PG_EINSUM(T) \
    template Tensor einsum_reference<T>(const std::string&, const std::vector<Tensor>&);
PG_EINSUM(float)
PG_EINSUM(double)
PG_EINSUM(int8_t)
PG_EINSUM(int16_t)
PG_EINSUM(int32_t)
PG_EINSUM(int64_t)
PG_EINSUM(uint8_t)
PG_EINSUM(uint16_t)
PG_EINSUM(uint32_t)
PG_EINSUM(uint64_t)
#undef PG_EINSUM

}  // namespace pg::ops
