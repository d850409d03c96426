"""Black-box audits of the private ReSQue (paper 000, Section IV), replace-one neighbours.

Identity checked (the hypothesis-testing bound of ``dpsco_core.audit``): the public
``resque_private_erm`` and ``resque_private_sco``, and one call of Algorithm 3
(``resque_erm_ball``, the unit every charge of the pipeline is made of), called on the canary
dataset D and on its worst replace-one neighbour D' (the canary's subgradient flipped from
-L to +L, every other record the zero record), are not refuted at 95% confidence:
eps_lower <= the epsilon of their report. The broken twin computes the phase noise as
sigma_i = L eta_i beta instead of L eta_i / beta (a misplaced beta: about 1e-8 of the noise)
and claims the honest report; the audit of one call must refute it.

Why the twin is gross and only on the single call (module docstring of
``dpsco_core.audit.resque_cases``): the noise covers the drift bound of Lemma 5 with the
proofs' constants, orders of magnitude above the drift a run makes. Measured (one call, n = 8,
T = 4, beta = 1e-4, claim 1.13, 400 trials per input, seed 2026): eps_lower 0.00 with the
noise multiplied by 1, 0.5, 1e-2, 1e-3 and 1e-4, and 1.93 at 1e-8 (the twin; 1.9 to 2.7
over seeds 0 to 5 and 2026, the honest call 0.00 at each; the pipelines 0.00 at seeds 1, 2
and 2026). And the pipeline draws the canary in about 1% of its runs (a few index draws out
of n = 480; with max_iter=1 only the ball oracle's single draw reaches the release, hence
max_iter=2), so a zero-noise pipeline would need thousands of calls to be refuted: its audits
here check the claim only, and the coupled-run power check is on the single call.

The pipeline audits memoise the beta calibration (``_fast_calibration``): it is a pure
function of public arguments (n, d, L, epsilon, delta, options) and takes most of a call;
``test_memoised_calibration_changes_nothing`` checks the releases are bitwise the same.
"""

import functools

import numpy as np
import pytest

from dpsco_core import audit as A
from dpsco_core.audit.resque_cases import (RESQUE_ALGORITHMS, resque_call_case,
                                           resque_canary_pair, resque_private_case)

pytestmark = pytest.mark.statistical

SEED = 2026
EPSILON, DELTA = 1.0, 1e-6
#: Trials per input of the pipeline audits (one public call each, about 25 ms memoised).
N_PIPELINE = 120
#: One Algorithm 3 call: n = 8 records, T = 4 (3 index draws: the canary in 33% of the runs),
#: beta = 1e-4 (claim 1.13 at delta = 1e-5, heuristic: T/n is above Lemma 7's 1/60).
CALL = dict(beta=1e-4, n_steps=4, n_records=8, call_delta=1e-7, delta=1e-5)
N_CALL = 400


def _memoise_calibration(monkeypatch):
    """Memoise the data-independent parts of resque_private_erm: the worst-case plan of a
    beta, its conversion to DP and the final report (same arguments -> same objects)."""
    from dpsco_core.resque import private_sco
    from dpsco_core.resque._private_accounting import Charge

    plan = functools.lru_cache(maxsize=None)(
        lambda beta, Ts, *rest, _plan=private_sco._plan_charge: _plan(beta, list(Ts), *rest))
    monkeypatch.setattr(private_sco, "_plan_charge",
                        lambda beta, Ts, *rest: plan(beta, tuple(Ts), *rest))
    monkeypatch.setattr(private_sco, "_report",
                        functools.lru_cache(maxsize=None)(private_sco._report))
    monkeypatch.setattr(Charge, "to_dp", functools.lru_cache(maxsize=None)(Charge.to_dp))


@pytest.fixture
def _fast_calibration(monkeypatch):
    _memoise_calibration(monkeypatch)


def _misplaced_beta(monkeypatch):
    """The twin: sigma_i = L eta_i beta (the schedule's sigmas times beta^2)."""
    from dpsco_core.resque import private_erm

    honest = private_erm.algorithm3_schedule

    def schedule(n_steps, radius, lipschitz, beta, n_features):
        out = dict(honest(n_steps, radius, lipschitz, beta, n_features))
        out["sigmas"] = [s * beta * beta for s in out["sigmas"]]
        return out

    monkeypatch.setattr(private_erm, "algorithm3_schedule", schedule)


# ------------------------------------------------------------------------ the pipelines

@pytest.mark.parametrize("algorithm", list(RESQUE_ALGORITHMS))
def test_pipeline_not_refuted(algorithm, _fast_calibration):
    case = resque_private_case(algorithm, epsilon=EPSILON, delta=DELTA)
    assert case.epsilon <= EPSILON and case.delta <= DELTA
    result = A.run_case(case, n_trials=N_PIPELINE, random_state=SEED)
    assert result.eps_lower <= case.epsilon, result


@pytest.mark.parametrize("algorithm", list(RESQUE_ALGORITHMS))
def test_memoised_calibration_changes_nothing(algorithm, monkeypatch):
    case = resque_private_case(algorithm, epsilon=EPSILON, delta=DELTA)
    seq = np.random.SeedSequence(5)
    plain = case.sampler(case.input1, 3, seq)
    with monkeypatch.context() as m:
        _memoise_calibration(m)
        cached = case.sampler(case.input1, 3, seq)
        cached_again = case.sampler(case.input1, 3, seq)
    np.testing.assert_array_equal(plain, cached)
    np.testing.assert_array_equal(plain, cached_again)


def test_the_canary_moves_one_call():
    """Coupled calls (same seed on D and D'): bitwise equal unless the canary is drawn, and
    then x(D) > x(D') (its step pulls x up on D, down on D'): the statistic sees the canary."""
    case = resque_call_case(**CALL)
    seq = np.random.SeedSequence(3)
    diff = case.sampler(case.input0, 200, seq) - case.sampler(case.input1, 200, seq)
    moved = np.flatnonzero(diff)
    assert 40 <= moved.size <= 100, moved.size      # P[drawn in 3 draws of 8] = 0.33
    assert np.all(diff[moved] > 0)


# --------------------------------------------------------------- one call of Algorithm 3

def test_call_not_refuted():
    case = resque_call_case(**CALL)
    assert 1.0 < case.epsilon < 1.2 and case.delta == 1e-5
    result = A.run_case(case, n_trials=N_CALL, random_state=SEED)
    assert result.eps_lower <= case.epsilon, result


def test_call_misplaced_beta_is_caught(monkeypatch):
    case = resque_call_case(**CALL)          # the honest claim
    _misplaced_beta(monkeypatch)
    result = A.run_case(case, n_trials=N_CALL, random_state=SEED)
    assert result.eps_lower > case.epsilon, result


def test_canary_pair_is_a_replace_one_neighbour():
    d0, d1 = resque_canary_pair(6)
    assert d0.n_samples == d1.n_samples == 6
    assert np.array_equal(d0.A, d1.A) and np.array_equal(d0.b[1:], d1.b[1:])
    z = np.zeros((1, 1))
    assert d0.subgradients(np.array([0]), z)[0, 0] == -1.0
    assert d1.subgradients(np.array([0]), z)[0, 0] == 1.0
    assert np.all(d0.subgradients(np.arange(1, 6), np.zeros((5, 1))) == 0.0)
    with pytest.raises(ValueError, match="algorithm"):
        resque_private_case("resque_erm", epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="n_records"):
        resque_private_case("resque_private_sco", epsilon=1.0, delta=1e-6, n_records=480)
