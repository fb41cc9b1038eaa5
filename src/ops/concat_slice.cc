// Concats written in place (concat_slice.h).
#include "ops/concat_slice.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace pg::ops {

namespace {

// The elements per channel of dims [n, c, rest...] (the product of rest).
int64_t channel_size(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (size_t i = 2; i < dims.size(); ++i) n *= dims[i];
    return n;
}

// dims is [1, c, rest...] and buffer [1, total, rest...] with the same rest.
bool fits_buffer(const std::vector<int64_t>& dims, const std::vector<int64_t>& buffer) {
    return dims.size() >= 2 && dims.size() == buffer.size() && dims[0] == 1 && buffer[0] == 1 &&
           std::equal(dims.begin() + 2, dims.end(), buffer.begin() + 2);
}

// Bytes per element of dt, or 0 for strings and packed sub-byte types.
uint64_t element_bytes(DataType dt) {
    const int bits = dtype_bits(dt);
    return bits > 0 && bits % 8 == 0 ? static_cast<uint64_t>(bits / 8) : 0;
}

// Writable bytes of the shared buffer (concat_slice.h: only where no view lies yet).
uint8_t* buffer_bytes(const Tensor& b) {
    return const_cast<uint8_t*>(b.bytes());
}

}  // namespace

// Channels of the slice's base (0 without one): what the buffer holds beyond the chain's Conv
// channels once allocated (the base itself may be released by then: its last reader, the
// chain's first Concat, can run before later producers), else the base's own; -1 when the base
// is not a tensor that fits dims.
int64_t base_channels(const ConcatSlice& s, DataType dt, const std::vector<int64_t>& dims) {
    if (!s.base) return 0;
    if (s.buffer && s.buffer->is_tensor() && s.buffer->tensor().rank() >= 2)
        return std::max<int64_t>(-1, s.buffer->tensor().dims()[1] - s.total);
    if (!s.base->is_tensor() || s.base->tensor().dtype() != dt) return -1;
    const std::vector<int64_t>& b = s.base->tensor().dims();
    return fits_buffer(b, dims) ? b[1] : -1;
}

OutputSpace output_space(const ConcatSlice* s, DataType dt, const std::vector<int64_t>& dims) {
    const uint64_t elem = element_bytes(dt);
    const int64_t base = s ? base_channels(*s, dt, dims) : -1;
    const bool usable = s && s->buffer && elem > 0 && base >= 0 && dims.size() >= 2 &&
                        dims[0] == 1 && dims[1] >= 0 && s->offset + dims[1] <= s->total;
    const int64_t offset = usable ? base + s->offset : 0, total = usable ? base + s->total : 0;
    if (usable && s->buffer->is_none()) {
        std::vector<int64_t> all = dims;
        all[1] = total;
        *s->buffer = RtValue::of(Tensor::uninitialized(dt, all));
    }
    if (usable && s->buffer->is_tensor()) {
        const Tensor& b = s->buffer->tensor();
        if (b.dtype() == dt && b.dims()[1] == total && fits_buffer(dims, b.dims())) {
            const uint64_t at = static_cast<uint64_t>(offset * channel_size(dims)) * elem;
            const uint64_t size = static_cast<uint64_t>(dims[1] * channel_size(dims)) * elem;
            uint8_t* data = buffer_bytes(b) + at;
            return {Tensor::from_view(dt, dims, data, size, std::make_shared<const Tensor>(b)),
                    data};
        }
    }
    Tensor t = Tensor::uninitialized(dt, dims);
    uint8_t* data = t.mutable_bytes();
    return {std::move(t), data};
}

KernelFn make_concat_in_place(KernelFn plain) {
    return [plain = std::move(plain)](KernelContext& ctx) {
        const size_t n = ctx.num_inputs() - 1;  // the inputs before the buffer
        const RtValue* slot = ctx.value(n);
        bool in_place = slot && slot->is_tensor() && n > 0;
        int64_t channels = 0;
        for (size_t i = 0; in_place && i < n; ++i) {
            in_place = ctx.has_input(i) && ctx.input(i).dtype() == slot->tensor().dtype() &&
                       fits_buffer(ctx.input(i).dims(), slot->tensor().dims());
            if (in_place) channels += ctx.input(i).dims()[1];
        }
        if (!in_place || channels > slot->tensor().dims()[1]) {
            std::vector<const RtValue*> inputs;
            for (size_t i = 0; i < n; ++i) inputs.push_back(ctx.value(i));
            KernelContext sub(ctx.node(), inputs, ctx.num_outputs(), ctx.pool(), nullptr);
            plain(sub);
            for (size_t k = 0; k < ctx.num_outputs(); ++k)
                ctx.set_output(k, std::move(sub.outputs()[k]));
            return;
        }
        const Tensor& b = slot->tensor();
        uint8_t* at = buffer_bytes(b);
        for (size_t i = 0; i < n; ++i) {
            const Tensor& x = ctx.input(i);
            if (x.bytes() != at && x.nbytes() > 0) std::memcpy(at, x.bytes(), x.nbytes());
            at += x.nbytes();
        }
        if (channels == b.dims()[1]) return ctx.set_output(0, b);
        std::vector<int64_t> dims = b.dims();  // a chain's earlier Concat: the first channels
        dims[1] = channels;
        const uint64_t size = static_cast<uint64_t>(at - buffer_bytes(b));
        ctx.set_output(0, Tensor::from_view(b.dtype(), std::move(dims), b.bytes(), size,
                                            std::make_shared<const Tensor>(b)));
    };
}

}  // namespace pg::ops
