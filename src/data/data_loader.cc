// Polygraphy's default data loader: see data_loader.h.
#include "data/data_loader.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "base/error.h"
#include "base/log.h"

namespace pg::data {

namespace {

bool dim_is_static(const ir::Dim& d) {
    return d.is_known() && *d.value >= 0;
}

bool shape_is_dynamic(const ir::Shape& s) {
    return !std::all_of(s.begin(), s.end(), dim_is_static);
}

// Python's repr of a shape list: ['batch', 3, None].
std::string py_shape_list(const ir::Shape& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) {
        if (i) out += ", ";
        if (s[i].is_known())
            out += std::to_string(*s[i].value);
        else if (!s[i].param.empty())
            out += "'" + s[i].param + "'";
        else
            out += "None";
    }
    return out + "]";
}

std::string bounded_shape_repr(const ir::Shape& s) {
    return "BoundedShape(" + py_shape_list(s) + ", min=None, max=None)";
}

// util.is_valid_shape_override: same rank, and every static model dim kept.
bool valid_override(const ir::Shape& user, const ir::Shape& model) {
    if (user.size() != model.size()) return false;
    for (size_t i = 0; i < user.size(); ++i) {
        if (dim_is_static(model[i]) && !(user[i] == model[i])) return false;
    }
    return true;
}

bool key_matches(const std::string& key, const std::string& name) {
    return key == name || fnmatch(key.c_str(), name.c_str(), 0) == 0;
}

const ir::Shape* find_user_shape(const DataLoaderOptions& o, const std::string& name) {
    for (const auto& [key, shape] : o.input_shapes) {
        if (key == name) return &shape;
    }
    for (const auto& [key, shape] : o.input_shapes) {
        if (key_matches(key, name)) return &shape;
    }
    return nullptr;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// util.find_str_in_iterable without the position fallback: a case-insensitive substring match.
std::string close_match(const std::string& key, const std::vector<runners::TensorMeta>& inputs) {
    for (const auto& in : inputs) {
        const std::string a = lower(key), b = lower(in.name);
        if (a.find(b) != std::string::npos || b.find(a) != std::string::npos) return in.name;
    }
    return "";
}

void warn_unused_shapes(const DataLoaderOptions& o, const std::vector<runners::TensorMeta>& in) {
    for (const auto& entry : o.input_shapes) {
        const std::string& key = entry.first;
        bool used = std::any_of(in.begin(), in.end(), [&](const runners::TensorMeta& m) {
            return key_matches(key, m.name);
        });
        if (used) continue;
        std::string msg = "Input tensor: " + key +
                          " | Metadata was provided, but the input does not exist in one or more "
                          "runners.";
        const std::string guess = close_match(key, in);
        if (!guess.empty()) msg += "\nMaybe you meant to set: " + guess + "?";
        log_warning("{}", msg);
    }
}

void warn_unused_ranges(const DataLoaderOptions& o, const std::vector<runners::TensorMeta>& in) {
    std::string extra;
    for (const auto& entry : o.val_range) {
        const std::string& key = entry.first;
        if (key.empty()) continue;
        bool used = std::any_of(in.begin(), in.end(),
                                [&](const runners::TensorMeta& m) { return m.name == key; });
        if (!used) extra += (extra.empty() ? "'" : ", '") + key + "'";
    }
    if (!extra.empty()) log_warning("Extra items in val_range: [{}]", extra);
}

ValRange range_for(const DataLoaderOptions& o, const std::string& name, DataType dt) {
    if (dtype_is_integer(dt) && o.int_range) return *o.int_range;
    if (!dtype_is_integer(dt) && dt != DataType::kBool && o.float_range) return *o.float_range;
    const ValRange* def = nullptr;
    const ValRange* exact = nullptr;
    for (const auto& [key, r] : o.val_range) {
        if (key == name) exact = &r;
        if (key.empty()) def = &r;
    }
    if (exact) return *exact;
    return def ? *def : ValRange{};
}

// Polygraphy's is_shape_tensor: integral, model shape static [k], user shape static of rank k.
bool is_shape_tensor(const runners::TensorMeta& m, const ir::Shape* user) {
    if (!user || !dtype_is_integer(m.dtype) || !m.shape || m.shape->size() != 1) return false;
    if (shape_is_dynamic(*m.shape) || shape_is_dynamic(*user)) return false;
    return static_cast<int64_t>(user->size()) == *(*m.shape)[0].value;
}

Tensor shape_tensor_values(const runners::TensorMeta& m, const ir::Shape& user) {
    Tensor t = Tensor::zeros(m.dtype, {static_cast<int64_t>(user.size())});
    uint8_t* p = t.mutable_bytes();
    const int bytes = dtype_bits(m.dtype) / 8;
    for (size_t i = 0; i < user.size(); ++i) {
        const int64_t v = *user[i].value;
        std::memcpy(p + i * bytes, &v, bytes);  // little-endian truncation, as numpy's cast
    }
    log_info(
        "Assuming {} is a shape tensor. Setting input values to: {}. If this is not correct, "
        "please set it correctly in 'input_metadata' or by providing --input-shapes",
        m.name, py_shape_list(user));
    return t;
}

// The model shape, replaced by a usable user shape; Polygraphy's warnings when it is not usable.
ir::Shape chosen_shape(const runners::TensorMeta& m, const ir::Shape* user) {
    if (!m.shape) {
        if (user && !shape_is_dynamic(*user)) return *user;
        throw Error(ErrorKind::kInvalidInput, "Input tensor: " + m.name +
                                                  " has unknown rank; provide its shape with "
                                                  "--input-shapes " +
                                                  m.name + ":[...]");
    }
    if (!user) return *m.shape;
    const std::string s = bounded_shape_repr(*m.shape);
    if (shape_is_dynamic(*user)) {
        log_warning(
            "Input tensor: {} [shape={}] | Provided input shape: {} is dynamic.\nDynamic "
            "shapes cannot be used to generate inference data. Will use default shape "
            "instead.\nTo avoid this, please provide a fixed shape to the data loader. ",
            m.name, s, py_shape_list(*user));
        return *m.shape;
    }
    if (!valid_override(*user, *m.shape)) {
        log_warning(
            "Input tensor: {} [shape={}] | Cannot use provided custom shape: {} to "
            "override tensor shape. Will use default shape instead.",
            m.name, s, py_shape_list(*user));
        return *m.shape;
    }
    return *user;
}

// Replaces dynamic dims with 1 (constants.DEFAULT_SHAPE_VALUE), warning once.
std::vector<int64_t> static_shape(const std::string& name, const ir::Shape& shape) {
    std::vector<int64_t> dims;
    ir::Shape fixed;
    for (const auto& d : shape) {
        dims.push_back(dim_is_static(d) ? *d.value : 1);
        fixed.push_back(ir::Dim::known(dims.back()));
    }
    if (shape_is_dynamic(shape)) {
        log_warning(
            "Input tensor: {} [shape={}] | Will generate data of shape: {}.\nIf this is "
            "incorrect, please provide a custom data loader.",
            name, bounded_shape_repr(shape), py_shape_list(fixed));
    }
    return dims;
}

InputPlan plan_input(const runners::TensorMeta& m, const DataLoaderOptions& o) {
    InputPlan p;
    p.name = m.name;
    p.dtype = m.dtype;
    const ir::Shape* user = find_user_shape(o, m.name);
    if (is_shape_tensor(m, user)) {
        p.shape = {static_cast<int64_t>(user->size())};
        p.shape_tensor = shape_tensor_values(m, *user);
        return p;
    }
    p.shape = static_shape(m.name, chosen_shape(m, user));
    p.range = range_for(o, m.name, m.dtype);
    return p;
}

void check_options(const DataLoaderOptions& o) {
    if (o.iterations < 0) throw Error(ErrorKind::kUsage, "--iterations must not be negative");
    const int64_t last = o.seed + std::max<int64_t>(o.iterations - 1, 0);
    if (o.seed < 0 || last > int64_t{0xFFFFFFFF}) {
        throw Error(ErrorKind::kUsage, "Seed must be between 0 and 2**32 - 1 (seed + iteration)");
    }
}

}  // namespace

DataLoader::DataLoader(const std::vector<runners::TensorMeta>& inputs, DataLoaderOptions opts)
    : opts_(std::move(opts)) {
    check_options(opts_);
    for (const auto& m : inputs) {
        with_context("while planning generated data for input '" + m.name + "'",
                     [&] { plan_.push_back(plan_input(m, opts_)); });
    }
    warn_unused_shapes(opts_, inputs);
    warn_unused_ranges(opts_, inputs);
}

runners::NamedTensors DataLoader::get(int64_t index) const {
    if (index < 0 || index >= opts_.iterations) {
        throw Error(ErrorKind::kInternal, "data loader index out of range");
    }
    log_verbose("Generating data using numpy seed: {}", opts_.seed + index);
    NumpyRandomState rs(static_cast<uint32_t>(opts_.seed + index));
    runners::NamedTensors feed;
    for (const auto& p : plan_) {
        Tensor t = p.shape_tensor ? *p.shape_tensor : random_tensor(rs, p.dtype, p.shape, p.range);
        feed.emplace_back(p.name, std::move(t));
    }
    return feed;
}

}  // namespace pg::data
