// Polygraphy's default data loader (polygraphy-spec §5.1): random inputs for a runner's input
// metadata, iteration i drawn from np.random.RandomState(seed + i), inputs filled in metadata
// order from that one stream. Shapes come from the model, overridden by --input-shapes
// (fnmatch keys); dynamic dims become 1 with Polygraphy's warning. Values follow --val-range
// (per input or "" default) or the deprecated --int-*/--float-* ranges.
// Usage: DataLoader dl(runner.input_metadata(), opts); for (i < dl.size()) feed = dl.get(i);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/random_fill.h"
#include "ir/type.h"
#include "runners/runner.h"

namespace pg::data {

struct DataLoaderOptions {
    int64_t seed = 1;        // --seed; iteration i uses seed + i (must stay within uint32)
    int64_t iterations = 1;  // --iterations
    // --val-range entries in the order given; key "" is the default for unlisted inputs.
    std::vector<std::pair<std::string, ValRange>> val_range;
    std::optional<ValRange> int_range;    // deprecated --int-min/--int-max (default 1..25)
    std::optional<ValRange> float_range;  // deprecated --float-min/--float-max (default -1..1)
    // --input-shapes NAME:SHAPE; keys may hold fnmatch wildcards. Negative or symbolic dims
    // are dynamic (and make the override unusable, as in Polygraphy).
    std::vector<std::pair<std::string, ir::Shape>> input_shapes;
};

// What the loader generates for one input: resolved once, used for every iteration.
struct InputPlan {
    std::string name;
    DataType dtype = DataType::kUndefined;
    std::vector<int64_t> shape;          // static shape of the generated array
    std::optional<Tensor> shape_tensor;  // set when the values come from --input-shapes
    ValRange range;
};

class DataLoader {
  public:
    // Resolves shapes and ranges, logging Polygraphy's warnings once. Throws kUsage for bad
    // options, kInvalidInput when a shape cannot be made static.
    DataLoader(const std::vector<runners::TensorMeta>& inputs, DataLoaderOptions opts);

    // Number of feed dicts (--iterations).
    int64_t size() const { return opts_.iterations; }
    // Feed dict `index` (0-based), inputs in metadata order. Deterministic per index.
    runners::NamedTensors get(int64_t index) const;
    const std::vector<InputPlan>& plan() const { return plan_; }

  private:
    DataLoaderOptions opts_;
    std::vector<InputPlan> plan_;
};

}  // namespace pg::data
