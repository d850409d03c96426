/* numpy's SeedSequence and PCG64DXSM in C, bit for bit (issue 18: seeding 625 block generators
 * in Python was 35% of a 10,000-copy MLMC call).
 *
 * What it reproduces (numpy/random/bit_generator.pyx and src/pcg64/pcg64.{h,c}, numpy >= 1.19):
 *   - SeedSequence(entropy, spawn_key, pool_size).pool: the entropy words (entropy then spawn
 *     key, each coerced to little-endian uint32 words by the caller; the entropy padded with
 *     zeros to pool_size when a spawn key is present) hashed into the pool by mix_entropy;
 *   - generate_state(4, np.uint64): 8 uint32 words from the pool, read as 4 little-endian
 *     uint64;
 *   - PCG64DXSM(seed_seq): pcg_setseq_128_srandom_r(state = val[0:2], seq = val[2:4]) with the
 *     128-bit default multiplier, then the DXSM output on the cheap-multiplier step;
 *     next_uint32 halves a 64-bit draw (low half first) as numpy's buffered generator does.
 * tests/kernels/test_seedseq.py compares pools, states and streams with numpy's.
 *
 * Needs unsigned __int128 (GCC and Clang on 64-bit targets).
 */
#ifndef DPSCO_SEEDSEQ_H
#define DPSCO_SEEDSEQ_H

#include <stddef.h>
#include <stdint.h>

#define DPSCO_SS_INIT_A 0x43b0d7e5U
#define DPSCO_SS_MULT_A 0x931e8875U
#define DPSCO_SS_INIT_B 0x8b51f9ddU
#define DPSCO_SS_MULT_B 0x58f38dedU
#define DPSCO_SS_MIX_MULT_L 0xca01f9ddU
#define DPSCO_SS_MIX_MULT_R 0x4973f715U
#define DPSCO_SS_XSHIFT 16

static inline uint32_t dpsco_ss_hashmix(uint32_t value, uint32_t *hash_const)
{
    value ^= *hash_const;
    *hash_const *= DPSCO_SS_MULT_A;
    value *= *hash_const;
    value ^= value >> DPSCO_SS_XSHIFT;
    return value;
}

static inline uint32_t dpsco_ss_mix(uint32_t x, uint32_t y)
{
    uint32_t result = DPSCO_SS_MIX_MULT_L * x - DPSCO_SS_MIX_MULT_R * y;
    result ^= result >> DPSCO_SS_XSHIFT;
    return result;
}

/* SeedSequence.mix_entropy: pool[0..pool_size-1] from entropy[0..n-1]. */
static inline void dpsco_ss_mix_entropy(uint32_t *pool, size_t pool_size,
                                        const uint32_t *entropy, size_t n)
{
    uint32_t hash_const = DPSCO_SS_INIT_A;
    size_t i, i_src, i_dst;
    for (i = 0; i < pool_size; i++)
        pool[i] = dpsco_ss_hashmix(i < n ? entropy[i] : 0U, &hash_const);
    for (i_src = 0; i_src < pool_size; i_src++)
        for (i_dst = 0; i_dst < pool_size; i_dst++)
            if (i_src != i_dst)
                pool[i_dst] = dpsco_ss_mix(pool[i_dst], dpsco_ss_hashmix(pool[i_src], &hash_const));
    for (i_src = pool_size; i_src < n; i_src++)
        for (i_dst = 0; i_dst < pool_size; i_dst++)
            pool[i_dst] = dpsco_ss_mix(pool[i_dst], dpsco_ss_hashmix(entropy[i_src], &hash_const));
}

/* SeedSequence.generate_state(n_words, np.uint32). */
static inline void dpsco_ss_generate_state(const uint32_t *pool, size_t pool_size,
                                           uint32_t *out, size_t n_words)
{
    uint32_t hash_const = DPSCO_SS_INIT_B, v;
    size_t i;
    for (i = 0; i < n_words; i++) {
        v = pool[i % pool_size];
        v ^= hash_const;
        hash_const *= DPSCO_SS_MULT_B;
        v *= hash_const;
        v ^= v >> DPSCO_SS_XSHIFT;
        out[i] = v;
    }
}

typedef unsigned __int128 dpsco_u128;

typedef struct {
    dpsco_u128 state;
    dpsco_u128 inc;
    int has_uint32;
    uint32_t uinteger;
} dpsco_pcg64dxsm_t;

#define DPSCO_PCG_DEFAULT_MULT \
    (((dpsco_u128)2549297995355413924ULL << 64) | (dpsco_u128)4865540595714422341ULL)
#define DPSCO_PCG_CHEAP_MULT 0xda942042e4dd58b5ULL

/* PCG64DXSM(SeedSequence(...)): val = generate_state(4, uint64); pcg64_set_seed(val, val + 2). */
static inline void dpsco_pcg64dxsm_seed(dpsco_pcg64dxsm_t *rng, const uint32_t *pool,
                                        size_t pool_size)
{
    uint32_t w[8];
    uint64_t val[4];
    int k;
    dpsco_u128 initstate, initseq;
    dpsco_ss_generate_state(pool, pool_size, w, 8);
    for (k = 0; k < 4; k++)
        val[k] = (uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32);
    initstate = ((dpsco_u128)val[0] << 64) | val[1];
    initseq = ((dpsco_u128)val[2] << 64) | val[3];
    rng->state = 0;
    rng->inc = (initseq << 1) | 1U;
    rng->state = rng->state * DPSCO_PCG_DEFAULT_MULT + rng->inc;
    rng->state += initstate;
    rng->state = rng->state * DPSCO_PCG_DEFAULT_MULT + rng->inc;
    rng->has_uint32 = 0;
    rng->uinteger = 0;
}

static inline uint64_t dpsco_pcg64dxsm_next64(dpsco_pcg64dxsm_t *rng)
{
    uint64_t hi = (uint64_t)(rng->state >> 64);
    uint64_t lo = (uint64_t)rng->state;
    lo |= 1;
    hi ^= hi >> 32;
    hi *= DPSCO_PCG_CHEAP_MULT;
    hi ^= hi >> 48;
    hi *= lo;
    rng->state = rng->state * (dpsco_u128)DPSCO_PCG_CHEAP_MULT + rng->inc;
    return hi;
}

/* bitgen_t callbacks (numpy's pcg64_cm_uint64 / _uint32 / _double). */
static uint64_t dpsco_pcg64dxsm_uint64(void *st)
{
    return dpsco_pcg64dxsm_next64((dpsco_pcg64dxsm_t *)st);
}

static uint32_t dpsco_pcg64dxsm_uint32(void *st)
{
    dpsco_pcg64dxsm_t *rng = (dpsco_pcg64dxsm_t *)st;
    uint64_t next;
    if (rng->has_uint32) {
        rng->has_uint32 = 0;
        return rng->uinteger;
    }
    next = dpsco_pcg64dxsm_next64(rng);
    rng->has_uint32 = 1;
    rng->uinteger = (uint32_t)(next >> 32);
    return (uint32_t)(next & 0xffffffffU);
}

static double dpsco_pcg64dxsm_double(void *st)
{
    return (double)(dpsco_pcg64dxsm_next64((dpsco_pcg64dxsm_t *)st) >> 11)
        * (1.0 / 9007199254740992.0);
}

static uint64_t dpsco_pcg64dxsm_raw(void *st)
{
    return dpsco_pcg64dxsm_next64((dpsco_pcg64dxsm_t *)st);
}

#endif
