// Prints the coefficient tables of src/ops/vec_math.cc's float32 erf (run it and paste the output
// there when the scheme changes): 16 intervals of width 1/4 over [0, 4). Intervals 0 and 1
// (|x| < 1/2) use erf(x) = x + x * Q(x^2) with Q's Taylor series; intervals i >= 2 use the
// Taylor series of erf around the interval's centre c = i/4 + 1/8 in r = |x| - c, with erf(c)
// split into a float head (kErfHead) and the tail folded into the constant term. erf's
// derivatives come from the Hermite recurrence: erf^(k)(c) = 2/sqrt(pi) (-1)^(k-1) H_(k-1)(c)
// exp(-c^2). Also prints, per interval, the largest truncation error (long double evaluation
// of the float coefficients against erfl) in units of the float result's ulp.
// Usage: pg_vec_math_coeffs [DEGREE]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using LD = long double;
const LD kTwoOverSqrtPi = 1.128379167095512573896158903121545172L;

LD ulp_of(float y) {
    const float a = std::fabs(y);
    if (a < 1.17549435e-38f) return std::ldexp(1.0L, -149);
    int e = 0;
    std::frexp(a, &e);
    return std::ldexp(1.0L, e - 24);
}

// coef[k] for k = 0..degree of interval i, and the head (0 for the Q form).
std::vector<LD> interval_coeffs(int i, int degree, LD& head) {
    std::vector<LD> c(static_cast<size_t>(degree + 1));
    if (i < 2) {
        head = 0;
        LD fact = 1;
        for (int n = 0; n <= degree; ++n) {
            if (n > 0) fact *= n;
            const LD t = kTwoOverSqrtPi / (fact * (2 * n + 1));
            c[static_cast<size_t>(n)] = (n % 2 ? -t : t) - (n == 0 ? 1 : 0);
        }
        return c;
    }
    const LD x = i / 4.0L + 0.125L;
    const LD e = std::exp(-x * x);
    std::vector<LD> h(static_cast<size_t>(degree + 1));  // H_0 .. H_degree-1
    h[0] = 1;
    if (degree > 1) h[1] = 2 * x;
    for (int n = 1; n + 1 < degree; ++n)
        h[static_cast<size_t>(n + 1)] =
            2 * x * h[static_cast<size_t>(n)] - 2 * n * h[static_cast<size_t>(n - 1)];
    const LD f = std::erf(x);
    head = static_cast<float>(f);
    c[0] = f - head;
    LD fact = 1;
    for (int k = 1; k <= degree; ++k) {
        fact *= k;
        const LD d = kTwoOverSqrtPi * h[static_cast<size_t>(k - 1)] * e / fact;
        c[static_cast<size_t>(k)] = (k % 2 ? d : -d);
    }
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    const int degree = argc > 1 ? std::atoi(argv[1]) : 9;
    std::vector<std::vector<float>> table(16);
    std::vector<float> heads(16);
    for (int i = 0; i < 16; ++i) {
        LD head = 0;
        const std::vector<LD> c = interval_coeffs(i, degree, head);
        heads[static_cast<size_t>(i)] = static_cast<float>(head);
        for (LD v : c) table[static_cast<size_t>(i)].push_back(static_cast<float>(v));
        LD worst = 0;
        for (int s = 0; s <= 4000; ++s) {
            const LD ax = (i + s / 4000.0L) / 4.0L;
            const LD r = i < 2 ? ax * ax : ax - (i / 4.0L + 0.125L);
            LD p = 0;
            for (int k = degree; k >= 0; --k)
                p = p * r + table[static_cast<size_t>(i)][static_cast<size_t>(k)];
            const LD got = i < 2 ? ax + ax * p : head + p;
            const LD want = std::erf(ax);
            if (ax > 0) {
                const LD err = std::fabs(got - want) / ulp_of(static_cast<float>(want));
                if (err > worst) worst = err;
            }
        }
        std::fprintf(stderr, "interval %2d: truncation %.4Lf ulp\n", i, worst);
    }
    std::printf("constexpr float kErfHead[16] = {");
    for (float h : heads) std::printf("%a, ", static_cast<double>(h));
    std::printf("};\n// kErfCoef[k][i]: coefficient of r^k in interval i.\n");
    std::printf("constexpr float kErfCoef[%d][16] = {\n", degree + 1);
    for (int k = 0; k <= degree; ++k) {
        std::printf("    {");
        for (int i = 0; i < 16; ++i)
            std::printf("%a, ",
                        static_cast<double>(table[static_cast<size_t>(i)][static_cast<size_t>(k)]));
        std::printf("},\n");
    }
    std::printf("};\n");
}
