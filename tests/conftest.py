"""Shared fixtures.

``global_seed`` contract: a test that takes it must pass for every seed it can be given; the
suite runs it with the fixed seed below (set ``DPSCO_TEST_SEED`` to try another one).
Statistical tests take fixed seeds and state their tolerance in standard errors.

Test extras (scikit-learn, dp-accounting, hypothesis, mpmath, matplotlib): outside CI a test
that needs a missing one is skipped (``pytest.importorskip``); under CI (``CI`` set to a true
value, as ``.ci/run`` does) ``pytest.importorskip`` raises ImportError instead, so a CI
environment without the extras fails rather than passing with the tests silently skipped.

Hypothesis: under CI the ``ci`` profile is loaded: derandomized (the examples are a function
of the test's source, so a CI failure reproduces on any machine) and without the example
database (CI keeps no state between runs). Hypothesis also draws some values from constants it
finds in the imported local modules, so a failure reproduces with the same command (the same
collected files), e.g. ``CI=true pytest tests/robustness``. Every ``@given`` test states its
own ``max_examples``, so the profile changes which examples run, not how many. Outside CI the
default profile (random examples, local database) keeps exploring;
``--hypothesis-profile=ci`` selects the CI one by hand.
"""

import os

import numpy as np
import pytest

ON_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")

if ON_CI:
    _importorskip = pytest.importorskip

    def _import_or_fail(modname, *args, **kwargs):
        try:
            return _importorskip(modname, *args, **kwargs)
        except pytest.skip.Exception as exc:
            raise ImportError(f"CI is set and the test extra {modname!r} is missing or too "
                              f"old ({exc}); install the package with its [test] extra") from None

    pytest.importorskip = _import_or_fail


try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:   # the test extra is missing: the tests that need it say so themselves
    pass
else:
    _hypothesis_settings.register_profile("ci", derandomize=True, database=None,
                                          print_blob=True)
    if ON_CI:
        _hypothesis_settings.load_profile("ci")


@pytest.fixture
def global_seed():
    return int(os.environ.get("DPSCO_TEST_SEED", "20261122"))


@pytest.fixture
def rng(global_seed):
    return np.random.default_rng(global_seed)


def pytest_configure(config):
    # .ci/run sets DPSCO_EXPECT_INSTALLED=1 when it tests the installed wheel: the run must then
    # import dpsco_core from the virtual environment's site-packages, never from a source tree.
    if os.environ.get("DPSCO_EXPECT_INSTALLED", "0") not in ("", "0"):
        import sysconfig

        import dpsco_core
        where = os.path.realpath(dpsco_core.__file__)
        site = {os.path.realpath(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
        if not any(where.startswith(path + os.sep) for path in site):
            raise pytest.UsageError(f"DPSCO_EXPECT_INSTALLED=1 but dpsco_core was imported from "
                                    f"{where}, not from site-packages ({sorted(site)}).")


def pytest_report_header(config):
    seed = os.environ.get("DPSCO_TEST_SEED", "20261122")
    try:
        from dpsco_core._config import effective_n_threads, openmp_enabled
        threads = f"openmp={'yes' if openmp_enabled() else 'no'}, n_threads=None -> {effective_n_threads()}"
    except ImportError as exc:  # the kernels are not built: say so before every test fails
        threads = f"compiled kernels not importable ({exc})"
    try:
        import dpsco_core
        where = f"dpsco_core {dpsco_core.__version__} from {os.path.dirname(dpsco_core.__file__)}"
    except ImportError as exc:
        where = f"dpsco_core not importable ({exc})"
    return [f"dpsco-core: global_seed={seed} (DPSCO_TEST_SEED), {threads}", where]
