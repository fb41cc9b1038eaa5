// Detection ops: NonMaxSuppression (opset 10, 11). Per batch and class, candidates (score >
// score_threshold when that input is given) are visited by descending score, ties by ascending
// box index; a candidate is kept unless its IoU with an already kept box of the class exceeds
// iou_threshold, until max_output_boxes_per_class are kept. Box arithmetic is done in the boxes'
// type, as ONNX's reference does, so threshold boundaries decide identically.
#include <algorithm>
#include <array>
#include <cmath>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

// A box as (x_min, x_max, y_min, y_max).
template <typename T>
std::array<T, 4> box_extent(const T* b, bool center_point) {
    if (center_point) return {b[0] - b[2] / 2, b[0] + b[2] / 2, b[1] - b[3] / 2, b[1] + b[3] / 2};
    return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

// True when the IoU of boxes a and b is greater than `threshold`.
template <typename T>
bool suppresses(const T* a, const T* b, bool center_point, T threshold) {
    const auto p = box_extent(a, center_point), q = box_extent(b, center_point);
    const T ix_min = std::max(p[0], q[0]), ix_max = std::min(p[1], q[1]);
    if (ix_max <= ix_min) return false;
    const T iy_min = std::max(p[2], q[2]), iy_max = std::min(p[3], q[3]);
    if (iy_max <= iy_min) return false;
    const T inter = (ix_max - ix_min) * (iy_max - iy_min);
    if (inter <= 0) return false;
    const T area1 = (p[1] - p[0]) * (p[3] - p[2]), area2 = (q[1] - q[0]) * (q[3] - q[2]);
    const T uni = area1 + area2 - inter;
    if (area1 <= 0 || area2 <= 0 || uni <= 0) return false;
    return inter / uni > threshold;
}

struct NmsParams {
    int64_t max_per_class = 0;
    double iou = 0, score = 0;
    bool has_score = false;
};

NmsParams nms_params(KernelContext& ctx) {
    NmsParams p;
    const auto present = [&](size_t i) { return ctx.has_input(i) && ctx.input(i).numel() > 0; };
    if (present(2))
        p.max_per_class = std::max<int64_t>(
            to_int64_vector(ctx.input(2), "NonMaxSuppression max_output_boxes_per_class")[0], 0);
    if (present(3)) p.iou = ctx.input(3).element_as_double(0);
    if (present(4)) p.score = ctx.input(4).element_as_double(0), p.has_score = true;
    return p;
}

// Selected box indices of one (batch, class), in selection order.
template <typename T>
std::vector<int64_t> select_boxes(const T* boxes, const T* scores, int64_t n, const NmsParams& p,
                                  bool center_point) {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < n; ++i)
        if (!p.has_score || scores[i] > static_cast<T>(p.score)) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
    std::vector<int64_t> kept;
    for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
        bool keep = true;
        for (int64_t k : kept)
            if (suppresses(boxes + 4 * i, boxes + 4 * k, center_point, static_cast<T>(p.iou))) {
                keep = false;
                break;
            }
        if (keep) kept.push_back(i);
    }
    return kept;
}

KernelFn make_nms(const Attrs& a, int64_t) {
    const int64_t cpb = a.get_int("center_point_box", 0);
    if (cpb != 0 && cpb != 1) fail("NonMaxSuppression: center_point_box must be 0 or 1");
    return [cpb](KernelContext& ctx) {
        const Tensor& boxes = ctx.input(0);
        const Tensor& scores = ctx.input(1);
        if (boxes.rank() != 3 || boxes.dims()[2] != 4)
            fail("NonMaxSuppression: boxes must be [B, n, 4]");
        if (scores.rank() != 3 || scores.dims()[0] != boxes.dims()[0] ||
            scores.dims()[2] != boxes.dims()[1])
            fail("NonMaxSuppression: scores must be [B, classes, n] matching boxes");
        if (scores.dtype() != boxes.dtype())
            fail("NonMaxSuppression: boxes and scores differ in type");
        const NmsParams p = nms_params(ctx);
        const int64_t nb = boxes.dims()[0], nc = scores.dims()[1], n = boxes.dims()[1];
        std::vector<int64_t> out;
        dispatch_float(boxes.dtype(), "NonMaxSuppression", [&]<typename T>() {
            for (int64_t b = 0; b < nb; ++b)
                for (int64_t c = 0; c < nc; ++c)
                    for (int64_t i :
                         select_boxes(boxes.data<T>() + b * n * 4,
                                      scores.data<T>() + (b * nc + c) * n, n, p, cpb == 1))
                        out.insert(out.end(), {b, c, i});
        });
        ctx.set_output(0, Tensor::from_values(DataType::kInt64,
                                              {static_cast<int64_t>(out.size() / 3), 3}, out));
    };
}

}  // namespace

void register_detection_ops(OpTable& t) {
    t.add("NonMaxSuppression", 10, NumericContract::kExact, make_nms);
}

}  // namespace pg::ops
