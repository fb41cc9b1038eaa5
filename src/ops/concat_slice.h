// Concats written in place (runtime/fuse_concat.cc plans them): the Convs producing a Concat's
// inputs along axis 1 write straight into the Concat's output, and the Concat step only checks
// (and copies what is not in place). The producers share one buffer, held in a runtime slot and
// allocated by whichever producer runs first; each writes its channel range and outputs a view
// of it. Views and the buffer share the storage; the buffer's bytes are written only where no
// view lies yet (or, when a Concat copies in an input that was not in place, with the very bytes
// the views there already hold), so no value anyone holds ever changes.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/kernel.h"

namespace pg::ops {

// One producer's part of a Concat along axis 1: channels [offset, offset + its own) of `total`,
// both counted after the channels of `base` when set (a chain's first input, copied in by the
// first Concat; its channels are known only at run time: from the base for the producer that
// allocates the buffer, from the buffer's size after).
struct ConcatSlice {
    RtValue* buffer = nullptr;  // the shared buffer's slot (empty until a producer allocates it)
    int64_t offset = 0, total = 0;
    const RtValue* base = nullptr;
};

// Storage for output dims `dims` of type `dt`: `data` is writable and `tensor` is set as the
// output once written. A slice of the shared buffer (allocated here when the slot is empty) when
// `s` is set, dims are [1, c, rest...] with offset + c <= total, and the buffer is
// [1, total, rest...] of type dt; otherwise a fresh uninitialized tensor.
struct OutputSpace {
    Tensor tensor;
    uint8_t* data = nullptr;
};
OutputSpace output_space(const ConcatSlice* s, DataType dt, const std::vector<int64_t>& dims);

// The Concat step over its inputs plus the shared buffer (the last input): when the buffer is
// there and the concatenation is [1, c, rest...] of its type with c at most its channels, inputs
// not already in place are copied into it and its first c channels become the output (the whole
// buffer for a chain's last Concat); otherwise `plain` (the Concat kernel) runs on the inputs
// without the buffer.
KernelFn make_concat_in_place(KernelFn plain);

}  // namespace pg::ops
