"""Audits of the solvers (DP-CD updates, DP-SGD steps) through their kernels and calibration.

Identity checked (the hypothesis-testing bound of ``dpsco_core.audit``): a solver claiming
(eps, delta)-DP in its report is not refuted at 95% confidence (eps_lower <= eps), and a
deliberately broken twin, with the claim unchanged, is refuted (eps_lower > eps): half the
noise the solver calibrated, or its clipping disabled. Seeds are fixed. Measured at 10^6
trials per input (seed 2026): DP-CD claim 2 -> honest 1.21 (1 update) and 1.11 (4 updates),
half noise 2.49 and 2.68, no clipping 11.8 and 10.2; DP-SGD claim 2 (q = 0.5) -> honest
1.19 (1 step) and 1.30 (4 steps), half noise 2.96 and 2.83, no clipping 11.1 and 11.1.
vr_frank_wolfe leaf (epsilon 4, T = 1: per-leaf claim 1.0), 2 x 10^5 trials: honest 0.73
(Laplace), 0.85 (Gumbel), 0.91 (exponential); half noise 1.62, 1.83, 1.70; no clipping 10.2.
"""

import numpy as np
import pytest

from dpsco_core import audit as A
from dpsco_core.audit.solver_cases import dp_cd_case, dp_sgd_case, vr_frank_wolfe_leaf_case

# dp_sgd_case runs dp_sgd with the data's beta (it replays the kernel with the step it got):
# the PrivacyLeakWarning is expected.
pytestmark = [pytest.mark.statistical,
              pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")]

EPSILON, DELTA = 2.0, 1e-5
N_TRIALS = 1_000_000


def _dp_cd(n_updates):
    return lambda **twin: dp_cd_case(epsilon=EPSILON, delta=DELTA, n_updates=n_updates, **twin)


def _dp_sgd(passes):
    return lambda **twin: dp_sgd_case(epsilon=EPSILON, delta=DELTA, sample_rate=0.5,
                                      passes=passes, **twin)


CASES = {
    "dp_cd-1-update": _dp_cd(1),
    "dp_cd-4-updates": _dp_cd(4),
    "dp_sgd-1-step": _dp_sgd(0.5),
    "dp_sgd-4-steps": _dp_sgd(2.0),
}
TWINS = {"half-noise": {"noise_factor": 0.5}, "no-clipping": {"clipping": False}}


@pytest.mark.parametrize("name", CASES)
def test_claimed_epsilon_is_not_refuted(name):
    case = CASES[name]()
    assert case.epsilon <= EPSILON and case.delta == DELTA
    result = A.run_case(case, n_trials=N_TRIALS, random_state=2026)
    assert result.eps_lower <= case.epsilon, result


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("name", CASES)
def test_broken_twin_is_caught(name, twin):
    case = CASES[name](**TWINS[twin])
    result = A.run_case(case, n_trials=N_TRIALS, random_state=2026)
    assert result.eps_lower > case.epsilon, result


def test_the_claim_is_the_honest_solvers():
    # The twins keep the honest claim: only the kernel's constants change.
    for build in CASES.values():
        honest, broken = build(), build(noise_factor=0.5)
        assert broken.epsilon == honest.epsilon and broken.delta == honest.delta
        assert "noise x0.5" in broken.name


def test_samplers_are_deterministic_and_independent_across_trials():
    for build in CASES.values():
        case = build()
        a = case.sampler(case.input1, 1000, np.random.SeedSequence(4))
        b = case.sampler(case.input1, 1000, np.random.SeedSequence(4))
        np.testing.assert_array_equal(a, b)
        assert np.unique(a).size > 900     # fresh noise in every trial


# --------------------------------------------------------------- vr_frank_wolfe leaf selection
# One kernel call per trial (about 10 us): 2 x 10^5 trials per input. Laplace (the solver's
# default) runs by default; the Gumbel and exponential variants are slow-marked.
N_LEAF = 200_000


@pytest.mark.parametrize("noise", [
    "laplace",
    pytest.param("gumbel", marks=pytest.mark.slow),
    pytest.param("exponential", marks=pytest.mark.slow),
])
@pytest.mark.parametrize("twin", [None, "half-noise", "no-clipping"])
def test_vr_frank_wolfe_leaf(noise, twin):
    case = vr_frank_wolfe_leaf_case(epsilon=4.0, noise=noise, **TWINS.get(twin, {}))
    result = A.run_case(case, n_trials=N_LEAF if twin != "no-clipping" else 20_000,
                        random_state=2026)
    if twin is None:
        assert result.eps_lower <= case.epsilon, result
        assert result.eps_lower > 0.5 * case.epsilon, result    # the pair leaks: power
    else:
        assert result.eps_lower > case.epsilon, result
