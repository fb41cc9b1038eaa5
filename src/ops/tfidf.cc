// TfIdfVectorizer: counts n-grams (with skips) of int64 or string tokens from a pool, as ONNX's
// reference does: a trie of the pool's n-grams, scanned per skip distance, unigrams once.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <variant>

#include "base/heap.h"
#include "ir/graph.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

using Token = std::variant<int64_t, std::string>;

struct TrieNode {
    int64_t id = 0;  // 1-based n-gram id; 0 = no n-gram ends here
    std::map<Token, std::unique_ptr<TrieNode>> next;
};

struct TfIdfConfig {
    std::string mode;
    int64_t min_len = 1, max_len = 1, max_skip = 0, output_size = 0;
    std::vector<int64_t> indexes;
    std::vector<float> weights;
    std::shared_ptr<TrieNode> root = std::make_shared<TrieNode>();
};

// Adds `count` n-grams of length n from pool[start...] to the trie, ids from *next_id.
void add_ngrams(TrieNode& root, const std::vector<Token>& pool, size_t start, int64_t count,
                int64_t n, int64_t* next_id) {
    for (int64_t g = 0; g < count; ++g) {
        TrieNode* node = &root;
        for (int64_t k = 0; k < n; ++k) {
            auto& child = node->next[pool.at(start + static_cast<size_t>(g * n + k))];
            if (!child) child = std::make_unique<TrieNode>();
            node = child.get();
        }
        node->id = (*next_id)++;
    }
}

// The pool's n-gram counts checked against the pool: starts in [0, pool size], not decreasing.
void check_counts(const std::vector<int64_t>& counts, size_t pool) {
    int64_t before = 0;
    for (int64_t c : counts) {
        if (c < before || c > static_cast<int64_t>(pool))
            fail("TfIdfVectorizer: ngram_counts must rise from 0 to at most the pool's " +
                 std::to_string(pool) + " tokens, got " + std::to_string(c) + " after " +
                 std::to_string(before));
        before = c;
    }
}

// Lengths, skips, output indexes and weights checked: every n-gram of the pool has an output
// index in [0, 2^31), and IDF / TFIDF weights cover the output, whose size (the largest index
// + 1) is set here, once each index is known to be in range.
void check_config(TfIdfConfig& c, int64_t grams) {
    if (c.min_len < 1 || c.max_len < c.min_len)
        fail("TfIdfVectorizer: need 1 <= min_gram_length <= max_gram_length, got " +
             std::to_string(c.min_len) + " and " + std::to_string(c.max_len));
    if (c.max_skip < 0)
        fail("TfIdfVectorizer: max_skip_count must not be negative, got " +
             std::to_string(c.max_skip));
    if (static_cast<int64_t>(c.indexes.size()) < grams)
        fail("TfIdfVectorizer: " + std::to_string(c.indexes.size()) +
             " ngram_indexes for the pool's " + std::to_string(grams) + " n-grams");
    for (int64_t i : c.indexes) {
        if (i < 0 || i >= (int64_t{1} << 31))
            fail("TfIdfVectorizer: ngram_indexes holds " + std::to_string(i) +
                 ", outside [0, 2^31)");
        c.output_size = std::max(c.output_size, i + 1);
    }
    if (!c.weights.empty() && static_cast<int64_t>(c.weights.size()) < c.output_size)
        fail("TfIdfVectorizer: " + std::to_string(c.weights.size()) + " weights for " +
             std::to_string(c.output_size) + " outputs");
}

TfIdfConfig parse_tfidf(const Attrs& a) {
    TfIdfConfig c;
    if (!a.has("mode")) fail("TfIdfVectorizer: required attribute 'mode' is missing");
    c.mode = a.get_string("mode", "TF");
    c.min_len = a.require_int("min_gram_length");
    c.max_len = a.require_int("max_gram_length");
    c.max_skip = a.require_int("max_skip_count");
    c.indexes = a.get_ints("ngram_indexes");
    c.weights = a.get_floats("weights");
    std::vector<Token> pool;
    for (int64_t v : a.get_ints("pool_int64s")) pool.emplace_back(v);
    for (const auto& s : a.get_strings("pool_strings")) pool.emplace_back(s);
    const auto counts = a.get_ints("ngram_counts");
    check_counts(counts, pool.size());
    std::vector<int64_t> per_length(counts.size());  // the pool's n-grams of length i + 1
    for (size_t i = 0; i < counts.size(); ++i) {
        const int64_t end =
            i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
        per_length[i] = (end - counts[i]) / (static_cast<int64_t>(i) + 1);
    }
    int64_t grams = 0;
    for (int64_t g : per_length) grams += g;
    check_config(c, grams);
    int64_t id = 1;
    for (size_t i = 0; i < counts.size(); ++i) {
        const int64_t n = static_cast<int64_t>(i) + 1;
        if (n >= c.min_len && n <= c.max_len)
            add_ngrams(*c.root, pool, static_cast<size_t>(counts[i]), per_length[i], n, &id);
        else
            id += per_length[i];
    }
    return c;
}

Token token_at(const Tensor& x, uint64_t i) {
    if (x.is_string()) return x.strings()[i];
    return element_int64(x, i, "TfIdfVectorizer");
}

void count_row(const TfIdfConfig& c, const Tensor& x, uint64_t row_begin, int64_t row_size,
               int64_t* freq) {
    int64_t start_len = c.min_len;
    // Skips of the row's length or more join no two tokens (and max_skip_count may be huge).
    const int64_t skips = std::min(c.max_skip, std::max<int64_t>(row_size - 1, 0)) + 1;
    for (int64_t skip = 1; skip <= skips; ++skip) {
        for (int64_t s = 0; s < row_size; ++s) {
            if (s + skip * (start_len - 1) >= row_size) break;
            const TrieNode* node = c.root.get();
            int64_t len = 1;
            for (int64_t at = s; !node->next.empty() && len <= c.max_len && at < row_size;
                 at += skip, ++len) {
                auto it = node->next.find(token_at(x, row_begin + static_cast<uint64_t>(at)));
                if (it == node->next.end()) break;
                node = it->second.get();
                if (len >= start_len && node->id != 0)
                    ++freq[c.indexes.at(static_cast<size_t>(node->id - 1))];
            }
        }
        if (start_len == 1 && ++start_len > c.max_len) break;  // unigrams are counted once
    }
}

float weight_of(const TfIdfConfig& c, int64_t f, size_t i) {
    if (c.mode == "TF") return static_cast<float>(f);
    if (c.mode == "IDF") return f > 0 ? (c.weights.empty() ? 1.0f : c.weights[i]) : 0.0f;
    if (c.mode == "TFIDF")
        return c.weights.empty() ? static_cast<float>(f) : c.weights[i] * static_cast<float>(f);
    fail("TfIdfVectorizer: unknown mode '" + c.mode + "'");
}

KernelFn make_tfidf(const Attrs& a, int64_t) {
    auto c = std::make_shared<TfIdfConfig>(parse_tfidf(a));
    return [c](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.rank() > 2) fail("TfIdfVectorizer: input must be [C] or [B, C]");
        const int64_t rows = x.rank() == 2 ? x.dims()[0] : 1;
        const int64_t cols = x.rank() == 0 ? 1 : x.dims().back();
        require_memory_for(static_cast<double>(rows) * static_cast<double>(c->output_size) * 12,
                           "TfIdfVectorizer's " + std::to_string(c->output_size) + " outputs");
        std::vector<int64_t> freq(static_cast<size_t>(rows * c->output_size), 0);
        for (int64_t r = 0; r < rows; ++r)
            count_row(*c, x, static_cast<uint64_t>(r * cols), cols,
                      freq.data() + r * c->output_size);  // no outputs: an empty vector
        std::vector<float> y(freq.size());
        for (size_t i = 0; i < freq.size(); ++i)
            y[i] = weight_of(*c, freq[i], i % static_cast<size_t>(c->output_size));
        std::vector<int64_t> dims = x.rank() == 2 ? std::vector<int64_t>{rows, c->output_size}
                                                  : std::vector<int64_t>{c->output_size};
        ctx.set_output(0, Tensor::from_values(DataType::kFloat32, dims, y));
    };
}

}  // namespace

void register_tfidf_ops(OpTable& t) {
    t.add("TfIdfVectorizer", 9, NumericContract::kExact, make_tfidf);
}

}  // namespace pg::ops
