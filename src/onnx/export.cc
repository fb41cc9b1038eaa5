// ir::Model -> ModelProto, and the atomic writing of model files (with optional external data).
#include <climits>

#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "onnx/external_writer.h"
#include "onnx/model_io.h"
#include "onnx/onnx.pb.h"
#include "onnx/proto_util.h"
#include "onnx/tensor_codec.h"

namespace pg::onnx {

namespace {

using onnxpb::GraphProto;
using onnxpb::TypeProto;
using onnxpb::ValueInfoProto;

void export_graph(const ir::Graph& g, GraphProto* gp, ExternalDataWriter* ext);

template <typename Repeated>
void export_metadata(const ir::Metadata& m, Repeated* out) {
    for (const auto& [k, v] : m) {
        auto* e = out->Add();
        e->set_key(k);
        e->set_value(v);
    }
}

void export_shape(const ir::Shape& shape, onnxpb::TensorShapeProto* sp) {
    for (const ir::Dim& d : shape) {
        auto* dp = sp->add_dim();
        if (d.value) dp->set_dim_value(*d.value);
        else if (!d.param.empty()) dp->set_dim_param(d.param);
        if (!d.denotation.empty()) dp->set_denotation(d.denotation);
    }
}

void export_type(const ir::TypeInfo& t, TypeProto* tp) {
    if (!t.denotation.empty()) tp->set_denotation(t.denotation);
    switch (t.kind) {
        case ir::TypeKind::kTensor: {
            auto* tt = tp->mutable_tensor_type();
            tt->set_elem_type(static_cast<int32_t>(t.elem_type));
            if (t.shape) export_shape(*t.shape, tt->mutable_shape());
            break;
        }
        case ir::TypeKind::kSparseTensor: {
            auto* st = tp->mutable_sparse_tensor_type();
            st->set_elem_type(static_cast<int32_t>(t.elem_type));
            if (t.shape) export_shape(*t.shape, st->mutable_shape());
            break;
        }
        case ir::TypeKind::kSequence:
            export_type(t.children.at(0), tp->mutable_sequence_type()->mutable_elem_type());
            break;
        case ir::TypeKind::kMap:
            tp->mutable_map_type()->set_key_type(static_cast<int32_t>(t.elem_type));
            export_type(t.children.at(0), tp->mutable_map_type()->mutable_value_type());
            break;
        case ir::TypeKind::kOptional:
            export_type(t.children.at(0), tp->mutable_optional_type()->mutable_elem_type());
            break;
        case ir::TypeKind::kOpaque:
            tp->mutable_opaque_type()->set_domain(t.opaque_domain);
            tp->mutable_opaque_type()->set_name(t.opaque_name);
            break;
        case ir::TypeKind::kNone: break;
    }
}

void export_value_info(const ir::Value& v, ValueInfoProto* vi) {
    vi->set_name(v.name());
    if (v.has_type()) export_type(v.type(), vi->mutable_type());
    if (!v.doc_string.empty()) vi->set_doc_string(v.doc_string);
    export_metadata(v.metadata, vi->mutable_metadata_props());
    restore_unknown_fields(vi, v.unknown_fields);
}

void export_sparse(const ir::SparseTensor& s, onnxpb::SparseTensorProto* sp, ExternalDataWriter* ext) {
    export_tensor(s.values, sp->mutable_values(), ext);
    export_tensor(s.indices, sp->mutable_indices(), ext);
    for (int64_t d : s.dims) sp->add_dims(d);
}

void export_attribute(const ir::Attribute& a, onnxpb::AttributeProto* ap) {
    ap->set_name(a.name);
    ap->set_type(static_cast<int32_t>(a.type));
    if (!a.ref_attr_name.empty()) ap->set_ref_attr_name(a.ref_attr_name);
    if (!a.doc_string.empty()) ap->set_doc_string(a.doc_string);
    using T = ir::AttrType;
    switch (a.type) {
        case T::kFloat: ap->set_f(a.f); break;
        case T::kInt: ap->set_i(a.i); break;
        case T::kString: ap->set_s(a.s); break;
        case T::kTensor: if (!a.tensors.empty()) export_tensor(a.tensors[0], ap->mutable_t(), nullptr); break;
        case T::kGraph: if (!a.graphs.empty()) export_graph(*a.graphs[0], ap->mutable_g(), nullptr); break;
        case T::kSparseTensor:
            if (!a.sparse_tensors.empty()) export_sparse(a.sparse_tensors[0], ap->mutable_sparse_tensor(), nullptr);
            break;
        case T::kTypeProto: if (!a.type_protos.empty()) export_type(a.type_protos[0], ap->mutable_tp()); break;
        default: break;
    }
    for (float f : a.floats) ap->add_floats(f);
    for (int64_t i : a.ints) ap->add_ints(i);
    for (const auto& s : a.strings) ap->add_strings(s);
    if (a.type == T::kTensors) for (const auto& t : a.tensors) export_tensor(t, ap->add_tensors(), nullptr);
    if (a.type == T::kGraphs) for (const auto& g : a.graphs) export_graph(*g, ap->add_graphs(), nullptr);
    if (a.type == T::kSparseTensors)
        for (const auto& s : a.sparse_tensors) export_sparse(s, ap->add_sparse_tensors(), nullptr);
    if (a.type == T::kTypeProtos) for (const auto& t : a.type_protos) export_type(t, ap->add_type_protos());
    restore_unknown_fields(ap, a.unknown_fields);
}

void export_node(const ir::Node& n, onnxpb::NodeProto* np) {
    for (ir::Value* in : n.inputs()) np->add_input(in ? in->name() : std::string());
    for (ir::Value* out : n.outputs()) np->add_output(out ? out->name() : std::string());
    if (!n.name.empty()) np->set_name(n.name);
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    if (!n.overload.empty()) np->set_overload(n.overload);
    for (const auto& a : n.attributes) export_attribute(a, np->add_attribute());
    if (!n.doc_string.empty()) np->set_doc_string(n.doc_string);
    export_metadata(n.metadata, np->mutable_metadata_props());
    restore_unknown_fields(np, n.unknown_fields);
}

void export_graph(const ir::Graph& g, GraphProto* gp, ExternalDataWriter* ext) {
    for (const auto& n : g.nodes()) export_node(*n, gp->add_node());
    gp->set_name(g.name);
    for (ir::Value* v : g.initializers()) export_tensor(*v->initializer(), gp->add_initializer(), ext);
    for (const auto& s : g.sparse_initializers) export_sparse(s, gp->add_sparse_initializer(), ext);
    if (!g.doc_string.empty()) gp->set_doc_string(g.doc_string);
    for (ir::Value* v : g.inputs()) export_value_info(*v, gp->add_input());
    for (ir::Value* v : g.outputs()) export_value_info(*v, gp->add_output());
    for (const auto& v : g.values())
        if (v->in_value_info) export_value_info(*v, gp->add_value_info());
    for (const auto& qa : g.quantization_annotations) gp->add_quantization_annotation()->ParseFromString(qa);
    export_metadata(g.metadata, gp->mutable_metadata_props());
    restore_unknown_fields(gp, g.unknown_fields);
}

void export_function(const ir::Function& f, onnxpb::FunctionProto* fp) {
    fp->set_name(f.name);
    for (ir::Value* v : f.body->inputs()) fp->add_input(v->name());
    for (ir::Value* v : f.body->outputs()) fp->add_output(v->name());
    for (const auto& a : f.attribute_names) fp->add_attribute(a);
    for (const auto& a : f.attribute_defaults) export_attribute(a, fp->add_attribute_proto());
    for (const auto& n : f.body->nodes()) export_node(*n, fp->add_node());
    if (!f.doc_string.empty()) fp->set_doc_string(f.doc_string);
    for (const auto& o : f.opset_imports) {
        auto* op = fp->add_opset_import();
        op->set_domain(o.domain);
        op->set_version(o.version);
    }
    fp->set_domain(f.domain);
    if (!f.overload.empty()) fp->set_overload(f.overload);
    for (const auto& v : f.body->values())
        if (v->in_value_info) export_value_info(*v, fp->add_value_info());
    export_metadata(f.metadata, fp->mutable_metadata_props());
    restore_unknown_fields(fp, f.unknown_fields);
}

void export_model(const ir::Model& m, onnxpb::ModelProto* mp, ExternalDataWriter* ext) {
    mp->set_ir_version(m.ir_version);
    for (const auto& o : m.opset_imports) {
        auto* op = mp->add_opset_import();
        op->set_domain(o.domain);
        op->set_version(o.version);
    }
    if (!m.producer_name.empty()) mp->set_producer_name(m.producer_name);
    if (!m.producer_version.empty()) mp->set_producer_version(m.producer_version);
    if (!m.domain.empty()) mp->set_domain(m.domain);
    if (m.model_version) mp->set_model_version(m.model_version);
    if (!m.doc_string.empty()) mp->set_doc_string(m.doc_string);
    if (m.graph) export_graph(*m.graph, mp->mutable_graph(), ext);
    export_metadata(m.metadata, mp->mutable_metadata_props());
    for (const auto& t : m.training_info) mp->add_training_info(t);
    for (const auto& f : m.functions) export_function(f, mp->add_functions());
    restore_unknown_fields(mp, m.unknown_fields);
}

uint64_t graph_tensor_bytes(const ir::Graph& g) {
    uint64_t total = 0;
    for (ir::Value* v : g.initializers()) total += v->initializer()->tensor.nbytes();
    for (const auto& n : g.nodes())
        for (const auto& a : n->attributes) {
            for (const auto& t : a.tensors) total += t.tensor.nbytes();
            for (const auto& sub : a.graphs) total += graph_tensor_bytes(*sub);
        }
    return total;
}

std::string to_bytes(const onnxpb::ModelProto& mp) {
    const size_t size = mp.ByteSizeLong();
    if (size > static_cast<size_t>(INT_MAX))
        throw Error(ErrorKind::kUnsupported,
                    "the model would be " + std::to_string(size) +
                        " bytes, past protobuf's 2 GiB limit; save it with --external-data-path");
    std::string out;
    if (!mp.SerializeToString(&out)) throw Error(ErrorKind::kInternal, "protobuf serialization failed");
    return out;
}

}  // namespace

std::string serialize_model(const ir::Model& model) {
    onnxpb::ModelProto mp;
    export_model(model, &mp, nullptr);
    return to_bytes(mp);
}

void save_model(const ir::Model& model, const std::string& path, const SaveOptions& options) {
    with_context("while saving model '" + path + "'", [&] {
        std::optional<std::string> location = options.external_data_path;
        uint64_t threshold = options.external_data_size_threshold;
        if (!location && model.graph && graph_tensor_bytes(*model.graph) > kAutoExternalDataBytes) {
            location = base_name(path) + ".data";
            threshold = 1024;
            log_warning("the model's tensors exceed 2 GiB; saving them as external data in '{}'", *location);
        }
        std::unique_ptr<ExternalDataWriter> ext;
        if (location) {
            const std::string full = resolve_inside(parent_dir(path), *location, "--external-data-path");
            ext = std::make_unique<ExternalDataWriter>(*location, full, threshold);
        }
        onnxpb::ModelProto mp;
        export_model(model, &mp, ext.get());
        AtomicFile out(path);
        out.write(to_bytes(mp));
        if (ext) ext->commit();
        out.commit();
    });
}

}  // namespace pg::onnx
