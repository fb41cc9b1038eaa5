// ModelProto -> ir::Model. Three passes per graph: values for inputs, initializers and node
// outputs; then node inputs by name (files are often not topologically sorted); then subgraphs,
// which may read any value of the enclosing graphs.
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>
#include <exception>
#include <map>
#include <system_error>
#include <thread>
#include "base/error.h"
#include "base/fs.h"
#include "base/heap.h"
#include "base/log.h"
#include "ir/topo.h"
#include "onnx/model_io.h"
#include "onnx/model_split.h"
#include "onnx/onnx.pb.h"
#include "onnx/proto_util.h"
#include "onnx/tensor_codec.h"

namespace pg::onnx {

namespace {

using onnxpb::AttributeProto;
using onnxpb::GraphProto;
using onnxpb::NodeProto;
using onnxpb::TypeProto;
using onnxpb::ValueInfoProto;

std::string node_context(const NodeProto& np, int index) {
    return "in node " + std::to_string(index) + " '" + np.name() + "' (" + np.op_type() + ")";
}

std::unique_ptr<ir::Graph> import_graph(GraphProto& gp, ir::Graph* parent, ExternalDataReader& ext);

template <typename Repeated>
ir::Metadata import_metadata(const Repeated& props) {
    ir::Metadata m;
    for (const auto& kv : props) m.emplace_back(kv.key(), kv.value());
    return m;
}

ir::Shape import_shape(const onnxpb::TensorShapeProto& sp, const std::string& owner) {
    ir::Shape shape;
    for (const auto& d : sp.dim()) {
        ir::Dim dim;
        if (d.has_dim_value()) {
            if (d.dim_value() < 0)
                log_warning("dimension {} of '{}' is negative; treating it as dynamic",
                            d.dim_value(), owner);
            else
                dim.value = d.dim_value();
        } else if (d.has_dim_param()) {
            dim.param = d.dim_param();
        }
        dim.denotation = d.denotation();
        shape.push_back(std::move(dim));
    }
    return shape;
}

ir::TypeInfo import_type(const TypeProto& tp, const std::string& owner) {
    ir::TypeInfo t;
    t.denotation = tp.denotation();
    switch (tp.value_case()) {
        case TypeProto::kTensorType:
            t.kind = ir::TypeKind::kTensor;
            t.elem_type = static_cast<DataType>(tp.tensor_type().elem_type());
            if (tp.tensor_type().has_shape())
                t.shape = import_shape(tp.tensor_type().shape(), owner);
            break;
        case TypeProto::kSparseTensorType:
            t.kind = ir::TypeKind::kSparseTensor;
            t.elem_type = static_cast<DataType>(tp.sparse_tensor_type().elem_type());
            if (tp.sparse_tensor_type().has_shape())
                t.shape = import_shape(tp.sparse_tensor_type().shape(), owner);
            break;
        case TypeProto::kSequenceType:
            t.kind = ir::TypeKind::kSequence;
            t.children.push_back(import_type(tp.sequence_type().elem_type(), owner));
            break;
        case TypeProto::kMapType:
            t.kind = ir::TypeKind::kMap;
            t.elem_type = static_cast<DataType>(tp.map_type().key_type());
            t.children.push_back(import_type(tp.map_type().value_type(), owner));
            break;
        case TypeProto::kOptionalType:
            t.kind = ir::TypeKind::kOptional;
            t.children.push_back(import_type(tp.optional_type().elem_type(), owner));
            break;
        case TypeProto::kOpaqueType:
            t.kind = ir::TypeKind::kOpaque;
            t.opaque_domain = tp.opaque_type().domain();
            t.opaque_name = tp.opaque_type().name();
            break;
        case TypeProto::VALUE_NOT_SET:
            break;
    }
    return t;
}

void apply_value_info(const ValueInfoProto& vi, ir::Value* v) {
    if (vi.has_type()) v->set_type(import_type(vi.type(), vi.name()));
    v->doc_string = vi.doc_string();
    v->metadata = import_metadata(vi.metadata_props());
    v->unknown_fields = unknown_fields_of(vi);
}

ir::SparseTensor import_sparse(onnxpb::SparseTensorProto& sp, ExternalDataReader& ext) {
    ir::SparseTensor s;
    s.values = import_tensor(*sp.mutable_values(), ext);
    s.indices = import_tensor(*sp.mutable_indices(), ext);
    s.dims.assign(sp.dims().begin(), sp.dims().end());
    return s;
}

// Everything but GRAPH / GRAPHS payloads, which import_subgraphs fills in later.
ir::Attribute import_attribute(AttributeProto& ap, ExternalDataReader& ext) {
    ir::Attribute a;
    a.name = ap.name();
    a.type = static_cast<ir::AttrType>(ap.type());
    a.ref_attr_name = ap.ref_attr_name();
    a.doc_string = ap.doc_string();
    a.f = ap.f();
    a.i = ap.i();
    a.s = ap.s();
    a.floats.assign(ap.floats().begin(), ap.floats().end());
    a.ints.assign(ap.ints().begin(), ap.ints().end());
    a.strings.assign(ap.strings().begin(), ap.strings().end());
    if (ap.has_t()) a.tensors.push_back(import_tensor(*ap.mutable_t(), ext));
    for (auto& t : *ap.mutable_tensors()) a.tensors.push_back(import_tensor(t, ext));
    if (ap.has_sparse_tensor())
        a.sparse_tensors.push_back(import_sparse(*ap.mutable_sparse_tensor(), ext));
    for (auto& s : *ap.mutable_sparse_tensors()) a.sparse_tensors.push_back(import_sparse(s, ext));
    if (ap.has_tp()) a.type_protos.push_back(import_type(ap.tp(), a.name));
    for (const auto& t : ap.type_protos()) a.type_protos.push_back(import_type(t, a.name));
    a.unknown_fields = unknown_fields_of(ap);
    if (a.type == ir::AttrType::kUndefined)
        throw Error(ErrorKind::kInvalidInput, "attribute '" + a.name + "' has no type");
    return a;
}

ir::Node* create_node(NodeProto& np, ir::Graph& g, ExternalDataReader& ext) {
    std::vector<std::string> outs(np.output().begin(), np.output().end());
    ir::Node* n = g.add_node(np.op_type(), {}, outs);
    n->name = np.name();
    n->domain = np.domain();
    n->overload = np.overload();
    n->doc_string = np.doc_string();
    n->metadata = import_metadata(np.metadata_props());
    n->unknown_fields = unknown_fields_of(np);
    for (auto& ap : *np.mutable_attribute()) {
        n->attributes.push_back(with_context("in attribute '" + ap.name() + "'",
                                             [&] { return import_attribute(ap, ext); }));
    }
    return n;
}

void connect_inputs(const NodeProto& np, ir::Node* n, ir::Graph& g) {
    for (int k = 0; k < np.input_size(); ++k) {
        const std::string& name = np.input(k);
        if (name.empty()) {
            n->add_input(nullptr);
            continue;
        }
        ir::Value* v = g.lookup(name);
        if (!v || (!v->producer() && !v->is_initializer() && v->graph() == &g &&
                   std::find(g.inputs().begin(), g.inputs().end(), v) == g.inputs().end()))
            throw Error(ErrorKind::kInvalidInput,
                        "input " + std::to_string(k) + " '" + name +
                            "' is not produced by any node, graph input or initializer");
        n->add_input(v);
    }
}

void import_subgraphs(NodeProto& np, ir::Node* n, ExternalDataReader& ext) {
    for (int k = 0; k < np.attribute_size(); ++k) {
        AttributeProto& ap = *np.mutable_attribute(k);
        ir::Attribute& a = n->attributes[static_cast<size_t>(k)];
        auto add = [&](GraphProto& gp) {
            auto sub = with_context("in subgraph attribute '" + ap.name() + "'",
                                    [&] { return import_graph(gp, n->graph(), ext); });
            sub->set_owner_node(n);
            a.graphs.push_back(std::move(sub));
        };
        if (ap.has_g()) add(*ap.mutable_g());
        for (auto& gp : *ap.mutable_graphs()) add(gp);
    }
}

// A graph input listed twice is tolerated when both entries agree; otherwise it is two values
// with one name.
void check_same_input(const ValueInfoProto& vi, const ir::Value& first) {
    const ir::TypeInfo type = vi.has_type() ? import_type(vi.type(), vi.name()) : ir::TypeInfo{};
    if (!(type == first.type()))
        throw Error(
            ErrorKind::kInvalidInput,
            "graph input '" + vi.name() + "' is listed more than once, with different types");
    log_warning("graph input '{}' is listed more than once", vi.name());
}

void import_graph_values(GraphProto& gp, ir::Graph& g, ExternalDataReader& ext) {
    for (const auto& vi : gp.input()) {
        if (ir::Value* dup = g.find_value(vi.name())) {  // listed twice: keep both entries
            check_same_input(vi, *dup);
            g.add_input(dup);
            continue;
        }
        ir::Value* v = with_context("in graph input '" + vi.name() + "'",
                                    [&] { return g.add_value(vi.name()); });
        apply_value_info(vi, v);
        g.add_input(v);
    }
    for (auto& tp : *gp.mutable_initializer()) {
        with_context("in initializer '" + tp.name() + "'", [&] {
            ir::NamedTensor t = import_tensor(tp, ext);
            ir::Value* v = g.find_value(tp.name());
            if (v)
                g.set_initializer(v, std::move(t));
            else
                g.add_initializer(std::move(t));
        });
    }
    for (auto& sp : *gp.mutable_sparse_initializer())
        g.sparse_initializers.push_back(import_sparse(sp, ext));
}

void import_graph_outputs(const GraphProto& gp, ir::Graph& g) {
    std::vector<ir::Value*> outputs;
    for (const auto& vi : gp.output()) {
        ir::Value* v = g.lookup(vi.name());
        if (!v)
            throw Error(ErrorKind::kInvalidInput,
                        "graph output '" + vi.name() +
                            "' is not produced by any node, input or initializer");
        if (v->graph() == &g) apply_value_info(vi, v);
        outputs.push_back(v);
    }
    g.set_outputs(std::move(outputs));
    for (const auto& vi : gp.value_info()) {
        ir::Value* v = g.find_value(vi.name());
        if (!v) {
            log_verbose("value_info '{}' names no value of graph '{}'; dropped", vi.name(), g.name);
            continue;
        }
        apply_value_info(vi, v);
        v->in_value_info = true;
    }
}

std::unique_ptr<ir::Graph> import_graph(GraphProto& gp, ir::Graph* parent,
                                        ExternalDataReader& ext) {
    auto g = std::make_unique<ir::Graph>(parent);
    g->name = gp.name();
    g->doc_string = gp.doc_string();
    g->metadata = import_metadata(gp.metadata_props());
    g->unknown_fields = unknown_fields_of(gp);
    for (const auto& qa : gp.quantization_annotation())
        g->quantization_annotations.push_back(qa.SerializeAsString());
    import_graph_values(gp, *g, ext);
    std::vector<ir::Node*> nodes;
    for (int k = 0; k < gp.node_size(); ++k) {
        NodeProto& np = *gp.mutable_node(k);
        nodes.push_back(
            with_context(node_context(np, k), [&] { return create_node(np, *g, ext); }));
    }
    for (int k = 0; k < gp.node_size(); ++k)
        with_context(node_context(gp.node(k), k),
                     [&] { connect_inputs(gp.node(k), nodes[k], *g); });
    for (int k = 0; k < gp.node_size(); ++k)
        with_context(node_context(gp.node(k), k),
                     [&] { import_subgraphs(*gp.mutable_node(k), nodes[k], ext); });
    import_graph_outputs(gp, *g);
    return g;
}

ir::Function import_function(onnxpb::FunctionProto& fp, ExternalDataReader& ext) {
    ir::Function f;
    f.name = fp.name();
    f.domain = fp.domain();
    f.overload = fp.overload();
    f.doc_string = fp.doc_string();
    f.attribute_names.assign(fp.attribute().begin(), fp.attribute().end());
    for (auto& ap : *fp.mutable_attribute_proto())
        f.attribute_defaults.push_back(import_attribute(ap, ext));
    for (const auto& o : fp.opset_import()) f.opset_imports.push_back({o.domain(), o.version()});
    f.metadata = import_metadata(fp.metadata_props());
    f.unknown_fields = unknown_fields_of(fp);
    // The body as a graph: formal inputs become graph inputs, nodes follow.
    GraphProto gp;
    for (const auto& in : fp.input()) gp.add_input()->set_name(in);
    for (const auto& out : fp.output()) gp.add_output()->set_name(out);
    for (auto& np : *fp.mutable_node()) gp.add_node()->Swap(&np);
    for (auto& vi : *fp.mutable_value_info()) gp.add_value_info()->Swap(&vi);
    f.body = import_graph(gp, nullptr, ext);
    return f;
}

std::unique_ptr<ir::Model> import_model(onnxpb::ModelProto& mp, ExternalDataReader& ext) {
    auto m = std::make_unique<ir::Model>();
    m->ir_version = mp.ir_version();
    for (const auto& o : mp.opset_import()) m->opset_imports.push_back({o.domain(), o.version()});
    m->producer_name = mp.producer_name();
    m->producer_version = mp.producer_version();
    m->domain = mp.domain();
    m->model_version = mp.model_version();
    m->doc_string = mp.doc_string();
    m->metadata = import_metadata(mp.metadata_props());
    m->training_info.assign(mp.training_info().begin(), mp.training_info().end());
    m->unknown_fields = unknown_fields_of(mp);
    if (!mp.has_graph()) throw Error(ErrorKind::kInvalidInput, "the model has no graph");
    m->graph = with_context("in the main graph",
                            [&] { return import_graph(*mp.mutable_graph(), nullptr, ext); });
    for (auto& fp : *mp.mutable_functions()) {
        m->functions.push_back(with_context("in function '" + fp.name() + "'",
                                            [&] { return import_function(fp, ext); }));
    }
    ir::check_acyclic(*m->graph);
    for (const auto& f : m->functions)
        with_context("in function '" + f.name + "'", [&] { ir::check_acyclic(*f.body); });
    return m;
}

}  // namespace

namespace {

void check_model_size(uint64_t size) {
    if (size == 0) throw Error(ErrorKind::kInvalidInput, "the file is empty");
    if (size > static_cast<uint64_t>(INT_MAX))
        throw Error(
            ErrorKind::kUnsupported,
            "the model file is " + std::to_string(size) +
                " bytes; protobuf cannot parse files over 2 GiB (store weights as external data)");
}

constexpr int kRecursionLimit = 200;  // messages within messages (3 per level of If / Loop)

void parse_proto(google::protobuf::io::CodedInputStream& in, onnxpb::ModelProto& mp) {
    in.SetRecursionLimit(kRecursionLimit);
    if (!mp.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
        throw Error(ErrorKind::kInvalidInput,
                    "not a valid ONNX model (protobuf parse failed: truncated, corrupt, or "
                    "messages nested more than " +
                        std::to_string(kRecursionLimit) + " deep)");
}

// Parses on a short-lived thread of its own. glibc gives a new thread its own malloc arena, so
// the message's many small allocations (every name, node and repeated field) do not interleave
// with the IR built from it on this thread; once the message is destroyed they leave no holes
// among the IR's objects, and release_free_heap() hands their pages back. (On the caller's heap
// those holes, 0.7 MiB for ShuffleNet, 2 MiB for DenseNet-121, stayed resident through every
// run; docs/performance.md, memory.)
void parse_proto_apart(google::protobuf::io::CodedInputStream& in, onnxpb::ModelProto& mp) {
    std::exception_ptr error;
    std::thread parser;
    try {
        parser = std::thread([&] {
            try {
                parse_proto(in, mp);
            } catch (...) {
                error = std::current_exception();
            }
        });
    } catch (const std::system_error&) {  // no thread to be had: parse here (same result)
        parse_proto(in, mp);
        return;
    }
    parser.join();
    if (error) std::rethrow_exception(error);
}

// split: initializer raw_data read outside protobuf (parse_split), by initializer index.
std::unique_ptr<ir::Model> import_parsed(onnxpb::ModelProto& mp, const LoadOptions& options,
                                         std::map<int, SplitPayload> split = {}) {
    if (!mp.has_graph() && mp.opset_import_size() == 0 && mp.ir_version() == 0)
        throw Error(ErrorKind::kInvalidInput,
                    "not an ONNX model (no graph, no opset, no IR version)");
    ExternalDataReader ext(options.external_data_dir, options.ignore_external_data);
    for (auto& [index, payload] : split) {
        if (!mp.has_graph() || index >= mp.graph().initializer_size())
            throw Error(ErrorKind::kInternal,
                        "split initializer " + std::to_string(index) + " is missing");
        ext.add_split(&mp.graph().initializer(index), std::move(payload));
    }
    return import_model(mp, ext);
}

std::unique_ptr<ir::Model> parse_coded(google::protobuf::io::CodedInputStream& in,
                                       const LoadOptions& options) {
    std::unique_ptr<ir::Model> m;
    {
        onnxpb::ModelProto mp;
        parse_proto_apart(in, mp);
        m = import_parsed(mp, options);
    }
    release_free_heap();
    return m;
}

// Skeletons smaller than this are parsed on the caller's thread: the parser thread's own malloc
// arena stays resident for the process (16 KiB, and pool workers reuse it only if they
// allocate), more than the holes so small a message leaves (the zoo LSTM's skeleton is 12 KiB).
constexpr size_t kInlineParseBytes = 64 << 10;

// Parses the skeleton of a split file; each initializer's tensor adopts the very buffer its
// payload was read into.
std::unique_ptr<ir::Model> parse_split(SplitModel split, const LoadOptions& options) {
    std::unique_ptr<ir::Model> m;
    {
        onnxpb::ModelProto mp;
        {
            google::protobuf::io::CodedInputStream in(
                reinterpret_cast<const uint8_t*>(split.skeleton.data()),
                static_cast<int>(split.skeleton.size()));
            if (split.skeleton.size() < kInlineParseBytes)
                parse_proto(in, mp);
            else
                parse_proto_apart(in, mp);
        }
        std::string().swap(split.skeleton);
        m = import_parsed(mp, options, std::move(split.payloads));
    }
    release_free_heap();
    return m;
}

// Raw data of at least this many bytes is read outside protobuf (see onnx/model_split.h).
constexpr uint64_t kSplitPayloadBytes = 64 << 10;

}  // namespace

std::unique_ptr<ir::Model> parse_model(const uint8_t* data, size_t size,
                                       const LoadOptions& options) {
    check_model_size(size);
    google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
    return parse_coded(in, options);
}

// Files are read with pread rather than through the mapping, so the file's pages never count
// toward the process's memory. Large initializer payloads are split out of the protobuf
// message (onnx/model_split.h), so the load peak is about one copy of the weights; files the
// splitter does not accept are parsed through a stream, and protobuf reports their errors.
std::unique_ptr<ir::Model> load_model(const std::string& path, const LoadOptions& options) {
    return with_context("while loading model '" + path + "'", [&] {
        const uint64_t size = MappedFile::open(path)->size();  // checks: regular file, readable
        check_model_size(size);
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw Error(ErrorKind::kIo, "cannot open '" + path + "'");
        google::protobuf::io::FileInputStream raw(fd, 1 << 20);
        raw.SetCloseOnDelete(true);
        LoadOptions opts = options;
        if (opts.external_data_dir.empty()) opts.external_data_dir = parent_dir(path);
        if (auto split = split_model_file(fd, size, kSplitPayloadBytes))
            return parse_split(std::move(*split), opts);
        google::protobuf::io::CodedInputStream in(
            &raw);  // not plainly well formed: protobuf says why
        in.SetTotalBytesLimit(static_cast<int>(size));
        return parse_coded(in, opts);
    });
}

}  // namespace pg::onnx
