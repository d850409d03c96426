"""show_config and the n_threads convention."""

import io

import pytest

import dpsco_core
from dpsco_core._config import effective_n_threads, openmp_enabled


def test_show_config_reports_build():
    buf = io.StringIO()
    dpsco_core.show_config(file=buf)
    text = buf.getvalue()
    assert dpsco_core.__version__ in text
    assert "openmp" in text and "compiler" in text and "compile flags" in text
    assert ("yes" if openmp_enabled() else "no") in text.split("openmp", 1)[1].splitlines()[0]


def test_effective_n_threads():
    n = effective_n_threads()
    assert n >= 1
    assert effective_n_threads(1) == 1
    assert effective_n_threads(3) == (3 if openmp_enabled() else 1)


def test_omp_num_threads_is_honoured(monkeypatch):
    if not openmp_enabled():
        pytest.skip("serial build")
    # omp_get_max_threads reads OMP_NUM_THREADS at start-up only; the cap is what we control.
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert effective_n_threads() <= max(1, len(__import__("os").sched_getaffinity(0)))


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                      ("2", TypeError)])
def test_bad_n_threads(bad, exc):
    with pytest.raises(exc, match="n_threads"):
        effective_n_threads(bad)


def test_build_matches_expectation():
    # CI's serial job sets DPSCO_EXPECT_OPENMP=0, so a silently parallel "serial" build fails.
    expected = __import__("os").environ.get("DPSCO_EXPECT_OPENMP")
    if expected is None:
        pytest.skip("DPSCO_EXPECT_OPENMP not set")
    assert openmp_enabled() == (expected == "1")
