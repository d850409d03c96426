"""Repeated mechanism calls do not leak: 10,000 calls grow resident memory by < 1 MB."""

import gc
import resource
import sys

import numpy as np
import pytest

from dpsco_core import mechanisms as M


def _rss_bytes():
    """Current resident set size (Linux /proc; ru_maxrss elsewhere is a peak, still useful)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize()
    except OSError:
        scale = 1 if sys.platform == "darwin" else 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _secure_kw():
    try:
        M.LaplaceMechanism(sensitivity=1.0, epsilon=1.0, secure=True)
    except TypeError:
        return []
    return [{"secure": True}]


@pytest.mark.parametrize("extra", [{}] + _secure_kw(), ids=lambda kw: "secure" if kw else "float")
def test_repeated_calls_do_not_grow_memory(extra):
    x = np.linspace(-1.0, 1.0, 64)
    lap = M.LaplaceMechanism(sensitivity=1.0, epsilon=1.0, **extra)
    gau = M.GaussianMechanism(sensitivity=1.0, epsilon=1.0, delta=1e-5, **extra)
    rnm = M.ReportNoisyMax(sensitivity=1.0, epsilon=1.0, **extra)

    def burst(n):
        for i in range(n):
            lap(x, random_state=i, n_threads=1)
            gau(x, random_state=i, n_threads=1)
            rnm(x, random_state=i, n_threads=1)

    burst(500)                 # warm-up: caches, allocator pools, lazily imported modules
    gc.collect()
    before = _rss_bytes()
    burst(10_000)
    gc.collect()
    growth = _rss_bytes() - before
    assert growth < 1 << 20, f"resident memory grew by {growth / 1024:.0f} KiB"
