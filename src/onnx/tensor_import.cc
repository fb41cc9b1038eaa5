#include <charconv>
#include <cstring>
#include <limits>
#include <optional>

#include "base/error.h"
#include "onnx/proto_util.h"
#include "onnx/tensor_codec.h"

namespace pg::onnx {

namespace {

std::string tensor_label(const onnxpb::TensorProto& tp) {
    return "tensor '" + tp.name() + "'";
}

uint64_t parse_u64(const std::string& text, const std::string& what) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size())
        throw Error(ErrorKind::kInvalidInput,
                    what + " is not a non-negative integer: '" + text + "'");
    return v;
}

std::vector<int64_t> checked_dims(const onnxpb::TensorProto& tp) {
    std::vector<int64_t> dims(tp.dims().begin(), tp.dims().end());
    for (int64_t d : dims)
        if (d < 0)
            throw Error(ErrorKind::kInvalidInput,
                        tensor_label(tp) + " has a negative dimension (" + std::to_string(d) + ")");
    if (!checked_numel(dims))
        throw Error(ErrorKind::kInvalidInput,
                    tensor_label(tp) + " has an absurd shape (too many elements)");
    return dims;
}

void check_count(const onnxpb::TensorProto& tp, const char* field, uint64_t have, uint64_t want) {
    if (have != want)
        throw Error(ErrorKind::kInvalidInput,
                    tensor_label(tp) + " of type " +
                        dtype_name(static_cast<DataType>(tp.data_type())) + " needs " +
                        std::to_string(want) + " values in " + field + ", found " +
                        std::to_string(have));
}

// Copies typed values of a repeated field into packed little-endian storage of width Out.
template <typename Out, typename Field>
std::string pack_as(const Field& field) {
    std::string bytes(static_cast<size_t>(field.size()) * sizeof(Out), '\0');
    for (int k = 0; k < field.size(); ++k) {
        Out v = static_cast<Out>(field.Get(k));
        std::memcpy(bytes.data() + static_cast<size_t>(k) * sizeof(Out), &v, sizeof(Out));
    }
    return bytes;
}

std::string typed_bytes(const onnxpb::TensorProto& tp, DataType dt, uint64_t numel) {
    switch (dt) {
        case DataType::kFloat32:
            check_count(tp, "float_data", tp.float_data_size(), numel);
            return pack_as<float>(tp.float_data());
        case DataType::kComplex64:
            check_count(tp, "float_data", tp.float_data_size(), numel * 2);
            return pack_as<float>(tp.float_data());
        case DataType::kFloat64:
            check_count(tp, "double_data", tp.double_data_size(), numel);
            return pack_as<double>(tp.double_data());
        case DataType::kComplex128:
            check_count(tp, "double_data", tp.double_data_size(), numel * 2);
            return pack_as<double>(tp.double_data());
        case DataType::kInt64:
            check_count(tp, "int64_data", tp.int64_data_size(), numel);
            return pack_as<int64_t>(tp.int64_data());
        case DataType::kUInt64:
            check_count(tp, "uint64_data", tp.uint64_data_size(), numel);
            return pack_as<uint64_t>(tp.uint64_data());
        case DataType::kUInt32:
            check_count(tp, "uint64_data", tp.uint64_data_size(), numel);
            return pack_as<uint32_t>(tp.uint64_data());
        case DataType::kInt32:
            check_count(tp, "int32_data", tp.int32_data_size(), numel);
            return pack_as<int32_t>(tp.int32_data());
        case DataType::kInt16:
        case DataType::kUInt16:
        case DataType::kFloat16:
        case DataType::kBFloat16:
            check_count(tp, "int32_data", tp.int32_data_size(), numel);
            return pack_as<uint16_t>(tp.int32_data());
        default:
            break;
    }
    const int bits = dtype_bits(dt);
    if (bits == 8) {
        check_count(tp, "int32_data", tp.int32_data_size(), numel);
        return pack_as<uint8_t>(tp.int32_data());
    }
    if (bits == 4 || bits == 2) {  // int32_data holds the packed bytes, one per entry
        check_count(tp, "int32_data", tp.int32_data_size(), *dtype_storage_bytes(dt, numel));
        return pack_as<uint8_t>(tp.int32_data());
    }
    throw Error(ErrorKind::kUnsupported, tensor_label(tp) + " has data type " + dtype_name(dt) +
                                             ", which this version of Polygraph cannot read");
}

Error raw_data_size_error(const onnxpb::TensorProto& tp, DataType dt, uint64_t need,
                          uint64_t found) {
    return Error(ErrorKind::kInvalidInput,
                 tensor_label(tp) + " of type " + dtype_name(dt) + " needs " +
                     std::to_string(need) + " bytes of raw_data, found " + std::to_string(found));
}

bool has_typed_data(const onnxpb::TensorProto& tp) {
    return tp.float_data_size() || tp.int32_data_size() || tp.int64_data_size() ||
           tp.double_data_size() || tp.uint64_data_size() || tp.string_data_size();
}

Tensor decode_tensor(onnxpb::TensorProto& tp, ExternalDataReader& ext, ir::ExternalRef* ref) {
    const DataType dt = static_cast<DataType>(tp.data_type());
    std::vector<int64_t> dims = checked_dims(tp);
    const uint64_t numel = *checked_numel(dims);
    if (tp.has_segment())
        throw Error(ErrorKind::kUnsupported,
                    tensor_label(tp) + " is segmented; segmented tensors are not supported");
    if (dt == DataType::kString) {
        if (tp.has_raw_data() || tp.data_location() == 1)
            throw Error(ErrorKind::kInvalidInput,
                        tensor_label(tp) + ": STRING tensors must use string_data");
        check_count(tp, "string_data", tp.string_data_size(), numel);
        return Tensor::from_strings(std::move(dims),
                                    {tp.string_data().begin(), tp.string_data().end()});
    }
    if (dt == DataType::kUndefined)
        throw Error(ErrorKind::kInvalidInput, tensor_label(tp) + " has no data type (UNDEFINED)");
    if (!dtype_is_known(dt))
        throw Error(ErrorKind::kUnsupported,
                    tensor_label(tp) + " has unknown data type " + std::to_string(tp.data_type()));
    if (tp.data_location() == 1) return ext.read(tp, ref);
    const uint64_t need = *dtype_storage_bytes(dt, numel);
    if (std::optional<SplitPayload> split = ext.take_split(&tp)) {
        if (split->size != need) throw raw_data_size_error(tp, dt, need, split->size);
        return Tensor::from_buffer(dt, std::move(dims), std::move(split->bytes), split->size);
    }
    if (tp.has_raw_data()) {
        if (tp.raw_data().empty() && need > 0 &&
            tp.doc_string().find("TRT_WEIGHTLESS") != std::string::npos)
            return Tensor::placeholder(dt, std::move(dims));  // weight-stripped model
        if (tp.raw_data().size() != need)
            throw raw_data_size_error(tp, dt, need, tp.raw_data().size());
        // Small payloads were parsed into the message's own memory (import.cc parses it apart
        // and releases it after import): copied here into a cache-line aligned buffer, so no
        // tensor keeps a page of it alive. Large ones (files protobuf parsed whole; split files'
        // payloads are taken above) are adopted as they are.
        constexpr size_t kCopyBelow = 64 << 10;
        if (tp.raw_data().size() < kCopyBelow) {
            Tensor t = Tensor::uninitialized(dt, std::move(dims));
            if (need) std::memcpy(t.mutable_bytes(), tp.raw_data().data(), need);
            return t;
        }
        std::string bytes;
        tp.mutable_raw_data()->swap(bytes);
        return Tensor::from_bytes(dt, std::move(dims), std::move(bytes));
    }
    if (!has_typed_data(tp) && numel > 0)
        throw Error(ErrorKind::kInvalidInput,
                    tensor_label(tp) + " has " + std::to_string(numel) + " elements but no data");
    return Tensor::from_bytes(dt, std::move(dims), typed_bytes(tp, dt, numel));
}

}  // namespace

std::optional<SplitPayload> ExternalDataReader::take_split(const onnxpb::TensorProto* tp) {
    const auto it = split_.find(tp);
    if (it == split_.end()) return std::nullopt;
    SplitPayload p = std::move(it->second);
    split_.erase(it);
    return p;
}

Tensor ExternalDataReader::read(const onnxpb::TensorProto& tp, ir::ExternalRef* ref) {
    const std::string label = tensor_label(tp) + " external data";
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    for (const auto& kv : tp.external_data()) {
        if (kv.key() == "location")
            location = kv.value();
        else if (kv.key() == "offset")
            offset = parse_u64(kv.value(), label + " offset");
        else if (kv.key() == "length")
            length = parse_u64(kv.value(), label + " length");
    }
    if (location.empty()) throw Error(ErrorKind::kInvalidInput, label + " has no location");
    const DataType dt = static_cast<DataType>(tp.data_type());
    std::vector<int64_t> dims(tp.dims().begin(), tp.dims().end());
    const uint64_t need = *dtype_storage_bytes(dt, *checked_numel(dims));
    if (ignore_) {
        if (ref) *ref = ir::ExternalRef{location, offset, length.value_or(need)};
        return Tensor::placeholder(dt, std::move(dims));
    }
    if (base_dir_.empty())
        throw Error(ErrorKind::kInvalidInput,
                    label + " refers to '" + location + "' but no folder is known to read it from");
    const std::string path = resolve_inside(base_dir_, location, label);
    auto& file = files_[path];
    if (!file)
        file = with_context("while reading " + label + " from '" + location + "'",
                            [&] { return MappedFile::open(path); });
    const uint64_t size = file->size();
    if (offset > size || (length && *length > size - offset))
        throw Error(ErrorKind::kInvalidInput, label + " (offset " + std::to_string(offset) +
                                                  ", length " + std::to_string(length.value_or(0)) +
                                                  ") runs past the end of '" + location + "' (" +
                                                  std::to_string(size) + " bytes)");
    const uint64_t len = length.value_or(size - offset);
    if (len != need)
        throw Error(ErrorKind::kInvalidInput, label + " has " + std::to_string(len) +
                                                  " bytes, but type " + dtype_name(dt) +
                                                  " and its shape need " + std::to_string(need));
    if (ref) *ref = ir::ExternalRef{location, offset, len};
    return Tensor::from_view(dt, std::move(dims), file->data() + offset, len, file);
}

ir::NamedTensor import_tensor(onnxpb::TensorProto& tp, ExternalDataReader& ext) {
    ir::NamedTensor t;
    t.name = tp.name();
    t.doc_string = tp.doc_string();
    for (const auto& kv : tp.metadata_props()) t.metadata.emplace_back(kv.key(), kv.value());
    t.unknown_fields = unknown_fields_of(tp);
    t.tensor = decode_tensor(tp, ext, &t.loaded_from);
    return t;
}

}  // namespace pg::onnx
