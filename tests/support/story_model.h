// Polygraphy's precision-constraints story as a model built in code:
// x[1,1,4,4] -> MatMul(I) -> Add(c) -> Sub(c) -> MatMul(I). With c = 65504, FP16 loses x.
#pragma once

#include <string>

namespace pg::test {

// Writes the model to DIR/story.onnx and returns the path.
std::string story_model(const std::string& dir, float c = 65504.0f);

}  // namespace pg::test
