// Prints the coefficient tables of src/ops/vec_math.cc's float32 erf and tanh (run it and paste
// the output into vec_math_tables.h when the scheme changes): 16 intervals of width 1/4 over [0,
// 4). Intervals 0 and 1
// (|x| < 1/2) use erf(x) = x + x * Q(x^2) with Q's Taylor series; intervals i >= 2 use the
// Taylor series of erf around the interval's centre c = i/4 + 1/8 in r = |x| - c, with erf(c)
// split into a float head (kErfHead) and the tail folded into the constant term. erf's
// derivatives come from the Hermite recurrence: erf^(k)(c) = 2/sqrt(pi) (-1)^(k-1) H_(k-1)(c)
// exp(-c^2). Also prints, per interval, the largest truncation error (long double evaluation
// of the float coefficients against erfl) in units of the float result's ulp.
// The tanh table (4 intervals below 1, the same two forms; Taylor coefficients from the
// derivative recurrence of tanh) follows. Usage: pg_vec_math_coeffs [ERF_DEGREE [TANH_DEGREE]]
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

// tanh's Taylor coefficients at c up to `degree`: tanh^(k)(c) = P_k(tanh c) with P_0(t) = t and
// P_(k+1)(t) = P_k'(t) (1 - t^2).
std::vector<LD> tanh_taylor(LD c, int degree) {
    std::vector<LD> poly = {0, 1};  // P_0(t) = t, coefficients of t^j
    const LD t = std::tanh(c);
    std::vector<LD> out;
    LD fact = 1;
    for (int k = 0; k <= degree; ++k) {
        if (k > 0) fact *= k;
        LD v = 0;
        for (size_t j = poly.size(); j-- > 0;) v = v * t + poly[j];
        out.push_back(v / fact);
        std::vector<LD> d(poly.size() + 1, 0);  // P' (1 - t^2)
        for (size_t j = 1; j < poly.size(); ++j) {
            d[j - 1] += j * poly[j];
            d[j + 1] -= j * poly[j];
        }
        poly = d;
    }
    return out;
}

// tanh on |x| < 1: intervals 0 and 1 (|x| < 1/2) x + x * Q(x^2), Q(s) = tanh(x) / x - 1 from
// tanh's odd Taylor coefficients at 0; intervals 2 and 3 the Taylor series around c = i/4 + 1/8
// with tanh(c) split into head and tail. (|x| >= 1 uses 1 - 2 / (exp(2|x|) + 1).)
std::vector<LD> tanh_coeffs(int i, int degree, LD& head) {
    std::vector<LD> c(static_cast<size_t>(degree + 1));
    if (i < 2) {
        head = 0;
        const std::vector<LD> a = tanh_taylor(0, 2 * degree + 1);
        for (int n = 0; n <= degree; ++n)
            c[static_cast<size_t>(n)] = a[static_cast<size_t>(2 * n + 1)] - (n == 0 ? 1 : 0);
        return c;
    }
    const LD x = i / 4.0L + 0.125L;
    const std::vector<LD> a = tanh_taylor(x, degree);
    head = static_cast<float>(a[0]);
    c = a;
    c[0] = a[0] - head;
    return c;
}

using CoeffFn = std::vector<LD> (*)(int, int, LD&);

// Prints kNAMEHead[16] and kNAMECoef[degree + 1][16] for `used` intervals (the rest zero) and
// reports each interval's truncation error against f.
void print_table(const char* name, int used, int degree, CoeffFn coeffs, LD (*f)(LD)) {
    std::vector<std::vector<float>> table(16, std::vector<float>(size_t(degree + 1), 0.0f));
    std::vector<float> heads(16, 0.0f);
    for (int i = 0; i < used; ++i) {
        LD head = 0;
        const std::vector<LD> c = coeffs(i, degree, head);
        heads[static_cast<size_t>(i)] = static_cast<float>(head);
        for (size_t k = 0; k < c.size(); ++k)
            table[static_cast<size_t>(i)][k] = static_cast<float>(c[k]);
        LD worst = 0;
        for (int s = 0; s <= 4000; ++s) {
            const LD ax = (i + s / 4000.0L) / 4.0L;
            const LD r = i < 2 ? ax * ax : ax - (i / 4.0L + 0.125L);
            LD p = 0;
            for (int k = degree; k >= 0; --k)
                p = p * r + table[static_cast<size_t>(i)][static_cast<size_t>(k)];
            const LD got = i < 2 ? ax + ax * p : head + p;
            const LD want = f(ax);
            if (ax > 0) {
                const LD err = std::fabs(got - want) / ulp_of(static_cast<float>(want));
                if (err > worst) worst = err;
            }
        }
        std::fprintf(stderr, "%s interval %2d: truncation %.4Lf ulp\n", name, i, worst);
    }
    std::printf("constexpr float k%sHead[16] = {", name);
    for (float h : heads) std::printf("%a, ", static_cast<double>(h));
    std::printf("};\n// k%sCoef[k][i]: coefficient of r^k in interval i.\n", name);
    std::printf("constexpr float k%sCoef[%d][16] = {\n", name, degree + 1);
    for (int k = 0; k <= degree; ++k) {
        std::printf("    {");
        for (int i = 0; i < 16; ++i)
            std::printf("%a, ",
                        static_cast<double>(table[static_cast<size_t>(i)][static_cast<size_t>(k)]));
        std::printf("},\n");
    }
    std::printf("};\n");
}

LD erf_ld(LD x) {
    return std::erf(x);
}
LD tanh_ld(LD x) {
    return std::tanh(x);
}

}  // namespace

int main(int argc, char** argv) {
    const int erf_degree = argc > 1 ? std::atoi(argv[1]) : 7;
    const int tanh_degree = argc > 2 ? std::atoi(argv[2]) : 8;
    print_table("Erf", 16, erf_degree, interval_coeffs, erf_ld);
    print_table("Tanh", 4, tanh_degree, tanh_coeffs, tanh_ld);
}
