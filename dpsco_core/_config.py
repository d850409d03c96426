"""Build configuration and thread-count resolution.

``n_threads`` convention (everywhere in dpsco-core): ``None`` means every core OpenMP reports,
capped by the CPUs this process may run on unless ``OMP_NUM_THREADS`` is set, and, for a call
that states its work (:func:`effective_n_threads`), one thread below :data:`SERIAL_WORK` and at
most the CPUs other running threads leave idle; an int >= 1 is used as given. A build without OpenMP always runs one thread.

Fork after OpenMP: GNU libgomp keeps its thread pool across ``fork()`` but not the threads, so
a child process (``multiprocessing`` with the "fork" start method, the default on Linux before
Python 3.14) that enters a multithreaded OpenMP region after its parent ran one waits forever.
Here such a child falls back to one thread, with a ``RuntimeWarning``, rather than raising:
results are bitwise the same for any thread count, so the fallback costs only speed, and code
that already works in forked workers keeps working. The "spawn" and "forkserver" start methods
keep every thread.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
import warnings
from typing import TextIO

import numpy as np

from . import __version__, _openmp_env
from ._kernels import _build_info, _config as _kconfig

__all__ = ["show_config", "effective_n_threads", "openmp_enabled"]


# Set once a kernel has been handed more than one thread (libgomp has then started its pool);
# copied into forked children, where it turns into _FORKED_AFTER_OPENMP.
_OPENMP_THREADS_USED = False
_FORKED_AFTER_OPENMP = False
_FORK_WARNED = False

FORK_MESSAGE = (
    "dpsco-core: this process was forked after its parent ran multithreaded OpenMP kernels; "
    "GNU OpenMP (libgomp) would hang in a multithreaded region here, so kernels run on one "
    "thread (same results, less speed). Use multiprocessing.get_context('spawn') or "
    "'forkserver', or call the kernels with n_threads=1 in the parent, to keep every thread."
)


def _after_fork_in_child() -> None:
    global _FORKED_AFTER_OPENMP, _FORK_WARNED
    if _OPENMP_THREADS_USED:
        _FORKED_AFTER_OPENMP = True
        _FORK_WARNED = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def forked_after_openmp() -> bool:
    """True in a process forked after OpenMP threads ran in its parent (kernels use 1 thread)."""
    return _FORKED_AFTER_OPENMP


def openmp_enabled() -> bool:
    """True when the compiled kernels were built with OpenMP."""
    return _kconfig.openmp_enabled()


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


#: Work threshold of the default thread count (issue 18): a kernel call given
#: ``n_threads=None`` that touches fewer than this many elements (margins, coordinates, stored
#: entries: n*p or nnz) runs on one thread. Measured: an element-wise pass over 200,000 doubles
#: takes 0.2 ms (squared loss) to 2 ms (logistic), and an OpenMP fork/join pays only on an idle
#: machine; with another process on the second core, each region waits for a descheduled
#: thread (20 ms instead of 0.1 ms at n = 20,433 with libgomp's spinning default). Kernels with
#: their own block structure keep their own thresholds (``show_config`` lists them). An
#: explicit ``n_threads`` is used as given. Results never depend on the thread count.
SERIAL_WORK = 200_000

#: Seconds a reading of the machine's runnable threads (``/proc/loadavg``) is reused.
LOAD_READING_TTL = 0.05
_LOAD_READING = [-math.inf, 1]


def _runnable_threads() -> int:
    """Threads of the whole machine that are running or waiting for a CPU, this one included
    (Linux: the fourth field of ``/proc/loadavg``, read at most every LOAD_READING_TTL s;
    elsewhere 1, i.e. no other load is seen)."""
    now = time.monotonic()
    if now - _LOAD_READING[0] > LOAD_READING_TTL:
        try:
            with open("/proc/loadavg", "rb") as fh:
                running = int(fh.read().split()[3].split(b"/")[0])
        except (OSError, ValueError, IndexError):
            running = 1
        _LOAD_READING[:] = [now, max(1, running)]
    return int(_LOAD_READING[1])


def _cpus_left_idle(n_cpus: int) -> int:
    """CPUs of ``n_cpus`` that other threads leave idle (at least 1): on a busy machine a
    parallel region waits for a thread that has no CPU (issue 18)."""
    return max(1, n_cpus - (_runnable_threads() - 1))


#: Largest n_threads accepted: kernels take a C int, and far beyond any core count a request
#: is a mistake (2**31 used to overflow into a raw OverflowError).
MAX_N_THREADS = 65536


def effective_n_threads(n_threads: int | None = None, *, work: int | None = None) -> int:
    """Resolve ``n_threads`` to the number of OpenMP threads a kernel will use.

    Parameters
    ----------
    n_threads : int or None, default=None
        None: ``omp_get_max_threads()`` (which honours ``OMP_NUM_THREADS``), capped by the
        usable CPUs when ``OMP_NUM_THREADS`` is not set, and 1 when ``work`` is below
        :data:`SERIAL_WORK`. An int >= 1: used as given (threads beyond the block count
        simply idle). Results never depend on it.
    work : int, optional
        Elements the kernel call touches (n*p, nnz or a vector length); only read when
        ``n_threads`` is None. Given, and without ``OMP_NUM_THREADS``, the count is also
        capped by the CPUs that other running threads leave idle (``/proc/loadavg`` on Linux,
        read at most every 50 ms): on a machine where other processes keep the cores busy, a
        second thread only waits for a CPU (issue 18).

    Returns
    -------
    int
        The thread count; always 1 in a build without OpenMP, and 1 (with a
        ``RuntimeWarning``) in a process forked after its parent ran multithreaded kernels,
        where libgomp would hang (module docstring).

    Raises
    ------
    TypeError
        If ``n_threads`` is not None or an integer.
    ValueError
        If ``n_threads`` is outside [1, MAX_N_THREADS].
    """
    from ._validation import check_int

    if n_threads is not None:
        n_threads = check_int(n_threads, "n_threads", low=1, high=MAX_N_THREADS)
    global _OPENMP_THREADS_USED, _FORK_WARNED
    if not _kconfig.openmp_enabled():
        return 1
    if n_threads is None and work is not None and work < SERIAL_WORK:
        return 1
    if n_threads is None:
        n_threads = _kconfig.omp_max_threads()
        if "OMP_NUM_THREADS" not in os.environ:
            n_threads = min(n_threads, _usable_cpus())
            if work is not None and n_threads > 1:
                n_threads = min(n_threads, _cpus_left_idle(n_threads))
        n_threads = max(1, n_threads)
    if n_threads > 1 and _FORKED_AFTER_OPENMP:
        if not _FORK_WARNED:
            _FORK_WARNED = True
            warnings.warn(FORK_MESSAGE, RuntimeWarning, stacklevel=2)
        return 1
    if n_threads > 1:
        _OPENMP_THREADS_USED = True
    return n_threads


def _kernel_thresholds() -> str:
    """The kernels' own serial thresholds, as show_config prints them."""
    from ._kernels import _prox, _tree
    from .solvers._row_source import MIN_PARALLEL_WORK
    return (f"\n                 (own thresholds: prox {_prox.PARALLEL_THRESHOLD:,} coordinates, "
            f"tree aggregation {_tree.PARALLEL_THRESHOLD:,},\n                 batch gradients "
            "65,536 row entries per group of blocks,\n                 Frank-Wolfe leaves "
            f"{MIN_PARALLEL_WORK:,} batch entries)")


def _cpu_has_avx2() -> bool | None:
    """Whether the CPU reports AVX2 (Linux ``/proc/cpuinfo``; None where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return "avx2" in line.split(":", 1)[1].split()
    except OSError:
        pass
    return None


def cd_simd_config() -> str:
    """The DP-CD kernel's inner-loop path in use and why (issue 18), as show_config prints it:
    ``"avx2"`` or ``"scalar"``, then the reason (the CPU, or the ``DPSCO_CD_SIMD`` override
    read when the kernel module was imported, or ``_cd.set_simd_path``). Both paths give
    bitwise the same results."""
    from ._kernels import _cd

    path = _cd.simd_path()
    env = os.environ.get("DPSCO_CD_SIMD")
    env_text = "unset" if env is None else repr(env)
    if path == "avx2":
        return f"avx2 (CPU has AVX2; DPSCO_CD_SIMD {env_text}, =scalar forces the scalar loops)"
    if env is not None and env.strip().lower() == "scalar":
        return "scalar (forced by DPSCO_CD_SIMD='scalar')"
    avx2 = _cpu_has_avx2()
    if avx2 is False:
        return f"scalar (no AVX2 on this CPU; DPSCO_CD_SIMD {env_text})"
    if avx2:
        return f"scalar (set by _cd.set_simd_path('scalar'); DPSCO_CD_SIMD {env_text})"
    return (f"scalar (set by _cd.set_simd_path, or the CPU lacks AVX2; DPSCO_CD_SIMD "
            f"{env_text})")


def show_config(file: TextIO | None = None) -> None:
    """Print version, OpenMP support, default thread count, compiler and flags.

    Parameters
    ----------
    file : file-like, optional
        Where to print (default ``sys.stdout``).
    """
    file = sys.stdout if file is None else file
    lines = [
        f"dpsco-core {__version__}",
        f"  python         {platform.python_version()} ({sys.executable})",
        f"  numpy          {np.__version__}",
        f"  platform       {_build_info.PLATFORM}",
        f"  openmp         {'yes' if openmp_enabled() else 'no (serial build)'}",
        f"  n_threads=None {effective_n_threads(None)} thread(s)"
        + (f" (OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']})"
           if "OMP_NUM_THREADS" in os.environ else ""),
        f"  serial below   {SERIAL_WORK:,} elements per kernel call (n_threads=None)"
        + _kernel_thresholds(),
        f"  wait policy    {_openmp_env.POLICY}",
        f"  BLAS threads   {_openmp_env.blas_note()}",
        f"  DP-CD SIMD     {cd_simd_config()}",
        "  busy machine   n_threads=None with a work size: at most the CPUs other running "
        "threads\n                 leave idle (/proc/loadavg on Linux; not when the environment "
        "sets the count)",
        f"  debug build    {'yes (bounds checks on, -O0 -g)' if _build_info.DEBUG else 'no'}",
        f"  compiler       {_build_info.COMPILER}",
        f"  compile flags  {' '.join(_build_info.EXTRA_COMPILE_ARGS)}",
        f"  link flags     {' '.join(_build_info.EXTRA_LINK_ARGS) or '(none)'}",
    ]
    if openmp_enabled():
        lines.append(
            "  fork           after multithreaded kernels, a fork()ed child (multiprocessing's "
            "default\n                 'fork' start method on Linux) runs kernels on 1 thread: "
            "libgomp would\n                 hang there. Use the 'spawn' or 'forkserver' start "
            "method for all threads."
            + ("\n                 (this process is such a child: 1 thread)"
               if _FORKED_AFTER_OPENMP else ""))
    print("\n".join(lines), file=file)
