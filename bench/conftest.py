"""Benchmark helpers: every benchmark records its group and its implementation.

``impl`` names what is timed: ``dpsco_core`` (the kernel through the public API, default
threads), ``dpsco_core[1 thread]``, ``reference`` (the NumPy twin), ``numpy`` (the obvious
NumPy one-liner a user would write) or a peer library's name. ``bench/run.py`` turns one run's
JSON into a table of ratios against ``dpsco_core``.
"""

import pytest


@pytest.fixture
def record():
    def _record(benchmark, group, impl, **info):
        benchmark.group = group
        benchmark.extra_info["impl"] = impl
        benchmark.extra_info.update(info)
    return _record
