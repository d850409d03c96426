/* DP-CD inner loops on AVX2 (4 doubles per vector), bitwise equal to the scalar loops of
 * _cd.pyx and to the NumPy twin (dpsco_core.reference.cd).
 *
 * Why it stays bitwise equal: the scalar kernel sums the terms of a column in four lanes, term t
 * to lane t mod 4, each lane left to right, result (a0 + a1) + (a2 + a3). One __m256d
 * accumulator holds exactly (a0, a1, a2, a3): vector element k adds term t + k of each block of
 * four, which is lane k's next term. Every per-term operation is the scalar one, element by
 * element, in the same order (products, then min then max with the same operand order, no FMA:
 * -ffp-contract=off and explicit mul/add intrinsics), and the ragged tail (m mod 4 terms) goes
 * through the scalar code.
 *
 *   _mm256_min_pd(a, b) = a < b ? a : b   and   _mm256_max_pd(a, b) = a > b ? a : b
 *
 * (Intel SDM MINPD/MAXPD: the second operand when unordered or equal), which are the scalar
 * selects `term < c ? term : c` and `term > -c ? term : -c`, NaN and signed zeros included.
 *
 * Unclipped first try (squared loss): when no term of a column exceeds its clip, the clipped
 * sum is the plain sum, bit for bit (clip(t) == t as a value for |t| <= c; a lane starts at +0.0
 * so the sign of a zero term never shows). The first try sums the unclipped terms and their
 * largest magnitude (6 vector operations per 4 terms instead of 9); if that maximum exceeds c,
 * or the sum is NaN (a NaN term, which the clip would have replaced), the column is summed again
 * with clipping. A per-column hint remembers a column whose last sum clipped, so a column that
 * always clips pays one pass, not two.
 *
 * float32 X (the *_f32 bodies): each value is converted to double on load (_mm256_cvtps_pd of a
 * 4-float load; the C conversion in scalar code), which is exact, and every operation is the
 * double one: a float32 run is bitwise the run on X converted to float64.
 *
 * Dispatch: dpsco_cd_init() picks the AVX2 bodies when the compiler can emit them (GCC or clang
 * on x86-64) and the CPU has AVX2 (__builtin_cpu_supports), unless the caller asks for the
 * scalar path (_cd.set_simd_path("scalar") or DPSCO_CD_SIMD=scalar at import: tests run both).
 */
#ifndef DPSCO_CD_SIMD_H
#define DPSCO_CD_SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include "_exp_poly.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define DPSCO_CD_HAVE_AVX2 1
#include <immintrin.h>
#define DPSCO_AVX2 __attribute__((target("avx2")))
#else
#define DPSCO_CD_HAVE_AVX2 0
#endif

/* 1: the AVX2 bodies are used. Written only between calls (Python holds the GIL). */
static int dpsco_cd_avx2 = 0;

/* requested: 0 scalar, 1 best available. Returns the path taken (0 or 1). */
static int dpsco_cd_init(int requested)
{
#if DPSCO_CD_HAVE_AVX2
    __builtin_cpu_init();
    dpsco_cd_avx2 = requested && __builtin_cpu_supports("avx2");
#else
    (void) requested;
    dpsco_cd_avx2 = 0;
#endif
    return dpsco_cd_avx2;
}

/* ---- scalar pieces shared by both paths ------------------------------------------------ */

static inline double dpsco_cd_clip1(double term, double c, Py_ssize_t *n_clipped)
{
    *n_clipped += fabs(term) > c;
    term = term < c ? term : c;
    return term > -c ? term : -c;
}

/* z = X @ coef for dense Fortran-ordered X (n, p), skipping zero coefficients; per element the
 * same sum as the column-by-column loop ((0 + c_j1 x_j1) + c_j2 x_j2 ...), but row-blocked so
 * that z is written once per block instead of once per column. */
#define DPSCO_CD_MARGIN_BLOCK 512
#define DPSCO_CD_MARGINS_BODY(T)                                                              \
    {                                                                                         \
        Py_ssize_t i0, i, j, len;                                                             \
        for (i0 = 0; i0 < n; i0 += DPSCO_CD_MARGIN_BLOCK) {                                   \
            double *zb = z + i0;                                                              \
            len = n - i0 < DPSCO_CD_MARGIN_BLOCK ? n - i0 : DPSCO_CD_MARGIN_BLOCK;            \
            for (i = 0; i < len; i++)                                                         \
                zb[i] = 0.0;                                                                  \
            for (j = 0; j < p; j++) {                                                         \
                const double cj = coef[j];                                                    \
                const T *col = X + j * n + i0;                                                \
                if (cj == 0.0)                                                                \
                    continue;                                                                 \
                for (i = 0; i < len; i++)                                                     \
                    zb[i] = zb[i] + cj * col[i];                                              \
            }                                                                                 \
        }                                                                                     \
    }

static void dpsco_cd_margins_scalar(const double *X, Py_ssize_t n, Py_ssize_t p,
                                    const double *coef, double *z)
DPSCO_CD_MARGINS_BODY(double)

static void dpsco_cd_margins_scalar_f32(const float *X, Py_ssize_t n, Py_ssize_t p,
                                        const double *coef, double *z)
DPSCO_CD_MARGINS_BODY(float)

static void dpsco_cd_axpy_scalar(double *z, double a, const double *x, Py_ssize_t n)
{
    Py_ssize_t i;
    for (i = 0; i < n; i++)
        z[i] = z[i] + a * x[i];
}

static void dpsco_cd_axpy_scalar_f32(double *z, double a, const float *x, Py_ssize_t n)
{
    Py_ssize_t i;
    for (i = 0; i < n; i++)
        z[i] = z[i] + a * (double) x[i];
}

#if DPSCO_CD_HAVE_AVX2

DPSCO_AVX2 static void dpsco_cd_margins_avx2(const double *X, Py_ssize_t n, Py_ssize_t p,
                                             const double *coef, double *z)
DPSCO_CD_MARGINS_BODY(double)

DPSCO_AVX2 static void dpsco_cd_margins_avx2_f32(const float *X, Py_ssize_t n, Py_ssize_t p,
                                                 const double *coef, double *z)
DPSCO_CD_MARGINS_BODY(float)

DPSCO_AVX2 static void dpsco_cd_axpy_avx2(double *z, double a, const double *x, Py_ssize_t n)
{
    Py_ssize_t i, head = n - n % 4;
    const __m256d av = _mm256_set1_pd(a);
    for (i = 0; i < head; i += 4)
        _mm256_storeu_pd(z + i, _mm256_add_pd(_mm256_loadu_pd(z + i),
                                              _mm256_mul_pd(av, _mm256_loadu_pd(x + i))));
    for (; i < n; i++)
        z[i] = z[i] + a * x[i];
}

DPSCO_AVX2 static void dpsco_cd_axpy_avx2_f32(double *z, double a, const float *x,
                                              Py_ssize_t n)
{
    Py_ssize_t i, head = n - n % 4;
    const __m256d av = _mm256_set1_pd(a);
    for (i = 0; i < head; i += 4)
        _mm256_storeu_pd(z + i, _mm256_add_pd(_mm256_loadu_pd(z + i),
                                              _mm256_mul_pd(av, _mm256_cvtps_pd(
                                                  _mm_loadu_ps(x + i)))));
    for (; i < n; i++)
        z[i] = z[i] + a * (double) x[i];
}

/* ---- loads of z_i and y_i for terms t..t+3 (dense columns only: for CSC, AVX2 gathers were
 * measured slower than the scalar loops on the development machine, AMD EPYC Zen 1, by 5% for
 * the squared and 9% for the logistic loss at 100 entries per column; CSC stays scalar) ---- */

#define DPSCO_LOAD_DENSE(t)                                                                   \
    zv = _mm256_loadu_pd(z + (t));                                                            \
    yv = _mm256_loadu_pd(y + (t));

/* loss derivatives, element by element as loss_deriv of _loss.pxd */
#define DPSCO_DERIV_SQUARED dv = _mm256_mul_pd(two, _mm256_sub_pd(zv, yv));

/* -y / (1 + dpsco_exp(y z)), each operation as in _exp_poly.h */
DPSCO_AVX2 static inline __m256d dpsco_exp_avx2(__m256d x)
{
    const __m256d shift = _mm256_set1_pd(6755399441055744.0);
    __m256d kd, k, r, p, scale;
    __m256i bits;
    x = _mm256_max_pd(_mm256_set1_pd(-708.0), x);    /* x < -708 ? -708 : x */
    x = _mm256_min_pd(_mm256_set1_pd(710.0), x);     /* x > 710 ? 710 : x */
    kd = _mm256_add_pd(_mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634)), shift);
    k = _mm256_sub_pd(kd, shift);
    r = _mm256_sub_pd(x, _mm256_mul_pd(k, _mm256_set1_pd(0.693145751953125)));
    r = _mm256_sub_pd(r, _mm256_mul_pd(k, _mm256_set1_pd(1.4286068203094173e-06)));
#define DPSCO_HORNER(coef) p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(coef));
    p = _mm256_set1_pd(1.0 / 6227020800.0);
    DPSCO_HORNER(1.0 / 479001600.0)
    DPSCO_HORNER(1.0 / 39916800.0)
    DPSCO_HORNER(1.0 / 3628800.0)
    DPSCO_HORNER(1.0 / 362880.0)
    DPSCO_HORNER(1.0 / 40320.0)
    DPSCO_HORNER(1.0 / 5040.0)
    DPSCO_HORNER(1.0 / 720.0)
    DPSCO_HORNER(1.0 / 120.0)
    DPSCO_HORNER(1.0 / 24.0)
    DPSCO_HORNER(1.0 / 6.0)
    DPSCO_HORNER(0.5)
    DPSCO_HORNER(1.0)
    DPSCO_HORNER(1.0)
#undef DPSCO_HORNER
    bits = _mm256_castpd_si256(kd);
    bits = _mm256_add_epi64(_mm256_sub_epi64(bits, _mm256_set1_epi64x(0x4338000000000000LL)),
                            _mm256_set1_epi64x(1022));
    scale = _mm256_castsi256_pd(_mm256_slli_epi64(bits, 52));
    return _mm256_mul_pd(_mm256_mul_pd(p, _mm256_set1_pd(2.0)), scale);
}

#define DPSCO_DERIV_LOGISTIC                                                                  \
    dv = _mm256_div_pd(_mm256_xor_pd(yv, signbit),                                            \
                       _mm256_add_pd(one, dpsco_exp_avx2(_mm256_mul_pd(yv, zv))));

/* The clipped sum over m terms: vector part (head = m - m mod 4 terms) then the scalar tail.
 * FAST: 1 for the unclipped first try (falls back to the clipped loop by `goto`). */
#define DPSCO_CD_SUM_BODY(LOAD, DERIV, XVAL, SCALAR_TERM, FAST, PRE_TAIL)                               \
    {                                                                                         \
        const __m256d two = _mm256_set1_pd(2.0), one = _mm256_set1_pd(1.0);                  \
        const __m256d signbit = _mm256_set1_pd(-0.0);                                         \
        const __m256d cv = _mm256_set1_pd(c), mcv = _mm256_set1_pd(-c);                      \
        __m256d acc, zv, yv, dv, term;                                                        \
        double lane[4];                                                                       \
        Py_ssize_t t, head = m - m % 4;                                                       \
        int64_t cnt[4];                                                                       \
        (void) two; (void) one; (void) signbit;                                               \
        if (FAST && count && *try_fast) {                                                \
            __m256d mx = _mm256_setzero_pd();                                                 \
            acc = _mm256_setzero_pd();                                                        \
            for (t = 0; t < head; t += 4) {                                                   \
                LOAD(t)                                                                       \
                DERIV                                                                         \
                term = _mm256_mul_pd(XVAL(t), dv);                                            \
                acc = _mm256_add_pd(acc, term);                                               \
                mx = _mm256_max_pd(mx, _mm256_andnot_pd(signbit, term));                      \
            }                                                                                 \
            mx = _mm256_max_pd(mx, _mm256_permute2f128_pd(mx, mx, 1));                        \
            mx = _mm256_max_pd(mx, _mm256_permute_pd(mx, 5));                                 \
            _mm256_storeu_pd(lane, acc);                                                      \
            if (_mm256_cvtsd_f64(mx) <= c                                                     \
                    && !isnan((lane[0] + lane[1]) + (lane[2] + lane[3])))                     \
                goto tail;                                                                    \
            *try_fast = 0;                                                                    \
        }                                                                                     \
        if (!count) {                                                                         \
            acc = _mm256_setzero_pd();                                                        \
            for (t = 0; t < head; t += 4) {                                                   \
                LOAD(t)                                                                       \
                DERIV                                                                         \
                term = _mm256_mul_pd(XVAL(t), dv);                                            \
                term = _mm256_min_pd(term, cv);                                               \
                term = _mm256_max_pd(term, mcv);                                              \
                acc = _mm256_add_pd(acc, term);                                               \
            }                                                                                 \
            _mm256_storeu_pd(lane, acc);                                                      \
        } else {                                                                              \
            __m256i cntv = _mm256_setzero_si256();                                            \
            acc = _mm256_setzero_pd();                                                        \
            for (t = 0; t < head; t += 4) {                                                   \
                LOAD(t)                                                                       \
                DERIV                                                                         \
                term = _mm256_mul_pd(XVAL(t), dv);                                            \
                cntv = _mm256_sub_epi64(cntv, _mm256_castpd_si256(_mm256_cmp_pd(              \
                    _mm256_andnot_pd(signbit, term), cv, _CMP_GT_OQ)));                       \
                term = _mm256_min_pd(term, cv);                                               \
                term = _mm256_max_pd(term, mcv);                                              \
                acc = _mm256_add_pd(acc, term);                                               \
            }                                                                                 \
            _mm256_storeu_si256((__m256i *) cnt, cntv);                                       \
            _mm256_storeu_pd(lane, acc);                                                      \
            cnt[0] = (cnt[0] + cnt[1]) + (cnt[2] + cnt[3]);                                   \
            *n_clipped += (Py_ssize_t) cnt[0];                                                \
            *try_fast = cnt[0] == 0;                                                          \
        }                                                                                     \
    tail:                                                                                     \
        PRE_TAIL                                                                              \
        for (t = head; t < m; t++)                                                            \
            lane[t - head] = lane[t - head] + dpsco_cd_clip1(SCALAR_TERM(t), c, n_clipped);   \
        return (lane[0] + lane[1]) + (lane[2] + lane[3]);                                     \
    }

#define DPSCO_X_DENSE(t) _mm256_loadu_pd(vals + (t))
#define DPSCO_X_DENSE_F32(t) _mm256_cvtps_pd(_mm_loadu_ps(vals + (t)))
#define DPSCO_SQ_DENSE(t) (vals[t] * (2.0 * (z[t] - y[t])))
#define DPSCO_LOG_DENSE(t) (vals[t] * dpsco_logistic_deriv(z[t], y[t]))

DPSCO_AVX2 static double dpsco_cd_sq_dense_avx2(const double *vals, const double *z,
                                                const double *y, Py_ssize_t m, double c,
                                                Py_ssize_t *n_clipped, unsigned char *try_fast,
                                                int count)
DPSCO_CD_SUM_BODY(DPSCO_LOAD_DENSE, DPSCO_DERIV_SQUARED, DPSCO_X_DENSE, DPSCO_SQ_DENSE, 1, )

DPSCO_AVX2 static double dpsco_cd_sq_dense_avx2_f32(const float *vals, const double *z,
                                                    const double *y, Py_ssize_t m, double c,
                                                    Py_ssize_t *n_clipped,
                                                    unsigned char *try_fast, int count)
DPSCO_CD_SUM_BODY(DPSCO_LOAD_DENSE, DPSCO_DERIV_SQUARED, DPSCO_X_DENSE_F32, DPSCO_SQ_DENSE, 1, )

/* The previous update's axpy z += delta * xprev fused into this update's sum (squared loss):
 * one pass over z instead of two. z after the loop is exactly what the separate axpy leaves
 * (the same element-wise operations), and the sum reads the updated z, as before. With the
 * unclipped first try the axpy runs alone first, so that a fallback cannot apply it twice. */
#define DPSCO_LOAD_AXPY(t)                                                                    \
    zv = _mm256_add_pd(_mm256_loadu_pd(zw + (t)),                                             \
                       _mm256_mul_pd(dlt, _mm256_loadu_pd(xprev + (t))));                     \
    _mm256_storeu_pd(zw + (t), zv);                                                           \
    yv = _mm256_loadu_pd(y + (t));
#define DPSCO_LOAD_AXPY_F32(t)                                                                \
    zv = _mm256_add_pd(_mm256_loadu_pd(zw + (t)),                                             \
                       _mm256_mul_pd(dlt, _mm256_cvtps_pd(_mm_loadu_ps(xprev + (t)))));       \
    _mm256_storeu_pd(zw + (t), zv);                                                           \
    yv = _mm256_loadu_pd(y + (t));
#define DPSCO_AXPY_TAIL                                                                       \
    for (t = head; t < m; t++)                                                                \
        zw[t] = zw[t] + delta * xprev[t];

DPSCO_AVX2 static double dpsco_cd_sq_fused_body(double *zw, double delta, const double *xprev,
                                                const double *vals, const double *y,
                                                Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                                unsigned char *try_fast, int count)
{
    const double *z = zw;
    const __m256d dlt = _mm256_set1_pd(delta);
    DPSCO_CD_SUM_BODY(DPSCO_LOAD_AXPY, DPSCO_DERIV_SQUARED, DPSCO_X_DENSE, DPSCO_SQ_DENSE, 0,
                      DPSCO_AXPY_TAIL)
}

DPSCO_AVX2 static double dpsco_cd_sq_dense_fused_avx2(double *z, double delta,
                                                      const double *xprev, const double *vals,
                                                      const double *y, Py_ssize_t m, double c,
                                                      Py_ssize_t *n_clipped,
                                                      unsigned char *try_fast, int count)
{
    if (count && *try_fast) {
        dpsco_cd_axpy_avx2(z, delta, xprev, m);
        return dpsco_cd_sq_dense_avx2(vals, z, y, m, c, n_clipped, try_fast, count);
    }
    return dpsco_cd_sq_fused_body(z, delta, xprev, vals, y, m, c, n_clipped, try_fast, count);
}

DPSCO_AVX2 static double dpsco_cd_sq_fused_body_f32(double *zw, double delta,
                                                    const float *xprev, const float *vals,
                                                    const double *y, Py_ssize_t m, double c,
                                                    Py_ssize_t *n_clipped,
                                                    unsigned char *try_fast, int count)
{
    const double *z = zw;
    const __m256d dlt = _mm256_set1_pd(delta);
    DPSCO_CD_SUM_BODY(DPSCO_LOAD_AXPY_F32, DPSCO_DERIV_SQUARED, DPSCO_X_DENSE_F32,
                      DPSCO_SQ_DENSE, 0, DPSCO_AXPY_TAIL)
}

DPSCO_AVX2 static double dpsco_cd_sq_dense_fused_avx2_f32(double *z, double delta,
                                                          const float *xprev, const float *vals,
                                                          const double *y, Py_ssize_t m,
                                                          double c, Py_ssize_t *n_clipped,
                                                          unsigned char *try_fast, int count)
{
    if (count && *try_fast) {
        dpsco_cd_axpy_avx2_f32(z, delta, xprev, m);
        return dpsco_cd_sq_dense_avx2_f32(vals, z, y, m, c, n_clipped, try_fast, count);
    }
    return dpsco_cd_sq_fused_body_f32(z, delta, xprev, vals, y, m, c, n_clipped, try_fast,
                                      count);
}

/* logistic: no unclipped first try (the exp dominates, and |l'| <= 1 makes clips bind often) */
DPSCO_AVX2 static double dpsco_cd_log_dense_avx2(const double *vals, const double *z,
                                                 const double *y, Py_ssize_t m, double c,
                                                 Py_ssize_t *n_clipped, unsigned char *try_fast,
                                                int count)
DPSCO_CD_SUM_BODY(DPSCO_LOAD_DENSE, DPSCO_DERIV_LOGISTIC, DPSCO_X_DENSE, DPSCO_LOG_DENSE, 0, )

DPSCO_AVX2 static double dpsco_cd_log_dense_avx2_f32(const float *vals, const double *z,
                                                     const double *y, Py_ssize_t m, double c,
                                                     Py_ssize_t *n_clipped,
                                                     unsigned char *try_fast, int count)
DPSCO_CD_SUM_BODY(DPSCO_LOAD_DENSE, DPSCO_DERIV_LOGISTIC, DPSCO_X_DENSE_F32, DPSCO_LOG_DENSE, 0,
                  )

#else   /* no AVX2 bodies: never called (dpsco_cd_avx2 stays 0), defined so that _cd links */

static double dpsco_cd_sq_dense_avx2(const double *vals, const double *z, const double *y,
                                     Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                     unsigned char *try_fast, int count)
{
    (void) vals; (void) z; (void) y; (void) m; (void) c; (void) n_clipped; (void) try_fast;
    (void) count;
    return 0.0;
}
static double dpsco_cd_log_dense_avx2(const double *vals, const double *z, const double *y,
                                      Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                      unsigned char *try_fast, int count)
{ return dpsco_cd_sq_dense_avx2(vals, z, y, m, c, n_clipped, try_fast, count); }
static double dpsco_cd_sq_dense_fused_avx2(double *z, double delta, const double *xprev,
                                           const double *vals, const double *y, Py_ssize_t m,
                                           double c, Py_ssize_t *n_clipped,
                                           unsigned char *try_fast, int count)
{
    (void) z; (void) delta; (void) xprev;
    return dpsco_cd_sq_dense_avx2(vals, z, y, m, c, n_clipped, try_fast, count);
}
static void dpsco_cd_margins_avx2(const double *X, Py_ssize_t n, Py_ssize_t p,
                                  const double *coef, double *z)
{ dpsco_cd_margins_scalar(X, n, p, coef, z); }
static void dpsco_cd_axpy_avx2(double *z, double a, const double *x, Py_ssize_t n)
{ dpsco_cd_axpy_scalar(z, a, x, n); }
static double dpsco_cd_sq_dense_avx2_f32(const float *vals, const double *z, const double *y,
                                         Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                         unsigned char *try_fast, int count)
{
    (void) vals; (void) z; (void) y; (void) m; (void) c; (void) n_clipped; (void) try_fast;
    (void) count;
    return 0.0;
}
static double dpsco_cd_log_dense_avx2_f32(const float *vals, const double *z, const double *y,
                                          Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                          unsigned char *try_fast, int count)
{ return dpsco_cd_sq_dense_avx2_f32(vals, z, y, m, c, n_clipped, try_fast, count); }
static double dpsco_cd_sq_dense_fused_avx2_f32(double *z, double delta, const float *xprev,
                                               const float *vals, const double *y, Py_ssize_t m,
                                               double c, Py_ssize_t *n_clipped,
                                               unsigned char *try_fast, int count)
{
    (void) z; (void) delta; (void) xprev;
    return dpsco_cd_sq_dense_avx2_f32(vals, z, y, m, c, n_clipped, try_fast, count);
}
static void dpsco_cd_margins_avx2_f32(const float *X, Py_ssize_t n, Py_ssize_t p,
                                      const double *coef, double *z)
{ dpsco_cd_margins_scalar_f32(X, n, p, coef, z); }
static void dpsco_cd_axpy_avx2_f32(double *z, double a, const float *x, Py_ssize_t n)
{ dpsco_cd_axpy_scalar_f32(z, a, x, n); }

#endif

#endif
