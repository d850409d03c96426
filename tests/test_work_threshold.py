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
