/* Branch-free exp and the logistic derivative, so that loops over samples vectorize.
 *
 * Why not libm's exp: a call per sample stops the compiler from vectorizing the loop, and the
 * DP-CD logistic update (n exp per coordinate step) is bound by it. This polynomial, inlined,
 * vectorizes (SSE2 anywhere; AVX2 / AVX-512 clones below where GCC supports them) and is
 * 2-5x faster per sample than glibc's exp in the DP-CD lane sum.
 *
 * dpsco_exp(x), with x clamped to [-708, 710]: +inf above 709.78 as libm; below -708 it
 * returns exp(-708) ~ 3.3e-308 instead of a subnormal or 0 (the only use is 1 / (1 + exp(u)),
 * where that is 1 exactly either way):
 *
 *   k = round(x / ln 2)             by the 1.5 * 2^52 shift (exact for |k| < 2^51)
 *   r = x - k ln2_hi - k ln2_lo     Cody-Waite: ln2_hi has 11 trailing zero bits, so k ln2_hi
 *                                   is exact for |k| <= 2048, and |r| <= ln2 / 2 + 1e-12
 *   exp(r) = sum_{i<=13} r^i / i!   Horner; truncation error (ln2/2)^14 / 14! < 5e-18
 *   exp(x) = (2 exp(r)) 2^(k-1)     2^(k-1) built from its exponent bits (k - 1 + 1023 in
 *                                   [2, 2046] for k in [-1021, 1024]); the factor 2 is exact and
 *                                   lets k = 1024 (x in [709.44, 709.78]) stay finite
 *
 * Max distance to glibc's exp on 2e5 points of [-708, 709.78]: one ulp. Only +, -, *, / and integer bit operations are used, so with -ffp-contract=off (set
 * by setup.py) every clone and the NumPy twin (dpsco_core.reference.loss.exp_poly) round
 * alike: results are bitwise identical across machines and instruction sets.
 */
#ifndef DPSCO_EXP_POLY_H
#define DPSCO_EXP_POLY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && defined(__GLIBC__) && (__GNUC__ >= 8)
/* One compiled body per instruction set, picked at load time (ifunc: GCC on glibc only, so
 * musl, macOS and Windows builds take the baseline body); same arithmetic in every body. */
#define DPSCO_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DPSCO_SIMD_CLONES
#endif

#if defined(__GNUC__)
#define DPSCO_MAYBE_UNUSED __attribute__((unused))   /* modules that only use dpsco_exp */
#else
#define DPSCO_MAYBE_UNUSED
#endif

static inline double dpsco_exp(double x)
{
    const double shift = 6755399441055744.0;          /* 1.5 * 2^52 */
    const double log2e = 1.4426950408889634;
    const double ln2_hi = 0.693145751953125;          /* 11 trailing zero bits */
    const double ln2_lo = 1.4286068203094173e-06;
    double kd, k, r, p, scale;
    int64_t bits;
    x = x < -708.0 ? -708.0 : x;
    x = x > 710.0 ? 710.0 : x;
    kd = x * log2e + shift;
    k = kd - shift;
    r = x - k * ln2_hi;
    r = r - k * ln2_lo;
    p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    memcpy(&bits, &kd, sizeof bits);
    bits = (bits - (int64_t) 0x4338000000000000LL + 1022) << 52;
    memcpy(&scale, &bits, sizeof scale);
    return (p * 2.0) * scale;
}

/* d/dz log(1 + exp(-y z)) = -y sigmoid(-y z) = -y / (1 + exp(y z)), y in {-1, +1}. For
 * y z -> +inf it is -y / inf = -0 y (no overflow trap: -fno-trapping-math, see setup.py); for
 * y z -> -inf it is -y to the last bit. */
static inline double dpsco_logistic_deriv(double z, double y)
{
    return -y / (1.0 + dpsco_exp(y * z));
}

/* out[t] = clip(vals[t] * l'(z[t], y[t]), c) for the logistic loss, t < m, and clipped[t] = 1.0
 * where |term| > c (else 0.0). The flags go to an array rather than a running count: a double
 * count is an ordered reduction the compiler must not vectorize, and an integer count mixed
 * with doubles does not vectorize on SSE2; the caller sums the flags in its lanes. */
DPSCO_SIMD_CLONES DPSCO_MAYBE_UNUSED
static void dpsco_logistic_clipped_terms(const double *vals, const double *z, const double *y,
                                         ptrdiff_t m, double c, double *out, double *clipped)
{
    double term;
    ptrdiff_t t;
    for (t = 0; t < m; t++) {
        term = vals[t] * dpsco_logistic_deriv(z[t], y[t]);
        clipped[t] = fabs(term) > c ? 1.0 : 0.0;
        term = term < c ? term : c;
        out[t] = term > -c ? term : -c;
    }
}

#endif
