"""The ``work=`` serial threshold of ``n_threads=None`` (issue 18) at the kernel call sites
that lacked it: the mechanisms' noise and noisy-max kernels and the DP-CD grid. Results are
bitwise the same for any thread count, so the threshold only changes speed."""

import importlib
import warnings

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core import _config, mechanisms
dp_cd_module = importlib.import_module("dpsco_core.solvers.dp_cd")


def _recording(monkeypatch, module):
    calls = []
    real = _config.effective_n_threads

    def spy(n_threads=None, *, work=None):
        calls.append((n_threads, work))
        return real(n_threads, work=work)
    monkeypatch.setattr(module, "effective_n_threads", spy)
    return calls


@pytest.mark.parametrize("secure", [False, True])
def test_noise_kernels_pass_their_work(monkeypatch, secure):
    calls = _recording(monkeypatch, mechanisms)
    x = np.linspace(-1.0, 1.0, 1000)
    dp.mechanisms.gaussian_mechanism(x, sensitivity=1.0, epsilon=1.0, delta=1e-6,
                                     secure=secure, random_state=0)
    assert (None, 1000) in calls
    calls.clear()
    dp.mechanisms.laplace_mechanism(x, sensitivity=1.0, epsilon=1.0, secure=secure,
                                    random_state=0)
    assert (None, 1000) in calls


def test_noisy_max_passes_its_work(monkeypatch):
    calls = _recording(monkeypatch, mechanisms)
    dp.mechanisms.report_noisy_max(np.arange(5000.0), sensitivity=1.0, epsilon=1.0,
                                   noise="gumbel", secure=False, random_state=0)
    assert (None, 5000) in calls


def test_below_the_threshold_the_default_is_one_thread():
    assert _config.effective_n_threads(None, work=_config.SERIAL_WORK - 1) == 1


@pytest.mark.parametrize("size", [1000, 300_000])
def test_mechanisms_bitwise_equal_for_1_2_and_default_threads(size):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(size)
    outs = [dp.mechanisms.gaussian_mechanism(x, sensitivity=1.0, epsilon=1.0, delta=1e-6,
                                             secure=False, random_state=3, n_threads=t)
            for t in (1, 2, None)]
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()
    outs = [dp.mechanisms.laplace_mechanism(x, sensitivity=1.0, epsilon=1.0, secure=False,
                                            random_state=3, n_threads=t) for t in (1, 2, None)]
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()
    picks = {dp.mechanisms.report_noisy_max(x, sensitivity=1.0, epsilon=1.0, noise=noise,
                                            secure=False, random_state=3, n_threads=t)
             for t in (1, 2, None) for noise in ("gumbel",)}
    assert len(picks) == 1


def test_dp_cd_grid_passes_its_work_and_is_bitwise_equal(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    y = X @ rng.standard_normal(5)
    problem = dp.Problem(X, y, loss="squared", penalty=dp.L1(0.01))
    kwargs = dict(epsilon=1.0, delta=1e-6, passes=2, steps=[0.1, 1.0], clips=[1.0, 10.0],
                  n_seeds=2, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grids = [dp.dp_cd_grid(problem, n_threads=t, **kwargs) for t in (1, 2)]
        calls = _recording(monkeypatch, dp_cd_module)
        grids.append(dp.dp_cd_grid(problem, **kwargs))
    assert (None, 8 * 300 * 5) in calls
    assert grids[0].coef.tobytes() == grids[1].coef.tobytes() == grids[2].coef.tobytes()


# --- the solvers and estimators of issue 18's second round: Frank-Wolfe (its row sources),
# --- ReSQue, DP-SRGD and its baselines, and the row-blocked executor

row_source_module = importlib.import_module("dpsco_core.solvers._row_source")
resque_module = importlib.import_module("dpsco_core.resque.estimator")
srgd_module = importlib.import_module("dpsco_core.solvers.dp_srgd")
baselines_module = importlib.import_module("dpsco_core.solvers.srgd_baselines")
blocked_module = importlib.import_module("dpsco_core.parallel.blocked")


@pytest.fixture(scope="module")
def lasso():
    from dpsco_core.datasets import make_rademacher_lasso
    X, y, _ = make_rademacher_lasso(1200, 30, 3, radius=1.0, noise=0.5, random_state=1)
    return dp.Problem(X, y, loss="half_squared")


def _fw_runs(problem):
    fw = dp.solvers
    return {
        "vr": lambda t: fw.vr_frank_wolfe(problem, epsilon=1.0, lipschitz=3.0, batch=64,
                                          n_phases=3, random_state=0, n_threads=t,
                                          record_history=False).coef,
        "ttz": lambda t: fw.ttz_frank_wolfe(problem, epsilon=1.0, delta=1e-5, lipschitz=3.0,
                                            n_iter=20, random_state=0, n_threads=t).coef,
        "l1_sgd": lambda t: fw.projected_dp_sgd_l1(problem, epsilon=1.0, delta=1e-5,
                                                   random_state=0, n_threads=t).coef,
    }


@pytest.mark.parametrize("solver", ["vr", "ttz", "l1_sgd"])
def test_frank_wolfe_leaves_pass_their_work_and_are_bitwise_equal(monkeypatch, lasso, solver):
    run = _fw_runs(lasso)[solver]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coefs = [run(t) for t in (1, 2)]
        # every leaf asks for threads (no leaf is below the own threshold here)
        monkeypatch.setattr(row_source_module, "MIN_PARALLEL_WORK", 0)
        calls = _recording(monkeypatch, row_source_module)
        coefs.append(run(None))
    d = lasso.n_features
    works = [w for n, w in calls if n is None and w is not None]
    assert works, calls
    # each call's work: batch rows x features (a leaf), 2d arms (noisy max) or n x d (the
    # row-norm pass), never the run's whole data unless it is that pass
    assert all(w % d == 0 or w == 2 * d for w in works), works
    assert all(0 < w <= lasso.n_samples * d for w in works)
    assert coefs[0].tobytes() == coefs[1].tobytes() == coefs[2].tobytes()


def test_frank_wolfe_explicit_threads_are_used_as_given(lasso):
    source = row_source_module.row_source(lasso, 2)
    assert source.threads(10) == (2 if dp.openmp_enabled() else 1)
    assert source.leaf_threads(1) == 1          # below the leaf's own threshold
    default = row_source_module.row_source(lasso, None)
    assert default.threads(_config.SERIAL_WORK - 1) == 1
    with pytest.raises(ValueError, match="n_threads"):
        row_source_module.row_source(lasso, 0)


def test_resque_kernels_pass_their_work_and_are_bitwise_equal(monkeypatch):
    from dpsco_core.resque import (GLMReSQueBatch, ReSQueBatch, draw_resque_samples,
                                   resque_estimate, resque_log_weights)
    rng = np.random.default_rng(0)
    n, d, m = 700, 6, 3
    A = rng.standard_normal((200, d))
    y = rng.standard_normal(200)
    center = rng.standard_normal(d) * 0.1
    x = center + 0.01 * rng.standard_normal((m, d))
    G = rng.standard_normal((n, 4))

    def everything(t):
        zeta = draw_resque_samples(n, d, random_state=1, n_threads=t)
        out = [zeta, resque_log_weights(x, center, 0.5, zeta, n_threads=t),
               resque_estimate(x, center, 0.5, zeta, G, n_threads=t)]
        for store in (True, False):
            glm = GLMReSQueBatch(A, y, "squared", center, 0.5, n, store_samples=store,
                                 random_state=2, n_threads=t)
            out += [glm.coefs, glm.estimate(x)]
            batch = ReSQueBatch(center, 0.5, G, zeta=zeta if store else None,
                                seed=None if store else np.random.SeedSequence(1),
                                n_threads=t)
            out.append(batch.estimate(x))
        return out

    outs = [everything(t) for t in (1, 2)]
    calls = _recording(monkeypatch, resque_module)
    outs.append(everything(None))
    for a, b, c in zip(*outs):
        assert a.tobytes() == b.tobytes() == c.tobytes()
    works = {w for t, w in calls if t is None}
    assert n * d in works                        # samples; GLM queries
    assert n * d * m in works                    # log-weights
    assert n * m * (d + 4) in works              # stored-sample batch
    assert n * (m * (d + 4) + d) in works        # regenerated samples
    assert n * (m * 2 * d) in works              # GLM batch
    assert None not in works


def test_resque_validates_an_explicit_thread_count():
    from dpsco_core.resque import ReSQueBatch
    with pytest.raises(ValueError, match="n_threads"):
        ReSQueBatch(np.zeros(2), 1.0, np.zeros((3, 2)), zeta=np.zeros((3, 2)), n_threads=0)


@pytest.mark.parametrize("solver", ["dp_srgd", "dp_sgd_single_epoch", "accelerated_dp_sgd",
                                    "dp_srg", "dp_ftrl"])
def test_srgd_runs_pass_their_round_work_and_are_bitwise_equal(monkeypatch, solver):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((2000, 8)) / np.sqrt(8)
    problem = dp.Problem(X, X @ rng.standard_normal(8), loss="half_squared")
    fn = getattr(dp.solvers, solver)
    kwargs = dict(epsilon=1.0, delta=1e-6, beta=1.0, batch_size=50, radius=5.0,
                  random_state=0)
    coefs = [fn(problem, n_threads=t, **kwargs).coef for t in (1, 2)]
    module = srgd_module if solver == "dp_srgd" else baselines_module
    calls = _recording(monkeypatch, module)
    coefs.append(fn(problem, **kwargs).coef)
    two_point = solver in ("dp_srgd", "dp_srg")
    assert (None, (2 if two_point else 1) * 50 * 8) in calls
    assert coefs[0].tobytes() == coefs[1].tobytes() == coefs[2].tobytes()


def test_block_executor_resolves_its_default_per_call(monkeypatch):
    from dpsco_core.parallel import BlockExecutor
    explicit = BlockExecutor(block_rows=100, n_threads=2)
    assert explicit._threads() == (2 if dp.openmp_enabled() else 1)
    calls = _recording(monkeypatch, blocked_module)
    default = BlockExecutor(block_rows=100)
    default._threads()
    assert (None, _config.SERIAL_WORK) in calls
    # a busy machine: every other CPU taken by a runnable thread -> one thread
    monkeypatch.setattr(_config, "_runnable_threads", lambda: 64)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert default._threads() == 1


def test_block_executor_results_do_not_depend_on_threads():
    from dpsco_core.parallel import BlockExecutor
    rng = np.random.default_rng(5)
    X = rng.standard_normal((600, 5))
    y = X @ rng.standard_normal(5)
    outs = []
    for t in (1, 2, None):
        ex = BlockExecutor(block_rows=128, n_threads=t)
        prob = ex.problem(X, y, loss="squared")
        out = np.empty(5)
        rows = np.arange(0, 600, 3, dtype=np.int64)
        ex.diff_sum(prob, rows, np.ones(5), np.zeros(5), 2.0, 1.0, 0.5, out)
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()
