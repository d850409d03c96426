"""Shared fixtures.

``global_seed`` contract: a test that takes it must pass for every seed it can be given; the
suite runs it with the fixed seed below (set ``DPSCO_TEST_SEED`` to try another one).
Statistical tests take fixed seeds and state their tolerance in standard errors.
"""

import os

import numpy as np
import pytest


@pytest.fixture
def global_seed():
    return int(os.environ.get("DPSCO_TEST_SEED", "20261122"))


@pytest.fixture
def rng(global_seed):
    return np.random.default_rng(global_seed)


def pytest_report_header(config):
    seed = os.environ.get("DPSCO_TEST_SEED", "20261122")
    try:
        from dpsco_core._config import effective_n_threads, openmp_enabled
        threads = f"openmp={'yes' if openmp_enabled() else 'no'}, n_threads=None -> {effective_n_threads()}"
    except ImportError as exc:  # the kernels are not built: say so before every test fails
        threads = f"compiled kernels not importable ({exc})"
    return [f"dpsco-core: global_seed={seed} (DPSCO_TEST_SEED), {threads}"]
