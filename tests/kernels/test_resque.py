"""The ReSQue kernel against its NumPy twin, the weight identities of note 000 section 12, and
stored vs regenerated samples."""

import math

import numpy as np
import pytest

from dpsco_core import resque
from dpsco_core._kernels import _resque as kernel
from dpsco_core._random import block_bit_generators
from dpsco_core.reference import resque as twin

LIBM_EXP = np.vectorize(math.exp, otypes=[float])


@pytest.fixture
def libm_twin(monkeypatch):
    """The twin with the C library's exp: then every output must match bitwise."""
    monkeypatch.setattr(twin, "_exp", LIBM_EXP)
    return twin


def _gens(seed, n):
    return block_bit_generators(np.random.SeedSequence(seed), -(-n // kernel.SAMPLE_BLOCK))


def _data(m=5, n=2 * 512 + 77, d=7, p=7, seed=0):
    rs = np.random.default_rng(seed)
    V = 0.3 * rs.standard_normal((m, d))
    Z = rs.standard_normal((n, d))
    G = rs.standard_normal((n, p))
    for a in (V, Z, G):
        a.setflags(write=False)
    return V, Z, G


def test_block_constant_matches_python():
    assert kernel.SAMPLE_BLOCK == twin.SAMPLE_BLOCK == resque.SAMPLE_BLOCK


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_log_weights_bitwise(n_threads):
    V, Z, _ = _data()
    out_k = kernel.resque_log_weights(V, Z, np.empty((Z.shape[0], 5)), n_threads)
    out_t = twin.resque_log_weights(V, Z, np.empty((Z.shape[0], 5)), 1)
    assert out_k.tobytes() == out_t.tobytes()


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_batch_matches_twin(libm_twin, n_threads):
    V, Z, G = _data(p=3)
    out_k = kernel.resque_batch(V, Z, G, [], np.empty((5, 3)), n_threads)
    out_t = libm_twin.resque_batch(V, Z, G, [], np.empty((5, 3)), 1)
    assert out_k.tobytes() == out_t.tobytes()
    # the plain NumPy twin (SIMD exp) agrees to rounding
    np.testing.assert_allclose(twin.resque_batch(V, Z, G, [], np.empty((5, 3)), 1), out_k,
                               rtol=1e-13, atol=1e-15)


def test_stored_and_regenerated_samples_identical(libm_twin):
    V, _, G = _data()
    n, d = G.shape[0], V.shape[1]
    Z = kernel.draw_samples(_gens(4, n), np.empty((n, d)), 2)
    assert Z.tobytes() == twin.draw_samples(_gens(4, n), np.empty((n, d)), 1).tobytes()
    stored = kernel.resque_batch(V, Z, G, [], np.empty((5, d)), 1)
    for n_threads in (1, 2, 4):
        regen = kernel.resque_batch(V, np.empty((0, d)), G, _gens(4, n), np.empty((5, d)),
                                    n_threads)
        assert regen.tobytes() == stored.tobytes()
    regen_t = libm_twin.resque_batch(V, np.empty((0, d)), G, _gens(4, n), np.empty((5, d)), 1)
    assert regen_t.tobytes() == stored.tobytes()


def _glm(n_rows=40, d=6, N=1500, seed=1):
    rs = np.random.default_rng(seed)
    A = rs.standard_normal((n_rows, d))
    y = np.sign(rs.standard_normal(n_rows))
    idx = rs.integers(0, n_rows, N).astype(np.int64)
    margins = A[idx] @ (0.2 * rs.standard_normal(d))
    return A, y, idx, margins


@pytest.mark.parametrize("loss_kind", [0, 4, 5])
@pytest.mark.parametrize("regen", [False, True])
def test_glm_path_matches_twin_and_dense(libm_twin, loss_kind, regen):
    A, y, idx, margins = _glm()
    N, d = idx.shape[0], A.shape[1]
    Z = kernel.draw_samples(_gens(9, N), np.empty((N, d)), 1)
    zeta = np.empty((0, d)) if regen else Z
    gens = _gens(9, N) if regen else []
    c_k = kernel.glm_query_batch(A, y, idx, margins, 0.3, zeta, gens, loss_kind, 0.0,
                                 np.empty(N), 2)
    c_t = libm_twin.glm_query_batch(A, y, idx, margins, 0.3, zeta, _gens(9, N) if regen else [],
                                    loss_kind, 0.0, np.empty(N), 1)
    assert c_k.tobytes() == c_t.tobytes()
    V = 0.4 * np.random.default_rng(2).standard_normal((3, d))
    outs = [kernel.resque_glm_batch(V, zeta, c_k, idx, A, _gens(9, N) if regen else [],
                                    np.empty((3, d)), t) for t in (1, 2, 4)]
    assert all(o.tobytes() == outs[0].tobytes() for o in outs)
    out_t = libm_twin.resque_glm_batch(V, zeta, c_k, idx, A, _gens(9, N) if regen else [],
                                       np.empty((3, d)), 1)
    assert out_t.tobytes() == outs[0].tobytes()
    # same as the dense path with G_i = c_i a_{idx_i}
    dense = kernel.resque_batch(V, Z, c_k[:, None] * A[idx], [], np.empty((3, d)), 1)
    np.testing.assert_allclose(outs[0], dense, rtol=1e-12, atol=1e-14)


def test_kernel_rejects_bad_shapes():
    V, Z, G = _data()
    with pytest.raises(ValueError):
        kernel.resque_batch(V, Z[:-1], G, [], np.empty((5, 7)), 1)
    with pytest.raises(ValueError):
        kernel.resque_batch(V, Z, G, [], np.empty((4, 7)), 1)
    A, y, idx, margins = _glm()
    bad = idx.copy()
    bad[3] = 40
    with pytest.raises(ValueError, match="out of range"):
        kernel.glm_query_batch(A, y, bad, margins, 0.3, np.empty((0, 6)),
                               _gens(1, idx.size), 0, 0.0, np.empty(idx.size), 1)


# ---------------------------------------------------------------- weight identities (note 12)

@pytest.mark.statistical
def test_weight_identities_monte_carlo():
    """E w = 1, E[w zeta] = v/rho, E w^2 = exp(|v|^2/rho^2), E w(v) w(v') = exp(<v,v'>/rho^2)."""
    d, N, rho = 10, 200_000, 0.5
    rs = np.random.default_rng(0)
    v = rs.standard_normal(d)
    v *= 0.7 * rho / np.linalg.norm(v)
    v2 = rs.standard_normal(d)
    v2 *= 0.5 * rho / np.linalg.norm(v2)
    zeta = resque.draw_resque_samples(N, d, random_state=1)
    lw = resque.resque_log_weights(np.stack([v, v2]), np.zeros(d), rho, zeta)
    w, w2 = np.exp(lw[:, 0]), np.exp(lw[:, 1])

    def check(samples, expected):
        se = samples.std(axis=0) / math.sqrt(N)
        assert np.all(np.abs(samples.mean(axis=0) - expected) <= 5 * se + 1e-12)

    check(w, 1.0)
    check(w[:, None] * zeta, v / rho)
    check(w ** 2, math.exp(v @ v / rho ** 2))
    check(w * w2, math.exp(v @ v2 / rho ** 2))


def test_weight_is_one_bitwise_at_the_centre():
    zeta = resque.draw_resque_samples(1000, 5, random_state=2)
    c = np.linspace(-1, 1, 5)
    lw = resque.resque_log_weights(c, c, 0.1, zeta)
    assert np.all(np.exp(lw) == 1.0)
    G = np.random.default_rng(0).standard_normal((1000, 5))
    est = resque.resque_estimate(c, c, 0.1, zeta, G)
    ref = np.zeros(5)
    for b in range(0, 1000, 512):
        part = np.zeros(5)
        for row in G[b:b + 512]:
            part = part + 1.0 * row
        ref = ref + part
    assert est.tobytes() == (ref / 1000).tobytes()


@pytest.mark.statistical
def test_second_moment_linear():
    """||g|| = L a.s. (linear f): E||ReSQue||^2 = L^2 exp(|v|^2/rho^2) (note 12.4)."""
    d, N, rho, L = 8, 200_000, 0.2, 3.0
    c = np.full(d, L / math.sqrt(d))
    v = np.full(d, 0.8 * rho / math.sqrt(d))
    zeta = resque.draw_resque_samples(N, d, random_state=5)
    w = np.exp(resque.resque_log_weights(v, np.zeros(d), rho, zeta))
    sq = (w * L) ** 2
    assert abs(sq.mean() - L ** 2 * math.exp(0.64)) <= 5 * sq.std() / math.sqrt(N)


def test_public_api_validation_and_warning():
    zeta = np.zeros((10, 3))
    with pytest.raises(ValueError, match="smoothing_radius"):
        resque.resque_log_weights(np.zeros(3), np.zeros(3), 0.0, zeta)
    with pytest.raises(ValueError, match="columns"):
        resque.resque_log_weights(np.zeros(3), np.zeros(3), 1.0, np.zeros((10, 4)))
    with pytest.raises(ValueError, match="gradients"):
        resque.resque_estimate(np.zeros(3), np.zeros(3), 1.0, zeta, np.zeros((9, 3)))
    with pytest.warns(resque.ReSQueWarning):
        resque.resque_log_weights(np.full(3, 2.0), np.zeros(3), 1.0, zeta)


def test_batch_objects_regenerate_identically():
    d, N = 4, 1300
    center = np.array([0.1, -0.2, 0.3, 0.0])

    def grad_batch(Z, random_state):
        return np.sign(Z)

    stored = resque.ReSQueBatch.query(grad_batch, center, 0.2, N, random_state=3)
    regen = resque.ReSQueBatch.query(grad_batch, center, 0.2, N, store_samples=False,
                                     random_state=3)
    x = center + 0.05
    assert stored.estimate(x).tobytes() == regen.estimate(x).tobytes()
    rs = np.random.default_rng(0)
    A, y = rs.standard_normal((30, d)), rs.standard_normal(30)
    g1 = resque.GLMReSQueBatch(A, y, "absolute", center, 0.2, N, random_state=4)
    g2 = resque.GLMReSQueBatch(A, y, "absolute", center, 0.2, N, store_samples=False,
                               random_state=4)
    X = center + 0.04 * rs.standard_normal((3, d))
    assert g1.estimate(X).tobytes() == g2.estimate(X).tobytes()


@pytest.mark.statistical
def test_weight_second_order_and_difference_moments():
    """E[w xi xi^T] = rho^2 I + v v^T, E w^3 = exp(3|v|^2/rho^2) (E w^p = exp(p(p-1)|v|^2/
    (2 rho^2))), and Lemma 2 at p = 2: E|w(v) - w(v')|^2 equals e^{|v|^2/rho^2} +
    e^{|v'|^2/rho^2} - 2 e^{<v,v'>/rho^2} (note 1.4) and is <= (48|v - v'|/rho)^2, E w^2 <= 2
    for |v|, |v'| <= rho/2; all within 5 standard errors."""
    d, N, rho = 6, 200_000, 0.4
    rs = np.random.default_rng(3)
    v, v2 = rs.standard_normal(d), rs.standard_normal(d)
    v *= 0.45 * rho / np.linalg.norm(v)
    v2 *= 0.3 * rho / np.linalg.norm(v2)
    zeta = resque.draw_resque_samples(N, d, random_state=7)
    lw = resque.resque_log_weights(np.stack([v, v2]), np.zeros(d), rho, zeta)
    w = np.exp(lw[:, 0])
    xi = rho * zeta

    def check(samples, expected):
        se = samples.std(axis=0) / math.sqrt(N)
        assert np.all(np.abs(samples.mean(axis=0) - expected) <= 5 * se + 1e-12)

    check(w[:, None, None] * xi[:, :, None] * xi[:, None, :], rho ** 2 * np.eye(d)
          + np.outer(v, v))
    check(w ** 3, math.exp(3 * (v @ v) / rho ** 2))
    # w(v) - w(v') = w(v') expm1(lw - lw') (note 10, K1 pitfall (e))
    diff2 = (np.exp(lw[:, 1]) * np.expm1(lw[:, 0] - lw[:, 1])) ** 2
    exact = (math.exp(v @ v / rho ** 2) + math.exp(v2 @ v2 / rho ** 2)
             - 2 * math.exp(v @ v2 / rho ** 2))
    check(diff2, exact)
    assert exact <= (24 * 2 * np.linalg.norm(v - v2) / rho) ** 2
    assert math.exp(v @ v / rho ** 2) <= 2.0


def test_single_sample_at_the_centre_is_the_oracle_answer():
    """v = 0: ReSQue = g(xbar + xi) bitwise (randomized smoothing), stored or regenerated."""
    center = np.array([0.5, -1.0, 2.0])

    def grad_batch(Z, random_state):
        return np.cos(Z) + np.random.default_rng(random_state).standard_normal(Z.shape)

    batch = resque.ReSQueBatch.query(grad_batch, center, 0.3, 700, random_state=1)
    for i in (0, 511, 512, 699):
        assert batch.estimate(center, rows=slice(i, i + 1)).tobytes() == \
            batch.gradients[i].tobytes()
    rs = np.random.default_rng(0)
    A, y = rs.standard_normal((9, 3)), rs.standard_normal(9)
    for store in (True, False):
        glm = resque.GLMReSQueBatch(A, y, "absolute", center, 0.3, 1, store_samples=store,
                                    random_state=2)
        assert glm.estimate(center).tobytes() == (glm.coefs[0] * A[glm.idx[0]]).tobytes()


def test_bad_input_is_rejected():
    d = 3
    zeta, G = np.zeros((10, d)), np.zeros((10, 2))
    c = np.zeros(d)
    for rho in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="smoothing_radius"):
            resque.resque_estimate(c, c, rho, zeta, G)
        with pytest.raises(ValueError, match="smoothing_radius"):
            resque.ReSQueBatch(c, rho, G, zeta)
        with pytest.raises(ValueError, match="smoothing_radius"):
            resque.ReSQueBatch.query(lambda Z, s: Z, c, rho, 10)
        with pytest.raises(ValueError, match="smoothing_radius"):
            resque.GLMReSQueBatch(np.eye(3), np.zeros(3), "absolute", c, rho, 10)
    with pytest.raises(TypeError, match="smoothing_radius"):
        resque.resque_log_weights(c, c, "1", zeta)
    with pytest.raises(ValueError, match="x must have 3 columns"):
        resque.resque_log_weights(np.zeros(4), c, 1.0, zeta)
    with pytest.raises(ValueError, match="x must be 2-dimensional"):
        resque.resque_log_weights(np.zeros((2, 2, 3)), c, 1.0, zeta)
    with pytest.raises(ValueError, match="zeta must be 2-dimensional"):
        resque.resque_log_weights(c, c, 1.0, np.zeros(3))
    with pytest.raises(ValueError, match="zeta must contain only finite"):
        resque.resque_log_weights(c, c, 1.0, np.full((4, 3), np.nan))
    with pytest.raises(TypeError, match="zeta"):
        resque.resque_log_weights(c, c, 1.0, np.zeros((4, 3), dtype=complex))
    with pytest.raises(ValueError, match="one row per sample"):
        resque.resque_estimate(c, c, 1.0, zeta, G[:7])
    with pytest.raises(ValueError, match="same rows"):
        resque.ReSQueBatch(c, 1.0, G[:7], zeta)
    with pytest.raises(ValueError, match="zeta must have 3 columns"):
        resque.ReSQueBatch(c, 1.0, G, np.zeros((10, 4)))
    with pytest.raises(TypeError, match="SeedSequence"):
        resque.ReSQueBatch(c, 1.0, G, None, seed=3)
    regen = resque.ReSQueBatch(c, 1.0, G, None, seed=np.random.SeedSequence(0))
    with pytest.raises(ValueError, match="rows needs stored samples"):
        regen.estimate(c, rows=slice(0, 2))
    with pytest.raises(ValueError, match="x must have 3 columns"):
        regen.estimate(np.zeros(2))
    with pytest.raises(ValueError, match="n_samples"):
        resque.draw_resque_samples(0, 3)
    A = np.eye(3)
    with pytest.raises(ValueError, match="one entry per row"):
        resque.GLMReSQueBatch(A, np.zeros(2), "absolute", c, 1.0, 5)
    with pytest.raises(ValueError, match="center must have length 3"):
        resque.GLMReSQueBatch(A, np.zeros(3), "absolute", np.zeros(2), 1.0, 5)
    with pytest.raises(ValueError, match="n_samples"):
        resque.GLMReSQueBatch(A, np.zeros(3), "absolute", c, 1.0, 0)


def test_far_query_warns_at_the_callers_line():
    """r > rho: ReSQueWarning, attributed to the user's call (not to dpsco_core)."""
    d = 3
    c, far = np.zeros(d), np.full(d, 1.0)           # |v|/rho = sqrt(3) > 1
    zeta = resque.draw_resque_samples(20, d, random_state=0)
    G = np.ones((20, d))
    batch = resque.ReSQueBatch(c, 1.0, G, zeta)
    glm = resque.GLMReSQueBatch(np.eye(d), np.zeros(d), "absolute", c, 1.0, 20, random_state=0)
    calls = [lambda: resque.resque_log_weights(far, c, 1.0, zeta),
             lambda: resque.resque_estimate(far, c, 1.0, zeta, G),
             lambda: batch.estimate(far),
             lambda: glm.estimate(far)]
    for call in calls:
        with pytest.warns(resque.ReSQueWarning, match="more than one smoothing radius") as record:
            call()
        assert [r.filename for r in record] == [__file__]
    # inside the ball: silent
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resque.resque_estimate(np.full(d, 0.5), c, 1.0, zeta, G)


@pytest.mark.parametrize("m, n", [(1, 3), (4, 4), (8, 517), (3, 1030), (6, 2048)])
def test_register_tiles_match_twin(libm_twin, m, n):
    """Whole 4 x 4 micro-tiles, a query tail (m mod 4) and a sample tail (n mod 4 in a block):
    bitwise the twin's one-sample order, for 1 and 2 threads."""
    V, Z, G = _data(m=m, n=n, d=9, p=5, seed=m + n)
    lw_t = twin.resque_log_weights(V, Z, np.empty((n, m)), 1)
    out_t = libm_twin.resque_batch(V, Z, G, [], np.empty((m, 5)), 1)
    for n_threads in (1, 2):
        lw = kernel.resque_log_weights(V, Z, np.empty((n, m)), n_threads)
        assert lw.tobytes() == lw_t.tobytes()
        out = kernel.resque_batch(V, Z, G, [], np.empty((m, 5)), n_threads)
        assert out.tobytes() == out_t.tobytes()
