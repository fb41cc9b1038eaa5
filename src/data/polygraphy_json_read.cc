// Reading Polygraphy's JSON files: see polygraphy_json.h.
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/base64.h"
#include "data/npy.h"
#include "data/npz.h"
#include "data/polygraphy_json.h"

namespace pg::data {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kClassKey[] = "polygraphy_class";
constexpr char kLegacyPrefix[] = "__polygraphy_encoded_";

[[noreturn]] void bad(const std::string& what, const std::string& why) {
    throw Error(ErrorKind::kInvalidInput, "'" + what + "': " + why);
}

// The polygraphy_class of an object ("" for plain objects), accepting the legacy marker form.
std::string class_of(const Json& j) {
    if (!j.is_object()) return "";
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key().rfind(kLegacyPrefix, 0) == 0) return it.key().substr(sizeof kLegacyPrefix - 1);
    }
    auto it = j.find(kClassKey);
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

const Json& member(const Json& j, const char* key, const std::string& what) {
    auto it = j.find(key);
    if (it == j.end()) bad(what, std::string("missing key '") + key + "'");
    return *it;
}

// Python's str.encode("latin-1") of a JSON string (held as UTF-8): one byte per code point,
// which must be below 256.
std::string latin1_bytes(const std::string& utf8, const std::string& what) {
    std::string out;
    out.reserve(utf8.size());
    for (size_t i = 0; i < utf8.size(); ++i) {
        const auto c = static_cast<unsigned char>(utf8[i]);
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if ((c == 0xC2 || c == 0xC3) && i + 1 < utf8.size() &&
                   (static_cast<unsigned char>(utf8[i + 1]) & 0xC0) == 0x80) {
            out += static_cast<char>(((c & 0x03) << 6) | (utf8[++i] & 0x3F));
        } else {
            bad(what, "ndarray 'array' is neither base64 nor latin-1 text");
        }
    }
    return out;
}

Tensor decode_ndarray(const Json& j, const std::string& what) {
    const Json& a = member(j, "array", what);
    if (!a.is_string()) bad(what, "ndarray 'array' is not a string");
    const std::string& text = a.get_ref<const std::string&>();
    std::optional<std::string> bytes = base64_decode(text);
    if (!bytes) bytes = latin1_bytes(text, what);  // legacy: the .npy bytes as latin-1 text
    const auto* p = reinterpret_cast<const uint8_t*>(bytes->data());
    if (is_npz(p, bytes->size())) return first_npz_array(*bytes, what);
    return npy_decode(p, bytes->size(), what);
}

// A tensor-valued object: ndarray, LazyArray (wrapping one), or an unsupported torch Tensor.
Tensor decode_value(const Json& j, const std::string& what, int depth = 0) {
    if (depth > 4) bad(what, "LazyArray nesting is too deep");
    const std::string cls = class_of(j);
    if (cls == "ndarray") return decode_ndarray(j, what);
    if (cls == "LazyArray" || cls == "LazyNumpyArray") {
        return decode_value(member(j, "values", what), what, depth + 1);
    }
    if (cls == "Tensor") {
        throw Error(ErrorKind::kUnsupported,
                    "'" + what +
                        "' holds a torch-serialized Tensor (how Polygraphy stores "
                        "bfloat16/float8); only numpy arrays can be read");
    }
    bad(what, "Could not decode serialized type: " + (cls.empty() ? "<plain value>" : cls));
}

runners::NamedTensors decode_feed(const Json& j, const std::string& what) {
    if (!j.is_object() || !class_of(j).empty()) bad(what, "an iteration is not a dict of arrays");
    runners::NamedTensors feed;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string where = what + "' tensor '" + it.key();
        feed.emplace_back(it.key(), decode_value(it.value(), where));
    }
    return feed;
}

IterationResult decode_iteration(const Json& j, const std::string& what) {
    if (class_of(j) != "IterationResult") bad(what, "expected an IterationResult");
    IterationResult it;
    it.outputs = decode_feed(member(j, "outputs", what), what);
    auto rt = j.find("runtime");
    if (rt != j.end() && rt->is_number()) it.runtime = rt->get<double>();
    auto rn = j.find("runner_name");
    it.runner_name = rn != j.end() && rn->is_string() ? rn->get<std::string>() : "custom_runner";
    return it;
}

RunResults decode_run_results(const Json& j, const std::string& what) {
    const Json& lst = member(j, "lst", what);
    if (!lst.is_array()) bad(what, "Provided JSON cannot be decoded into a RunResults");
    RunResults rr;
    for (const Json& pair : lst) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_array()) {
            bad(what, "RunResults.lst entries must be [runner_name, [IterationResult...]]");
        }
        RunnerResults r{pair[0].get<std::string>(), {}};
        for (const Json& it : pair[1]) r.iterations.push_back(decode_iteration(it, what));
        rr.runners.push_back(std::move(r));
    }
    return rr;
}

}  // namespace

PolygraphyJson parse_polygraphy_json(const std::string& text, const std::string& what) {
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded()) bad(what, "not valid JSON");
    PolygraphyJson out;
    const std::string cls = class_of(j);
    if (cls == "RunResults") {
        out.content = JsonContent::kRunResults;
        out.run_results = decode_run_results(j, what);
    } else if (j.is_array()) {
        for (const Json& feed : j) out.inputs.push_back(decode_feed(feed, what));
    } else if (j.is_object() && cls.empty()) {
        out.inputs.push_back(decode_feed(j, what));
    } else {
        bad(what, "expected a list of feed dicts or a RunResults, found " +
                      (cls.empty() ? std::string(j.type_name()) : cls));
    }
    return out;
}

PolygraphyJson load_polygraphy_json(const std::string& path) {
    const std::string text = read_file(path);
    return with_context("while reading '" + path + "'",
                        [&] { return parse_polygraphy_json(text, path); });
}

}  // namespace pg::data
