// Internal to the runtime: checking user-supplied input values against the graph's inputs.
#pragma once

#include <vector>

#include "runtime/session.h"

namespace pg::runtime {

// Values for g's inputs in order, up to the last one fed or without an initializer (the ones
// after it keep their initializers); kInvalidInput naming the input when a feed is missing, has
// the wrong dtype, or a shape that contradicts a static dim; unknown feed names are an error.
std::vector<ops::RtValue> bind_feeds(const ir::Graph& g, const Feeds& feeds);

}  // namespace pg::runtime
