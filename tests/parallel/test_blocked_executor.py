"""The in-process row-blocked executor (issue 21): the reference the Dask executor matches
bitwise. Needs no Dask."""

import math
import warnings

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.exceptions import PrivacyLeakWarning
from dpsco_core.parallel import BlockedProblem, BlockExecutor
from dpsco_core.parallel import blocks


@pytest.fixture(autouse=True)
def _no_leak_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


def _data(n=3000, p=6, seed=0, classify=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) / math.sqrt(p)
    y = X @ np.linspace(-1, 1, p) + 0.1 * rng.standard_normal(n)
    return X, (np.where(y >= 0, 1.0, -1.0) if classify else y)


def test_sgd_same_bits_any_threads_and_close_to_fused_kernel():
    X, y = _data(classify=True)
    prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
    kw = dict(epsilon=1.0, delta=1e-6, passes=1, batch_size=200, random_state=3)
    one = dp.dp_sgd(prob, executor=BlockExecutor(block_rows=700, n_threads=1), **kw)
    two = dp.dp_sgd(prob, executor=BlockExecutor(block_rows=700, n_threads=2), **kw)
    assert np.array_equal(one.coef, two.coef)
    # shuffling: the same permutation and noise streams as the fused kernel; only the
    # summation order of the batch differs (per block, then block order)
    kw["sampling"] = "shuffle"
    fused = dp.dp_sgd(prob, **kw)
    blocked = dp.dp_sgd(prob, executor=BlockExecutor(block_rows=700), **kw)
    np.testing.assert_allclose(blocked.coef, fused.coef, rtol=0, atol=1e-12)
    assert blocked.privacy.epsilon == fused.privacy.epsilon


def test_poisson_blocks_mean_batch_size():
    # each row joins with probability q: the batch size is Binomial(n, q); 200 steps
    X, y = _data(n=2000)
    prob = dp.Problem(X, y, loss="squared")
    res = dp.dp_sgd(prob, epsilon=1.0, delta=1e-6, passes=20, sample_rate=0.1,
                    random_state=0, smoothness=1.0, executor=BlockExecutor(block_rows=300))
    steps, q, n = res.stats["steps"], 0.1, 2000
    se = math.sqrt(n * q * (1 - q) / steps)
    assert abs(res.stats["mean_batch_size"] - q * n) < 4 * se
    rows = blocks.poisson_rows(12345, 0, 0, 1000, 1.0)
    assert np.array_equal(rows, np.arange(1000))


def test_full_batch_dp_gd_uses_every_row_and_public_normaliser():
    X, y = _data(n=1000)
    prob = dp.Problem(X, y, loss="squared")
    res = dp.dp_sgd(prob, epsilon=1.0, delta=1e-6, passes=3, sample_rate=1.0,
                    neighboring_relation="add_or_remove_one", public_n=1200, smoothness=1.0,
                    random_state=0, executor=BlockExecutor(block_rows=256))
    assert res.stats["steps"] == 3 and res.stats["mean_batch_size"] == 1000
    assert res.stats["batch_size"] == 1200.0      # q * public_n, never the blocks' count


def test_dp_cd_and_srgd_close_to_fused_kernels():
    X, y = _data()
    prob = dp.Problem(X, y, loss="squared", penalty=dp.L1(1e-3))
    for average in (True, False):
        kw = dict(epsilon=1.0, delta=1e-6, passes=4, average=average, random_state=1)
        fused = dp.dp_cd(prob, **kw)
        blocked = dp.dp_cd(prob, executor=BlockExecutor(block_rows=700), **kw)
        np.testing.assert_allclose(blocked.coef, fused.coef, rtol=0, atol=1e-12)
        np.testing.assert_allclose(blocked.history.objective, fused.history.objective,
                                   rtol=1e-12)
        assert blocked.stats["clipped_fraction"] == fused.stats["clipped_fraction"]
    half = dp.Problem(X, y, loss="half_squared")
    kw = dict(epsilon=1.0, delta=1e-6, beta=1.0, radius=5.0, random_state=2)
    fused = dp.solvers.dp_srgd(half, **kw)
    blocked = dp.solvers.dp_srgd(half, executor=BlockExecutor(block_rows=700), **kw)
    np.testing.assert_allclose(blocked.coef, fused.coef, rtol=0, atol=1e-12)


def test_cd_margins_rebuilt_exactly_after_loss():
    # the margins of a block dropped mid-run are rebuilt from the log: the same bits
    X, y = _data(n=1500)
    prob = dp.Problem(X, y, loss="squared")
    kw = dict(epsilon=1.0, delta=1e-6, n_outer=2, n_inner=15, random_state=4, smoothness="exact")
    ref = dp.dp_cd(prob, executor=BlockExecutor(block_rows=400), **kw)

    class Forgetful(BlockExecutor):
        def _map(self, fn, handles, args):
            if fn is blocks.cd_column_sum and self.round_trips % 4 == 3:
                blocks._CD_STATE.clear()           # as if every worker had been replaced
            return super()._map(fn, handles, args)

    ex = Forgetful(block_rows=400)
    res = dp.dp_cd(prob, executor=ex, **kw)
    assert np.array_equal(res.coef, ref.coef)
    assert not blocks._CD_STATE                    # released at the end of the run


def test_blocked_problem_constants_and_errors(tmp_path):
    X, y = _data(n=1000)
    prob = dp.Problem(X, y, loss="squared")
    ex = BlockExecutor(block_rows=300)
    bp = ex.bind(prob)
    assert isinstance(bp, BlockedProblem) and ex.bind(prob) is bp
    assert list(bp.block_sizes) == [300, 300, 300, 100]
    fresh = ex.problem(X, y, loss="squared")
    w = np.linspace(0, 1, X.shape[1])
    assert math.isclose(fresh.objective(w), prob.objective(w), rel_tol=1e-12)
    assert math.isclose(fresh.smoothness(), prob.smoothness(), rel_tol=1e-10)
    np.testing.assert_allclose(fresh.coordinate_smoothness(), prob.coordinate_smoothness(),
                               rtol=1e-12)
    with pytest.raises(TypeError, match="never gathered"):
        fresh.X_c()
    with pytest.raises(TypeError, match="executor must be"):
        dp.dp_sgd(prob, epsilon=1.0, delta=1e-6, passes=1, batch_size=10, executor=object())
    with pytest.raises(ValueError, match="another executor"):
        BlockExecutor().bind(fresh)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    mm = ex.problem(str(tmp_path / "X.npy"), str(tmp_path / "y.npy"), loss="squared")
    assert list(mm.block_sizes) == [300, 300, 300, 100]
    kw = dict(epsilon=1.0, delta=1e-6, passes=1, batch_size=100, random_state=0,
              smoothness=1.0)
    assert np.array_equal(dp.dp_sgd(mm, **kw).coef, dp.dp_sgd(bp, **kw).coef)


def test_worker_entropy_is_one_way_and_reproducible():
    seq = np.random.SeedSequence(7)
    a, b = blocks.worker_entropy(seq), blocks.worker_entropy(np.random.SeedSequence(7))
    assert a == b and a != seq.entropy and a.bit_length() > 200


def test_blocks_never_receive_the_noise_stream():
    # everything sent to the blocks: iterates, batch specs, clips; never a bit generator, and
    # no number from which the client's seed (shared by the noise stream) can be read
    X, y = _data(n=1200)
    prob = dp.Problem(X, y, loss="squared")
    sent = []

    class Recording(BlockExecutor):
        def _map(self, fn, handles, args):
            sent.extend(args)
            return super()._map(fn, handles, args)

    seed = np.random.SeedSequence(2024)
    dp.dp_sgd(prob, epsilon=1.0, delta=1e-6, passes=1, sample_rate=0.2, smoothness=1.0,
              random_state=seed, executor=Recording(block_rows=500))

    def leaves(obj):
        if isinstance(obj, (tuple, list)):
            for item in obj:
                yield from leaves(item)
        else:
            yield obj
    values = list(leaves(sent))
    assert values and not any(isinstance(v, (np.random.BitGenerator, np.random.Generator,
                                             np.random.SeedSequence)) for v in values)
    assert seed.entropy not in [v for v in values if isinstance(v, int)]


def test_dp_cd_add_remove_divides_by_public_n():
    # the blocks' row counts are never the normaliser: under add/remove-one it is public_n
    X, y = _data(n=1000)
    prob = dp.Problem(X, y, loss="squared")
    kw = dict(epsilon=1.0, delta=1e-6, passes=2, neighboring_relation="add_or_remove_one",
              public_n=1500, smoothness=np.ones(X.shape[1]), random_state=0)
    fused = dp.dp_cd(prob, **kw)
    blocked = dp.dp_cd(prob, executor=BlockExecutor(block_rows=300), **kw)
    assert blocked.stats["normaliser"] == 1500
    np.testing.assert_allclose(blocked.coef, fused.coef, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="public_n"):
        dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=1, neighboring_relation="add_or_remove_one",
                 executor=BlockExecutor(block_rows=300))


def _sparse(n=3000, p=30, seed=1):
    import scipy.sparse as sp
    X = sp.random(n, p, density=0.1, random_state=seed, format="csr")
    w = np.random.default_rng(seed).standard_normal(p)
    return X, np.where(X @ w >= 0, 1.0, -1.0)


def test_sparse_csr_blocks_close_to_fused_sparse_kernels():
    # CSR row blocks through the CSR batch kernels: the fused sparse kernels' streams, only the
    # summation order differs (per block, then block order)
    import scipy.sparse as sp
    X, y = _sparse()
    prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
    ex = BlockExecutor(block_rows=700)
    bp = ex.bind(prob)
    assert all(sp.isspmatrix_csr(b.X) for b in bp.blocks)
    kw = dict(epsilon=1.0, delta=1e-6, passes=1, batch_size=200, random_state=3,
              sampling="shuffle")
    np.testing.assert_allclose(dp.dp_sgd(prob, executor=ex, **kw).coef,
                               dp.dp_sgd(prob, **kw).coef, rtol=0, atol=1e-12)
    # the same blocks given as a CSR matrix to BlockExecutor.problem: the same bits
    fresh = BlockExecutor(block_rows=700).problem(sp.csc_matrix(X), y, loss="logistic",
                                                  penalty=dp.L2(1e-3))
    assert np.array_equal(dp.dp_sgd(fresh, **kw).coef, dp.dp_sgd(prob, executor=ex, **kw).coef)
    assert math.isclose(fresh.smoothness(), prob.smoothness(), rel_tol=1e-10)
    # DP-CD: a sparse column's nonzero rows only
    sq = dp.Problem(X, X @ np.ones(X.shape[1]), loss="squared", penalty=dp.L1(1e-3))
    kw = dict(epsilon=1.0, delta=1e-6, passes=4, random_state=1)
    fused, blocked = dp.dp_cd(sq, **kw), dp.dp_cd(sq, executor=BlockExecutor(block_rows=700),
                                                 **kw)
    np.testing.assert_allclose(blocked.coef, fused.coef, rtol=0, atol=1e-12)
    np.testing.assert_allclose(blocked.history.objective, fused.history.objective, rtol=1e-12)
    assert blocked.stats["clipped_fraction"] == fused.stats["clipped_fraction"]
    half = dp.Problem(X, X @ np.ones(X.shape[1]), loss="half_squared")
    kw = dict(epsilon=1.0, delta=1e-6, beta=1.0, radius=5.0, random_state=2)
    np.testing.assert_allclose(
        dp.solvers.dp_srgd(half, executor=BlockExecutor(block_rows=700), **kw).coef,
        dp.solvers.dp_srgd(half, **kw).coef, rtol=0, atol=1e-12)


def test_private_smoothness_on_blocked_problem_and_failures_charge_nothing():
    # smoothness="private" on a BlockedProblem: the clipped sums and the column maxima are
    # reductions over the blocks (once raised TypeError after the budget was charged)
    X, y = _data(n=1000)
    prob = dp.Problem(X, y, loss="squared", penalty=dp.L1(1e-3))
    bp = BlockExecutor(block_rows=300).problem(X, y, loss="squared", penalty=dp.L1(1e-3))
    kw = dict(epsilon=1.0, delta=1e-6, passes=2, smoothness="private", random_state=0)
    budget = dp.Budget(2.0, 1e-5)
    res = dp.dp_cd(bp, budget=budget, **kw)
    assert len(budget.ledger) == 1 and res.privacy.epsilon <= 1.0
    # the release reads the same constants as in memory (the block sums in another order)
    fused = dp.dp_cd(prob, **kw)
    np.testing.assert_allclose(res.coef, fused.coef, rtol=0, atol=1e-9)
    spent = (budget.spent_epsilon, budget.spent_delta, len(budget.ledger))
    for bad in (dict(smoothness_bounds=np.ones(2)), dict(smoothness_share=1.5),
                dict(smoothness_bounds="max")):
        with pytest.raises(ValueError):
            dp.dp_cd(bp, budget=budget, **kw, **bad)
        assert (budget.spent_epsilon, budget.spent_delta, len(budget.ledger)) == spent, bad
    hinge = BlockExecutor(block_rows=300).problem(X, np.where(y >= 0, 1.0, -1.0), loss="hinge")
    with pytest.raises(ValueError, match="smooth"):
        dp.dp_cd(hinge, budget=budget, **kw)
    assert (budget.spent_epsilon, budget.spent_delta, len(budget.ledger)) == spent
