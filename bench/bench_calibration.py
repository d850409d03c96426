"""Calibrating the noise multiplier of 50 epochs of Poisson-sampled DP-SGD.

Problem: q = 256/45312 (Electricity, batch 256), 50 epochs (8850 steps), epsilon = 1,
delta = 1/45312^2, RDP accounting. Implementations: dpsco_core, dp-accounting's
``calibrate_dp_mechanism`` with its ``RdpAccountant``, and Opacus's ``get_noise_multiplier``
(``accountant="rdp"``). Each test returns the multiplier in ``extra_info["noise_multiplier"]`` so
the agreement can be read off the table; the 1e-4 agreement itself is a unit test
(``tests/privacy/test_calibration.py``), never a timing assertion.

Run: ``pytest bench/bench_calibration.py --benchmark-only``.
"""

import pytest

N = 45312
SAMPLE_RATE = 256 / N
EPOCHS = 50
TARGET_EPSILON = 1.0
TARGET_DELTA = 1.0 / N ** 2
GROUP = "calibrate_sampled_gaussian"


def _ours():
    from dpsco_core.privacy import calibrate_sampled_gaussian
    from dpsco_core.privacy.calibration import _sampled_gaussian_multiplier

    # The search is memoized for hyperparameter grids; time the search itself.
    _sampled_gaussian_multiplier.cache_clear()

    return calibrate_sampled_gaussian(target_epsilon=TARGET_EPSILON, target_delta=TARGET_DELTA,
                                      sample_rate=SAMPLE_RATE, epochs=EPOCHS)


def _dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    from dpsco_core.privacy import steps_from_epochs

    steps = steps_from_epochs(EPOCHS, SAMPLE_RATE)

    def make_event(noise_multiplier):
        return dpa.SelfComposedDpEvent(
            dpa.PoissonSampledDpEvent(SAMPLE_RATE, dpa.GaussianDpEvent(noise_multiplier)), steps)

    def run():
        return dpa.calibrate_dp_mechanism(dpa.rdp.RdpAccountant, make_event, TARGET_EPSILON,
                                          TARGET_DELTA)

    return run


def _opacus():
    utils = pytest.importorskip("opacus.accountants.utils")

    def run():
        return utils.get_noise_multiplier(target_epsilon=TARGET_EPSILON,
                                          target_delta=TARGET_DELTA, sample_rate=SAMPLE_RATE,
                                          epochs=EPOCHS, accountant="rdp")

    return run


@pytest.mark.parametrize("impl", ["dpsco_core", "dp-accounting", "opacus"])
def bench_calibrate_sampled_gaussian(benchmark, impl):
    run = {"dpsco_core": lambda: _ours, "dp-accounting": _dp_accounting,
           "opacus": _opacus}[impl]()
    benchmark.group = GROUP
    benchmark.extra_info["impl"] = impl
    noise_multiplier = benchmark(run)
    benchmark.extra_info["noise_multiplier"] = noise_multiplier
    assert noise_multiplier > 0
