"""show_config and the n_threads convention."""

import io
import math
import os
import subprocess
import sys

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


def _threads_in_child(omp_num_threads):
    """effective_n_threads() and show_config() in a fresh process (OpenMP reads
    OMP_NUM_THREADS once, at start-up)."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if omp_num_threads is not None:
        env["OMP_NUM_THREADS"] = omp_num_threads
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(dpsco_core.__file__)),
                                         env.get("PYTHONPATH", "")])
    code = ("import io, dpsco_core; from dpsco_core._config import effective_n_threads as f\n"
            "b = io.StringIO(); dpsco_core.show_config(file=b)\n"
            "print(f()); print(b.getvalue())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    first, rest = out.split("\n", 1)
    return int(first), rest


@pytest.mark.skipif(not openmp_enabled(), reason="serial build: always one thread")
@pytest.mark.parametrize("value", ["1", "3", "5"])
def test_omp_num_threads_is_honoured(value):
    # Set: used as given, even above the usable CPUs (the user asked for it); no cap.
    n, config = _threads_in_child(value)
    assert n == int(value)
    assert f"n_threads=None {value} thread(s) (OMP_NUM_THREADS={value})" in config


@pytest.mark.skipif(not openmp_enabled(), reason="serial build: always one thread")
def test_without_omp_num_threads_the_usable_cpus_cap():
    n, config = _threads_in_child(None)
    assert 1 <= n <= max(1, len(os.sched_getaffinity(0)))
    assert "OMP_NUM_THREADS" not in config


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                      ("2", TypeError)])
def test_bad_n_threads(bad, exc):
    with pytest.raises(exc, match="n_threads"):
        effective_n_threads(bad)


def test_build_matches_expectation():
    # CI sets DPSCO_EXPECT_OPENMP: 1 for the main build, 0 for the serial job, so a build that
    # silently lost OpenMP (or a "serial" build that has it) fails. Without it (a local run)
    # the extension must agree with what setup.py recorded at build time.
    from dpsco_core._kernels import _build_info

    expected = os.environ.get("DPSCO_EXPECT_OPENMP")
    if expected is None:
        assert os.environ.get("CI", "").strip().lower() not in ("1", "true", "yes"), \
            "CI must set DPSCO_EXPECT_OPENMP"
        assert openmp_enabled() == _build_info.OPENMP
        return
    assert expected in ("0", "1"), f"DPSCO_EXPECT_OPENMP must be 0 or 1; got {expected!r}"
    assert openmp_enabled() == (expected == "1")
    assert _build_info.OPENMP == (expected == "1")


def _policy_in_child(extra_env, code_before=""):
    """dpsco_core's wait policy, show_config and the environment seen after import, in a fresh
    process (the OpenMP runtime reads its wait policy once, when it starts)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(extra_env)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(dpsco_core.__file__)),
                                         env.get("PYTHONPATH", "")])
    code = (code_before + "import io, os, dpsco_core\n"
            "from dpsco_core import _openmp_env\n"
            "b = io.StringIO(); dpsco_core.show_config(file=b)\n"
            "print(repr(_openmp_env.POLICY)); print(repr(os.environ.get('OMP_WAIT_POLICY')))\n"
            "print(b.getvalue())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    policy, environ, config = out.split("\n", 2)
    return eval(policy), eval(environ), config


@pytest.mark.skipif(not openmp_enabled(), reason="serial build: no OpenMP runtime")
def test_wait_policy_is_passive_by_default_and_the_environment_is_restored():
    # Issue 18: spinning idle threads made ~1 ms kernels 16-21x slower with 2 threads on a busy
    # machine. dpsco-core asks for the passive policy before the runtime starts, and leaves the
    # environment of child processes as it was.
    policy, environ, config = _policy_in_child({})
    assert policy.startswith("passive (dpsco-core's default")
    assert environ is None
    assert "wait policy    passive" in config
    assert "serial below   200,000 elements" in config


@pytest.mark.skipif(not openmp_enabled(), reason="serial build: no OpenMP runtime")
@pytest.mark.parametrize("name, value", [("OMP_WAIT_POLICY", "active"),
                                         ("GOMP_SPINCOUNT", "1000")])
def test_a_wait_policy_set_by_the_user_is_kept(name, value):
    policy, environ, config = _policy_in_child({name: value})
    assert policy == f"{name}={value} (the user's)"
    assert environ == (value if name == "OMP_WAIT_POLICY" else None)
    assert f"wait policy    {name}={value} (the user's)" in config


@pytest.mark.skipif(not openmp_enabled() or not sys.platform.startswith("linux"),
                    reason="libgomp.so.1 is loaded by name (Linux, GCC builds)")
def test_wait_policy_says_when_the_runtime_was_loaded_first():
    policy, _, _ = _policy_in_child({}, "import ctypes; ctypes.CDLL('libgomp.so.1')\n")
    assert policy.startswith("the runtime's default (OpenMP was loaded before dpsco_core")


def test_serial_below_the_work_threshold_unless_threads_are_given(monkeypatch):
    from dpsco_core import _config
    from dpsco_core._config import SERIAL_WORK

    monkeypatch.setattr(_config, "_runnable_threads", lambda: 1)    # as on an idle machine
    assert effective_n_threads(None, work=SERIAL_WORK - 1) == 1
    assert effective_n_threads(None, work=SERIAL_WORK) == effective_n_threads(None)
    assert effective_n_threads(2, work=1) == (2 if openmp_enabled() else 1)


@pytest.mark.skipif(not openmp_enabled(), reason="serial build: always one thread")
def test_a_busy_machine_caps_the_default_thread_count(monkeypatch):
    # Issue 18: with n_threads=None and a work size, at most the CPUs that other running
    # threads leave idle; an explicit n_threads and OMP_NUM_THREADS are used as given.
    from dpsco_core import _config

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    big = 10 * _config.SERIAL_WORK
    monkeypatch.setattr(_config, "_runnable_threads", lambda: 1)          # idle machine
    assert effective_n_threads(None, work=big) == effective_n_threads(None)
    monkeypatch.setattr(_config, "_runnable_threads", lambda: 1000)       # every core busy
    assert effective_n_threads(None, work=big) == 1
    assert effective_n_threads(None) == effective_n_threads(None, work=None) >= 1
    assert effective_n_threads(2, work=big) == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert effective_n_threads(None, work=big) == _config._kconfig.omp_max_threads()


def test_runnable_threads_reading():
    from dpsco_core import _config

    _config._LOAD_READING[0] = -math.inf
    assert _config._runnable_threads() >= 1


def _simd_lines(env_value=None, code=()):
    """``[(path, DP-CD SIMD line)]`` in a fresh process (the override is read at import): one
    pair from show_config after import, and one more after each statement of ``code``."""
    env = {k: v for k, v in os.environ.items() if k != "DPSCO_CD_SIMD"}
    if env_value is not None:
        env["DPSCO_CD_SIMD"] = env_value
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(dpsco_core.__file__)),
                                         env.get("PYTHONPATH", "")])
    report = ("b = io.StringIO(); dpsco_core.show_config(file=b)\n"
              "print('@@', _cd.simd_path()); print(b.getvalue())\n")
    child = ("import io, dpsco_core\nfrom dpsco_core._kernels import _cd\n" + report
             + "".join(stmt + "\n" + report for stmt in code))
    out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    pairs = []
    for part in out.split("@@ ")[1:]:
        path, config = part.split("\n", 1)
        line = [ln for ln in config.splitlines() if ln.strip().startswith("DP-CD SIMD")]
        assert len(line) == 1, config
        pairs.append((path, line[0].split("DP-CD SIMD", 1)[1].strip()))
    assert len(pairs) == 1 + len(code), out
    return pairs


def test_show_config_reports_the_dp_cd_simd_path_in_use():
    # issue 18: the path the DP-CD kernel runs (avx2 where the CPU has it) and the override;
    # the default and the run-time override in one child (two children cost ~3 s each)
    (path, text), (set_path, set_text) = _simd_lines(code=["_cd.set_simd_path('scalar')"])
    assert text.startswith(path + " (")
    assert "DPSCO_CD_SIMD unset" in text
    if path == "avx2":
        assert "CPU has AVX2" in text
    # the environment override, read at import
    ((env_path, env_text),) = _simd_lines("scalar")
    assert env_path == "scalar" and env_text == "scalar (forced by DPSCO_CD_SIMD='scalar')"
    # set at run time
    assert set_path == "scalar" and set_text.startswith("scalar (")
    assert "set_simd_path" in set_text or "no AVX2" in set_text
