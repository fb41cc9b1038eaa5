#include "cli/layerwise_save.h"

#include <cstdint>

#include "base/error.h"
#include "base/log.h"
#include "data/polygraphy_json.h"

namespace pg::cli {

namespace {

void put(std::FILE* f, const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f) != n)
        throw Error(ErrorKind::kIo, "cannot write the layer-wise spool file");
}

bool get(std::FILE* f, void* p, size_t n) {
    return n == 0 || std::fread(p, 1, n, f) == n;
}

}  // namespace

LayerwiseSaver::LayerwiseSaver(const std::string& path, std::string runner0, std::string runner1)
    : writer_(std::make_unique<data::RunResultsWriter>(path)),
      runner1_(std::move(runner1)),
      spool_(std::tmpfile()) {
    if (!spool_)
        throw Error(ErrorKind::kIo, "cannot create a temporary spool file for --save-outputs");
    writer_->begin_runner(runner0);
    writer_->begin_iteration();
}

LayerwiseSaver::~LayerwiseSaver() {
    if (spool_) std::fclose(spool_);
}

void LayerwiseSaver::add(const std::string& name, const Tensor& a, const Tensor& b) {
    if (a.is_string() || b.is_string() || !a.has_data() || !b.has_data()) {
        log_warning("--save-outputs: tensor '{}' is not saved (string or no data)", name);
        return;
    }
    writer_->add_output(name, a);
    spool(name, b);
}

void LayerwiseSaver::spool(const std::string& name, const Tensor& t) {
    const uint64_t n = name.size(), rank = t.dims().size(), bytes = t.nbytes();
    const int32_t dt = static_cast<int32_t>(t.dtype());
    put(spool_, &n, 8);
    put(spool_, name.data(), name.size());
    put(spool_, &dt, 4);
    put(spool_, &rank, 8);
    put(spool_, t.dims().data(), rank * 8);
    put(spool_, &bytes, 8);
    put(spool_, t.bytes(), bytes);
}

bool LayerwiseSaver::read_spooled(std::string* name, Tensor* t) {
    uint64_t n = 0, rank = 0, bytes = 0;
    int32_t dt = 0;
    if (!get(spool_, &n, 8)) return false;
    name->resize(n);
    std::vector<int64_t> dims;
    bool ok = get(spool_, name->data(), n) && get(spool_, &dt, 4) && get(spool_, &rank, 8);
    dims.resize(ok ? rank : 0);
    ok = ok && get(spool_, dims.data(), rank * 8) && get(spool_, &bytes, 8);
    std::string data(ok ? bytes : 0, '\0');
    if (!ok || !get(spool_, data.data(), bytes))
        throw Error(ErrorKind::kIo, "the layer-wise spool file is truncated");
    *t = Tensor::from_bytes(static_cast<DataType>(dt), std::move(dims), std::move(data));
    return true;
}

void LayerwiseSaver::finish() {
    writer_->end_iteration(std::nullopt);
    writer_->begin_runner(runner1_);
    writer_->begin_iteration();
    std::rewind(spool_);
    std::string name;
    Tensor t;
    while (read_spooled(&name, &t)) writer_->add_output(name, t);
    writer_->end_iteration(std::nullopt);
    writer_->finish();
}

}  // namespace pg::cli
