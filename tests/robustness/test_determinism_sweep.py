"""Every parallel kernel, over n_threads in {1, 2, 4}: bitwise-equal results.

``KERNEL_CALLS`` holds one entry per (kernel entry point, variant): a function of
``n_threads`` returning the kernel's outputs. A compiled module whose source uses ``prange``
or an OpenMP ``parallel`` block must appear here (``test_every_parallel_kernel_is_swept``):
adding a parallel kernel means adding its entry.
"""

import pathlib
import re

import numpy as np
import pytest

from dpsco_core._kernels import _noise, _noisy_max
from dpsco_core._random import block_bit_generators

SRC = pathlib.Path(__file__).resolve().parents[2] / "src_cython"
SIZE = 3 * _noise.NOISE_BLOCK_SIZE + 123   # several blocks, a ragged last one


def _gens(seed, n, block):
    return block_bit_generators(np.random.SeedSequence(seed), -(-n // block))


def _add_noise(kind):
    def call(n_threads):
        x = np.linspace(-5.0, 5.0, SIZE)
        out = np.empty_like(x)
        _noise.add_noise(x, 0.7, kind, _gens(11, SIZE, _noise.NOISE_BLOCK_SIZE), out, n_threads)
        return out
    return call


def _noisy_max_call(kind):
    def call(n_threads):
        scores = np.random.default_rng(3).standard_normal(SIZE)
        return np.array(_noisy_max.report_noisy_max(
            scores, 0.3, kind, _gens(12, SIZE, _noisy_max.NOISY_MAX_BLOCK_SIZE), n_threads))
    return call


KERNEL_CALLS = {
    "_noise.add_noise[gaussian]": _add_noise(_noise.GAUSSIAN),
    "_noise.add_noise[laplace]": _add_noise(_noise.LAPLACE),
    "_noisy_max.report_noisy_max[laplace]": _noisy_max_call(_noisy_max.LAPLACE),
    "_noisy_max.report_noisy_max[gumbel]": _noisy_max_call(_noisy_max.GUMBEL),
    "_noisy_max.report_noisy_max[exponential]": _noisy_max_call(_noisy_max.EXPONENTIAL),
}

# Secure (exact) samplers: built with every other kernel, so a failed import fails the sweep
# (it used to drop these two entries silently).
from dpsco_core._kernels import _discrete  # noqa: E402


def _discrete_call(which):
    def call(n_threads):
        x = np.arange(SIZE, dtype=np.int64) - SIZE // 2
        out = np.empty(SIZE, dtype=np.int64)
        gens = _gens(13, SIZE, _discrete.DISCRETE_BLOCK_SIZE)
        if which == "laplace":
            status = _discrete.add_discrete_laplace(x, 12345, gens, out, n_threads)
        else:
            status = _discrete.add_discrete_gaussian(x, 1 << 29, (1 << 29) + 7, gens, out,
                                                     n_threads)
        return np.append(out, status)
    return call


KERNEL_CALLS["_discrete.add_discrete_laplace"] = _discrete_call("laplace")
KERNEL_CALLS["_discrete.add_discrete_gaussian"] = _discrete_call("gaussian")


def _cd_grid_call(n_threads):
    from dpsco_core._kernels import _cd
    rng = np.random.default_rng(5)
    X = np.asfortranarray(rng.standard_normal((120, 6)))
    y = rng.standard_normal(120)
    R = 9
    steps = np.full((R, 6), 0.3) * np.arange(1, R + 1)[:, None] / R
    clips = np.full((R, 6), 0.8)
    noise = np.full((R, 6), 0.01)
    coef = np.zeros((R, 6))
    counts = np.zeros(R, dtype=np.int64)
    gens = [np.random.PCG64DXSM(40 + r) for r in range(R)]
    _cd.cd_grid_dense(X, y, 0, 1.0, 1, 0.05, 0.0, steps, clips, noise, coef, 2, 25, True, False,
                      gens, counts, n_threads)
    return np.append(coef.ravel(), counts)


def _loss_call(n_threads):
    from dpsco_core._kernels import _loss
    n = 300_000                                # above the wrappers' serial threshold
    z = np.linspace(-30.0, 30.0, n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    out = np.empty(n)
    _loss.loss_derivs(z, y, 2, 0.0, out, n_threads)
    return out


def _prox_call(n_threads):
    from dpsco_core._kernels import _prox
    d = _prox.PARALLEL_THRESHOLD + 3 * _prox.CHUNK_SIZE + 7
    u = np.random.default_rng(6).standard_normal(d)
    out = np.empty(d)
    _prox.prox_vector(u, np.array([0.3]), _prox.L1, 0.5, 0.0, out, n_threads)
    norm_out = np.empty(d)
    _prox.project_l2_ball(u, np.empty(0), 10.0, norm_out, n_threads)
    return np.concatenate([out, norm_out])


def _frank_wolfe_call(n_threads):
    from dpsco_core._kernels import _frank_wolfe
    rng = np.random.default_rng(8)
    n, d = 300, 3 * _frank_wolfe.FW_BLOCK_SIZE // 2 + 17   # several blocks of 2d candidates
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    rows = rng.permutation(n)[:64].astype(np.intp)
    clip = np.full(n, np.inf)
    w, w_prev, v_prev = rng.standard_normal((3, d))
    gens = _gens(14, 2 * d, _frank_wolfe.FW_BLOCK_SIZE)
    resid, v = np.empty(rows.size), np.empty(d)
    sel = _frank_wolfe.vr_gradient_rnm(X, y, rows, 1, 0.0, clip, w, 0.7, w_prev, 1.3, v_prev,
                                       True, _frank_wolfe.DOMAIN_L1_BALL, 1.5, 0.01,
                                       _noisy_max.LAPLACE, gens, n_threads, resid, v)
    return np.concatenate([np.asarray(sel, dtype=float), resid, v])


def _frank_wolfe_signs_call(n_threads):
    from dpsco_core._kernels import _frank_wolfe
    rng = np.random.default_rng(15)
    d = 3 * _frank_wolfe.FW_BLOCK_SIZE // 2 + 17
    signs = rng.integers(0, 2 ** 64, size=(64, -(-d // 64)), dtype=np.uint64)
    y = rng.standard_normal(64)
    w, w_prev, v_prev = rng.standard_normal((3, d))
    w[rng.random(d) < 0.99] = 0.0          # the support path for w, the dense one for w_prev
    gens = _gens(16, 2 * d, _frank_wolfe.FW_BLOCK_SIZE)
    resid, v = np.empty(64), np.empty(d)
    sel = _frank_wolfe.vr_gradient_rnm_signs(signs, d, y, 1, 0.0, 0.5, w, 0.7, w_prev, 1.3,
                                             v_prev, True, _frank_wolfe.DOMAIN_L1_BALL, 1.5,
                                             0.01, _noisy_max.LAPLACE, gens, n_threads, resid,
                                             v)
    return np.concatenate([np.asarray(sel, dtype=float), resid, v])


def _batch_call(n_threads):
    from dpsco_core._kernels import _batch
    rng = np.random.default_rng(9)
    n, p = 6000, 40                              # a batch above the parallel threshold
    X = rng.standard_normal((n, p))
    y = rng.standard_normal(n)
    norms = np.linalg.norm(X, axis=1)
    rows = np.arange(0, n, 2, dtype=np.int64)
    out = np.empty(p)
    k = _batch.batch_grad_dense(X, y, rows, rng.standard_normal(p) * 0.1, norms, 0, 1.0, 0.5,
                                out, n_threads)
    coef = np.zeros(p)
    counts = _batch.sgd_dense(X, y, norms, 0, 1.0, 1, 0.01, 0.0, coef, 5, _batch.POISSON, 0.5,
                              0, 0.01, 1.0, 0.5, 3000.0, np.random.PCG64DXSM(1),
                              np.random.PCG64DXSM(2), n_threads)
    return np.concatenate([out, [k], coef, np.asarray(counts, dtype=float)])


def _batch_diff_call(n_threads):
    from dpsco_core._kernels import _batch
    rng = np.random.default_rng(10)
    n, p = 6000, 40
    X = rng.standard_normal((n, p))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    norms = np.linalg.norm(X, axis=1)
    rows = rng.permutation(n).astype(np.int64)
    coef, prev = rng.standard_normal((2, p)) * 0.2
    out = np.empty(p)
    k = _batch.batch_diff_dense(X, y, rows, coef, prev, norms, 2, 0.0, 7.0, 6.0, 0.5, out,
                                n_threads)
    return np.append(out, k)


def _tree_call(variance_reduced):
    def call(n_threads):
        from dpsco_core.tree import TreeAggregation
        from dpsco_core._kernels import _tree
        p = _tree.PARALLEL_THRESHOLD + 5                   # parallel path, a ragged last block
        tree = TreeAggregation(p, 6, noise_scale=0.9, variance_reduced=variance_reduced,
                               random_state=15, n_threads=n_threads)
        x = np.linspace(-1.0, 1.0, p)
        return np.concatenate([tree.next(x) for _ in range(6)])
    return call


KERNEL_CALLS["_batch.batch_grad_dense+sgd_dense"] = _batch_call


def _mlmc_call(n_threads):
    from dpsco_core._kernels import _mlmc
    rng = np.random.default_rng(10)
    n, d, copies = 60, 7, 70                       # several blocks of 16 copies
    X = rng.standard_normal((n, d))
    y = np.sign(rng.standard_normal(n))
    c = 0.1 * rng.standard_normal(d)
    lin = 0.01 * rng.standard_normal(d)
    out = np.empty((copies, d))
    ks = np.empty(copies, dtype=np.int64)
    ng = np.empty(copies, dtype=np.int64)
    _mlmc.mlmc_glm_batch(X, y, X @ c, np.linalg.norm(X, axis=1), 2, 0.0, 1.5, lin, 1.3, 0,
                         np.zeros(d), np.zeros(d), np.inf, np.arange(5, dtype=np.int64), 0,
                         _gens(15, copies, 16), out, ks, ng, n_threads)
    return np.concatenate([out.ravel(), ks, ng])


KERNEL_CALLS["_mlmc.mlmc_glm_batch"] = _mlmc_call
KERNEL_CALLS["_batch.batch_diff_dense[logistic]"] = _batch_diff_call
KERNEL_CALLS["_tree.tree_step[plain]"] = _tree_call(False)
KERNEL_CALLS["_tree.tree_step[honaker]"] = _tree_call(True)


def _resque_call(n_threads):
    from dpsco_core._kernels import _resque
    rng = np.random.default_rng(16)
    m, n, d, rows = 6, 3 * _resque.SAMPLE_BLOCK + 41, 9, 25
    V = 0.3 * rng.standard_normal((m, d))
    G = rng.standard_normal((n, d))
    A = rng.standard_normal((rows, d))
    y = np.sign(rng.standard_normal(rows))
    idx = rng.integers(0, rows, n).astype(np.int64)
    empty = np.empty((0, d))
    zeta = _resque.draw_samples(_gens(17, n, _resque.SAMPLE_BLOCK), np.empty((n, d)), n_threads)
    lw = _resque.resque_log_weights(V, zeta, np.empty((n, m)), n_threads)
    dense = _resque.resque_batch(V, empty, G, _gens(17, n, _resque.SAMPLE_BLOCK),
                                 np.empty((m, d)), n_threads)
    coefs = _resque.glm_query_batch(A, y, idx, A[idx] @ (0.1 * V[0]), 0.2, empty,
                                    _gens(17, n, _resque.SAMPLE_BLOCK), 4, 0.0, np.empty(n),
                                    n_threads)
    glm = _resque.resque_glm_batch(V, zeta, coefs, idx, A, [], np.empty((m, d)), n_threads)
    return np.concatenate([zeta.ravel(), lw.ravel(), dense.ravel(), coefs, glm.ravel()])


KERNEL_CALLS["_resque.resque_batch+glm"] = _resque_call
KERNEL_CALLS["_cd.cd_grid_dense"] = _cd_grid_call
KERNEL_CALLS["_frank_wolfe.vr_gradient_rnm"] = _frank_wolfe_call
KERNEL_CALLS["_frank_wolfe.vr_gradient_rnm_signs"] = _frank_wolfe_signs_call
KERNEL_CALLS["_loss.loss_derivs[logistic]"] = _loss_call
KERNEL_CALLS["_prox.prox_vector+project_l2_ball"] = _prox_call


@pytest.mark.parametrize("name", KERNEL_CALLS)
def test_bitwise_equal_for_any_thread_count(name):
    call = KERNEL_CALLS[name]
    reference = call(1)
    for n_threads in (2, 4):
        out = call(n_threads)
        assert out.dtype == reference.dtype
        assert out.tobytes() == reference.tobytes(), f"{name}: n_threads={n_threads} differs"


@pytest.mark.skipif(not SRC.is_dir(), reason="source tree not available")
def test_every_parallel_kernel_is_swept():
    swept = {name.split(".")[0] for name in KERNEL_CALLS}
    parallel = {p.stem for p in SRC.glob("*.pyx")
                if re.search(r"\b(prange|parallel)\s*\(", p.read_text())}
    missing = sorted(parallel - swept)
    assert not missing, f"parallel kernels missing from KERNEL_CALLS: {missing}"
