#include "ops/tensor_shape_take.h"

#include <algorithm>
#include <cstring>

#include "base/float16.h"
#include "ops/dispatch.h"
#include "ops/tensor_util.h"
#include "ops/transpose_tiles.h"

namespace pg::ops {

namespace {

constexpr int64_t kOffsetMask = (int64_t{1} << 44) - 1;
constexpr int64_t kGrain = 1 << 15;

// Sub-byte types: element i of packed storage (low bits first).
uint8_t get_bits(const uint8_t* p, int64_t i, int bits) {
    const int64_t pos = i * bits;
    return static_cast<uint8_t>((p[pos / 8] >> (pos % 8)) & ((1 << bits) - 1));
}

void put_bits(uint8_t* p, int64_t i, int bits, uint8_t v) {
    const int64_t pos = i * bits;
    p[pos / 8] = static_cast<uint8_t>(p[pos / 8] | (v << (pos % 8)));
}

Tensor take_strings(const std::vector<const Tensor*>& src, Dims dims,
                    const std::vector<int64_t>& refs) {
    std::vector<std::string> out(refs.size());
    for (size_t i = 0; i < refs.size(); ++i)
        out[i] = src[static_cast<size_t>(refs[i] >> 44)]->strings()[refs[i] & kOffsetMask];
    return Tensor::from_strings(std::move(dims), std::move(out));
}

Tensor take_bits(const std::vector<const Tensor*>& src, Dims dims, const std::vector<int64_t>& refs,
                 int bits) {
    Tensor out = Tensor::zeros(src[0]->dtype(), std::move(dims));
    uint8_t* dst = out.mutable_bytes();
    for (size_t i = 0; i < refs.size(); ++i) {
        const Tensor* s = src[static_cast<size_t>(refs[i] >> 44)];
        put_bits(dst, static_cast<int64_t>(i), bits,
                 get_bits(s->bytes(), refs[i] & kOffsetMask, bits));
    }
    return out;
}

}  // namespace

Tensor take(const std::vector<const Tensor*>& sources, Dims dims, const std::vector<int64_t>& refs,
            ThreadPool* pool, const char* op) {
    const DataType dt = sources.at(0)->dtype();
    for (const Tensor* s : sources)
        if (s->dtype() != dt)
            fail(std::string(op) + ": inputs have different types (" + dtype_name(dt) + " and " +
                 dtype_name(s->dtype()) + ")");
    if (static_cast<int64_t>(refs.size()) != count_of(dims))
        throw Error(ErrorKind::kInternal, std::string(op) + ": ref map size mismatch");
    if (dt == DataType::kString) return take_strings(sources, std::move(dims), refs);
    const int bits = dtype_bits(dt);
    if (bits > 0 && bits < 8) return take_bits(sources, std::move(dims), refs, bits);
    Tensor out = Tensor::uninitialized(dt, std::move(dims));
    dispatch_by_size(dt, op, [&]<typename T>() {
        T* dst = reinterpret_cast<T*>(out.mutable_bytes());
        std::vector<const T*> src;
        for (const Tensor* s : sources) src.push_back(s->data<T>());
        parallel_ranges(pool, static_cast<int64_t>(refs.size()), [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) {
                const int64_t r = refs[static_cast<size_t>(i)];
                dst[i] = src[static_cast<size_t>(r >> 44)][r & kOffsetMask];
            }
        });
    });
    return out;
}

Tensor with_dims(const Tensor& t, Dims dims) {
    if (count_of(dims) != static_cast<int64_t>(t.numel()))
        throw Error(ErrorKind::kInternal, "with_dims: element count differs");
    if (t.is_string()) return Tensor::from_strings(std::move(dims), t.strings());
    return t.reshaped(std::move(dims));  // shares the (immutable) storage
}

Tensor scalar_of(DataType dt, double v) {
    Tensor out = Tensor::zeros(dt, {});
    if (dt == DataType::kString || v == 0) return out;  // all-zero bits are 0 in every type
    uint8_t* p = out.mutable_bytes();
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
    switch (dt) {
        case DataType::kFloat16:
            put(float_to_half_bits(static_cast<float>(v)));
            break;
        case DataType::kBFloat16:
            put(float_to_bfloat16_bits(static_cast<float>(v)));
            break;
        case DataType::kBool:
            put(static_cast<uint8_t>(v != 0));
            break;
        default:
            dispatch_numeric(dt, "scalar", [&]<typename T>() { put(static_cast<T>(v)); });
    }
    return out;
}

int64_t saturating_mul(int64_t a, int64_t b) {
    int64_t r = 0;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t count_of(const Dims& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n = saturating_mul(n, d);
    return n;
}

std::vector<int64_t> ref_table(const Dims& dims) {
    constexpr double kBytesPerElement = sizeof(int64_t) + 16;  // the ref and the largest element
    return std::vector<int64_t>(static_cast<size_t>(
        checked_output_count(dims, kBytesPerElement, "", " (with its index map)")));
}

Dims strides_of(const Dims& dims) {
    Dims s(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
    return s;
}

std::vector<int64_t> strided_refs(const Dims& dims, const Dims& strides, int64_t base) {
    std::vector<int64_t> refs = ref_table(dims);
    const int64_t n = static_cast<int64_t>(refs.size());
    if (n == 0) return refs;
    const size_t rank = dims.size();
    if (rank == 0) return {base};
    const int64_t inner = dims[rank - 1], step = strides[rank - 1];
    std::vector<int64_t> c(rank, 0);
    int64_t off = base;
    for (int64_t o = 0; o < n; o += inner) {
        for (int64_t k = 0; k < inner; ++k) refs[static_cast<size_t>(o + k)] = off + k * step;
        for (size_t ax = rank - 1; ax-- > 0;) {
            off += strides[ax];
            if (++c[ax] < dims[ax]) break;
            off -= strides[ax] * dims[ax];
            c[ax] = 0;
        }
    }
    return refs;
}

int64_t wrap_index(int64_t i, int64_t n, const char* op) {
    if (i < -n || i >= n)
        fail(std::string(op) + ": index " + std::to_string(i) + " is out of range [" +
             std::to_string(-n) + ", " + std::to_string(n) + ")");
    return i < 0 ? i + n : i;
}

Tensor concat_plain(const std::vector<const Tensor*>& in, const Dims& out, size_t axis,
                    ThreadPool* pool) {
    const int64_t outer = count_of(Dims(out.begin(), out.begin() + static_cast<int64_t>(axis)));
    const int64_t out_row = count_of(out) / std::max<int64_t>(outer, 1);
    std::vector<int64_t> refs = ref_table(out);
    int64_t start = 0;
    for (size_t k = 0; k < in.size(); ++k) {
        const int64_t row = outer ? static_cast<int64_t>(in[k]->numel()) / outer : 0;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t j = 0; j < row; ++j)
                refs[static_cast<size_t>(o * out_row + start + j)] =
                    src_ref(static_cast<int64_t>(k), o * row + j);
        start += row;
    }
    return take(in, out, refs, pool, "Concat");
}

namespace {

// fn over [0, rows) of `row_items` elements each, in parallel when there are many elements.
void parallel_rows(ThreadPool* pool, int64_t rows, int64_t row_items,
                   const std::function<void(int64_t, int64_t)>& fn) {
    if (rows <= 0) return;
    if (!pool || pool->num_threads() <= 1 || rows < 2 || rows * row_items < 2 * kGrain)
        return fn(0, rows);
    pool->parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(row_items, 1)), fn);
}

// Element size in bytes for the fast data-movement paths; 0 when they do not apply.
size_t movable_bytes(DataType dt) {
    const int bits = dt == DataType::kString ? 0 : dtype_bits(dt);
    return bits > 0 && bits % 8 == 0 ? static_cast<size_t>(bits / 8) : 0;
}

// One contiguous copy of a concatenation.
struct Piece {
    uint8_t* dst;
    const uint8_t* src;
    size_t n;
};

// The copies of concat_fast, cut into pieces of at most `most` bytes (a channel concat of one
// image is a handful of copies, which the pool could not otherwise share).
std::vector<Piece> concat_pieces(const std::vector<const Tensor*>& in, int64_t outer, uint8_t* dst,
                                 size_t out_row, size_t most) {
    std::vector<Piece> pieces;
    for (int64_t o = 0; o < outer; ++o) {
        size_t start = 0;
        for (const Tensor* t : in) {
            const size_t row = t->nbytes() / static_cast<size_t>(outer);
            for (size_t at = 0; at < row; at += most)
                pieces.push_back({dst + o * out_row + start + at, t->bytes() + o * row + at,
                                  std::min(most, row - at)});
            start += row;
        }
    }
    return pieces;
}

}  // namespace

Tensor concat_fast(const std::vector<const Tensor*>& in, const Dims& out, size_t axis,
                   ThreadPool* pool) {
    const size_t es = movable_bytes(in.at(0)->dtype());
    for (const Tensor* t : in)
        if (t->dtype() != in[0]->dtype() || !es) return concat_plain(in, out, axis, pool);
    const int64_t outer = count_of(Dims(out.begin(), out.begin() + static_cast<int64_t>(axis)));
    Tensor y = Tensor::uninitialized(in[0]->dtype(), out);
    if (outer == 0 || y.numel() == 0) return y;
    const size_t out_row = y.nbytes() / static_cast<size_t>(outer);
    uint8_t* dst = y.mutable_bytes();
    if (outer < 64) {  // few long rows: copy them in pieces of kGrain elements
        const std::vector<Piece> pieces =
            concat_pieces(in, outer, dst, out_row, static_cast<size_t>(kGrain) * es);
        const auto n = static_cast<int64_t>(pieces.size());
        parallel_rows(pool, n, static_cast<int64_t>(y.numel()) / n, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) {
                const Piece& p = pieces[static_cast<size_t>(i)];
                std::memcpy(p.dst, p.src, p.n);
            }
        });
        return y;
    }
    parallel_rows(pool, outer, static_cast<int64_t>(y.numel()) / outer, [&](int64_t b, int64_t e) {
        size_t start = 0;
        for (const Tensor* t : in) {
            const size_t row = t->nbytes() / static_cast<size_t>(outer);
            for (int64_t o = b; o < e; ++o)
                std::memcpy(dst + o * out_row + start, t->bytes() + o * row, row);
            start += row;
        }
    });
    return y;
}

Tensor transpose_plain(const Tensor& x, const Dims& perm, ThreadPool* pool) {
    const Dims in_strides = strides_of(x.dims());
    Dims out(perm.size()), strides(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
        out[i] = x.dims()[static_cast<size_t>(perm[i])];
        strides[i] = in_strides[static_cast<size_t>(perm[i])];
    }
    return take1(x, out, strided_refs(out, strides), pool, "Transpose");
}

namespace {

// Drops the size-1 axes of output `dims` (with input `strides`) and merges each axis into the
// one before it when the two are one run of the input (outer stride = inner stride * inner
// size), so the innermost run is as long as possible. Leaves at least one axis.
void merge_contiguous_axes(Dims& dims, Dims& strides) {
    Dims d, s;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == 1) continue;
        if (!d.empty() && s.back() == strides[i] * dims[i]) {
            d.back() *= dims[i], s.back() = strides[i];
        } else {
            d.push_back(dims[i]), s.push_back(strides[i]);
        }
    }
    if (d.empty()) d.push_back(1), s.push_back(1);
    dims = std::move(d), strides = std::move(s);
}

// The output (merged `dims`, input `strides`) as planes of dims[-2] x dims[-1] whose rows are
// the input's unit-stride axis: each plane a block transpose (transpose_tiles.h), in strips of
// 32 rows over the pool.
void transpose_planes32(const Tensor& x, const Dims& dims, const Dims& strides, Tensor& y,
                        ThreadPool* pool) {
    constexpr int64_t kStrip = 32;
    const size_t last = dims.size() - 1;
    const int64_t inner = dims[last], len = dims[last - 1], step = strides[last];
    const Dims plane_dims(dims.begin(), dims.end() - 2);
    const int64_t strips = (len + kStrip - 1) / kStrip;
    const auto* src = reinterpret_cast<const uint32_t*>(x.bytes());
    auto* dst = reinterpret_cast<uint32_t*>(y.mutable_bytes());
    parallel_rows(pool, count_of(plane_dims) * strips, kStrip * inner, [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u) {
            const int64_t p = u / strips, k0 = u % strips * kStrip;
            int64_t off = 0, rem = p;
            for (size_t a = plane_dims.size(); a-- > 0;)
                off += rem % plane_dims[a] * strides[a], rem /= plane_dims[a];
            transpose_block32(src + off + k0, step, dst + (p * len + k0) * inner, inner,
                              std::min(kStrip, len - k0), inner);
        }
    });
}

}  // namespace

Tensor transpose_fast(const Tensor& x, const Dims& perm, ThreadPool* pool) {
    if (!movable_bytes(x.dtype()) || perm.empty()) return transpose_plain(x, perm, pool);
    const Dims in_strides = strides_of(x.dims());
    Dims out(perm.size()), strides(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
        out[i] = x.dims()[static_cast<size_t>(perm[i])];
        strides[i] = in_strides[static_cast<size_t>(perm[i])];
    }
    Tensor y = Tensor::uninitialized(x.dtype(), out);
    Dims dims = out;
    merge_contiguous_axes(dims, strides);
    const int64_t inner = dims.back(), rows = inner ? count_of(dims) / inner : 0;
    if (movable_bytes(x.dtype()) == 4 && dims.size() >= 2 && strides.back() != 1 &&
        strides[dims.size() - 2] == 1) {
        transpose_planes32(x, dims, strides, y, pool);
        return y;
    }
    const Dims outer_dims(dims.begin(), dims.end() - 1);
    dispatch_by_size(x.dtype(), "Transpose", [&]<typename T>() {
        const T* src = x.data<T>();
        T* dst = reinterpret_cast<T*>(y.mutable_bytes());
        const int64_t step = strides.back();
        parallel_rows(pool, rows, inner, [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) {  // output row r: its source offset
                int64_t off = 0, rem = r;
                for (size_t a = outer_dims.size(); a-- > 0;)
                    off += rem % outer_dims[a] * strides[a], rem /= outer_dims[a];
                const T* s = src + off;
                T* d = dst + r * inner;
                if (step == 1)  // a contiguous run of the input (e.g. a channel shuffle's planes)
                    std::memcpy(d, s, static_cast<size_t>(inner) * sizeof(T));
                else
                    for (int64_t j = 0; j < inner; ++j) d[j] = s[j * step];
            }
        });
    });
    return y;
}

void parallel_ranges(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (!pool || pool->num_threads() <= 1 || n < 2 * kGrain) {
        if (n > 0) fn(0, n);
        return;
    }
    pool->parallel_for(n, kGrain, fn);
}

}  // namespace pg::ops
