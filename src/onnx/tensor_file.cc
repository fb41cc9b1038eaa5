#include "onnx/tensor_file.h"

#include <climits>

#include "base/error.h"
#include "base/fs.h"
#include "onnx/onnx.pb.h"
#include "onnx/tensor_codec.h"

namespace pg::onnx {

namespace {

template <typename Message>
Message parse_file(const MappedFile& f) {
    Message m;
    if (f.size() > static_cast<uint64_t>(INT_MAX) || !m.ParseFromArray(f.data(), static_cast<int>(f.size())))
        throw Error(ErrorKind::kInvalidInput, "not a valid protobuf value file (truncated or corrupt)");
    return m;
}

std::vector<Tensor> sequence_tensors(onnxpb::SequenceProto& sp, ExternalDataReader& ext) {
    if (sp.elem_type() != 1 && sp.tensor_values_size() == 0 && sp.elem_type() != 0)
        throw Error(ErrorKind::kUnsupported, "only sequences of tensors are supported");
    std::vector<Tensor> out;
    for (auto& tp : *sp.mutable_tensor_values()) out.push_back(import_tensor(tp, ext).tensor);
    return out;
}

}  // namespace

StoredValue read_value_pb(const std::string& path, const std::string& hint) {
    return with_context("while reading '" + path + "'", [&] {
        auto f = MappedFile::open(path);
        ExternalDataReader ext(parent_dir(path), false);
        StoredValue v;
        if (hint == "sequence") {
            auto sp = parse_file<onnxpb::SequenceProto>(*f);
            v.name = sp.name();
            v.kind = StoredKind::kSequence;
            v.sequence = sequence_tensors(sp, ext);
        } else if (hint == "optional") {
            auto op = parse_file<onnxpb::OptionalProto>(*f);
            v.name = op.name();
            if (op.has_tensor_value()) v.tensor = import_tensor(*op.mutable_tensor_value(), ext).tensor;
            else if (op.has_sequence_value()) {
                v.kind = StoredKind::kSequence;
                v.sequence = sequence_tensors(*op.mutable_sequence_value(), ext);
            } else v.kind = StoredKind::kNone;
        } else {
            auto tp = parse_file<onnxpb::TensorProto>(*f);
            v.name = tp.name();
            v.tensor = import_tensor(tp, ext).tensor;
        }
        return v;
    });
}

void write_tensor_pb(const std::string& path, const std::string& name, const Tensor& t) {
    onnxpb::TensorProto tp;
    ir::NamedTensor nt;
    nt.name = name;
    nt.tensor = t;
    export_tensor(nt, &tp, nullptr);
    write_file_atomic(path, tp.SerializeAsString());
}

}  // namespace pg::onnx
