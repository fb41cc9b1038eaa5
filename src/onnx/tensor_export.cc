#include "base/error.h"
#include "onnx/external_writer.h"
#include "onnx/proto_util.h"
#include "onnx/tensor_codec.h"

namespace pg::onnx {

uint64_t ExternalDataWriter::append(const uint8_t* data, uint64_t size) {
    static const char kZeros[64] = {};
    const uint64_t pad = (64 - file_.size() % 64) % 64;
    if (pad) file_.write(kZeros, pad);
    const uint64_t offset = file_.size();
    file_.write(data, size);
    return offset;
}

namespace {

void set_external(onnxpb::TensorProto* tp, const std::string& location, uint64_t offset, uint64_t length) {
    tp->set_data_location(1);
    const std::pair<const char*, std::string> entries[] = {
        {"location", location}, {"offset", std::to_string(offset)}, {"length", std::to_string(length)}};
    for (const auto& [k, v] : entries) {
        auto* e = tp->add_external_data();
        e->set_key(k);
        e->set_value(v);
    }
}

}  // namespace

void export_tensor(const ir::NamedTensor& t, onnxpb::TensorProto* tp, ExternalDataWriter* ext) {
    const Tensor& x = t.tensor;
    for (int64_t d : x.dims()) tp->add_dims(d);
    tp->set_data_type(static_cast<int32_t>(x.dtype()));
    if (!t.name.empty()) tp->set_name(t.name);
    if (!t.doc_string.empty()) tp->set_doc_string(t.doc_string);
    for (const auto& [k, v] : t.metadata) {
        auto* e = tp->add_metadata_props();
        e->set_key(k);
        e->set_value(v);
    }
    if (!x.has_data()) {  // placeholder: write back what it stood for
        if (t.loaded_from.is_set()) {
            set_external(tp, t.loaded_from.location, t.loaded_from.offset, t.loaded_from.length);
        } else {
            tp->set_raw_data(std::string());
        }
    } else if (x.is_string()) {
        for (const auto& s : x.strings()) tp->add_string_data(s);
    } else if (ext && ext->takes(x.nbytes())) {
        const uint64_t offset = ext->append(x.bytes(), x.nbytes());
        set_external(tp, ext->location(), offset, x.nbytes());
    } else {
        if (x.nbytes() > 0) tp->set_raw_data(reinterpret_cast<const char*>(x.bytes()), x.nbytes());
        else tp->set_raw_data(std::string());
    }
    restore_unknown_fields(tp, t.unknown_fields);
}

}  // namespace pg::onnx
