"""The same calls from 4 Python threads at once give the same results as sequential calls
(mechanisms, and the solvers dp_cd and dp_sgd on one shared Problem).

The kernels release the GIL and share no state between calls (each call gets its own bit
generators from its seed), so concurrent calls must not interfere.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from dpsco_core import mechanisms as M

# The solvers run with data-derived constants here (thread safety, not privacy, is tested):
# the PrivacyLeakWarning is expected.
pytestmark = pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")

X = np.linspace(-1.0, 1.0, 150_000)   # three noise blocks
SCORES = np.random.default_rng(0).standard_normal(150_000)

CALLS = {
    "gaussian": lambda seed, t: M.gaussian_mechanism(X, sensitivity=1.0, epsilon=1.0,
                                                     delta=1e-5, random_state=seed,
                                                     n_threads=t),
    "laplace": lambda seed, t: M.laplace_mechanism(X, sensitivity=1.0, epsilon=1.0,
                                                   random_state=seed, n_threads=t),
    "rnm-laplace": lambda seed, t: M.report_noisy_max(SCORES, sensitivity=1.0, epsilon=1.0,
                                                      random_state=seed, n_threads=t),
    "rnm-gumbel": lambda seed, t: M.exponential_mechanism(SCORES, sensitivity=1.0, epsilon=1.0,
                                                          random_state=seed, n_threads=t),
    "rnm-exponential": lambda seed, t: M.permute_and_flip(SCORES, sensitivity=1.0,
                                                          epsilon=1.0, random_state=seed,
                                                          n_threads=t),
}


def _secure_calls():
    if not hasattr(M.LaplaceMechanism(sensitivity=1.0, epsilon=1.0), "secure"):
        return {}
    return {
        "laplace-secure": lambda seed, t: M.laplace_mechanism(
            X, sensitivity=1.0, epsilon=1.0, secure=True, random_state=seed, n_threads=t),
        "gaussian-secure": lambda seed, t: M.gaussian_mechanism(
            X, sensitivity=1.0, epsilon=1.0, delta=1e-5, secure=True, random_state=seed,
            n_threads=t),
        "rnm-secure": lambda seed, t: M.report_noisy_max(
            SCORES, sensitivity=1.0, epsilon=1.0, secure=True, random_state=seed, n_threads=t),
    }


CALLS.update(_secure_calls())


def _as_bytes(result):
    return np.asarray(result, dtype=np.float64).tobytes()


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("n_threads", [1, 2])
def test_threads_give_sequential_results(name, n_threads):
    call = CALLS[name]
    seeds = [101, 202, 303, 404] * 2
    sequential = [_as_bytes(call(s, n_threads)) for s in seeds]
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(lambda s: _as_bytes(call(s, n_threads)), seeds))
    assert concurrent == sequential


def _problem():
    from dpsco_core import Problem
    from dpsco_core.penalties import L1

    rng = np.random.default_rng(7)
    X = rng.standard_normal((400, 12))
    y = X @ rng.standard_normal(12) + 0.1 * rng.standard_normal(400)
    return Problem(X, y, loss="squared", penalty=L1(0.01))


def _dp_cd(problem, seed, t):
    from dpsco_core import solvers
    return solvers.dp_cd(problem, epsilon=1.0, delta=1e-6, passes=3, random_state=seed)


def _dp_sgd(problem, seed, t):
    from dpsco_core import solvers
    return solvers.dp_sgd(problem, epsilon=1.0, delta=1e-6, passes=2, batch_size=64,
                          random_state=seed, n_threads=t)


SOLVER_CALLS = {"dp_cd": _dp_cd, "dp_sgd": _dp_sgd}


@pytest.mark.parametrize("name", SOLVER_CALLS)
@pytest.mark.parametrize("n_threads", [1, 2])
def test_solver_threads_give_sequential_results(name, n_threads):
    # The concurrent calls share one fresh Problem, so its lazily built caches (layouts,
    # constants) are first computed by racing threads.
    call = SOLVER_CALLS[name]

    def run(problem, seed):
        res = call(problem, seed, n_threads)
        return (res.coef.tobytes(), res.history.objective.tobytes(),
                res.privacy.epsilon, res.stats["noise_multiplier"])

    seeds = [11, 22, 33, 44] * 2
    sequential = [run(_problem(), s) for s in seeds]
    shared = _problem()
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(lambda s: run(shared, s), seeds))
    assert concurrent == sequential
    assert len(set(sequential)) == 4          # different seeds, different runs
