"""Build configuration and thread-count resolution.

``n_threads`` convention (everywhere in dpsco-core): ``None`` means every core OpenMP reports,
capped by the CPUs this process may run on unless ``OMP_NUM_THREADS`` is set; an int >= 1 is
used as given. A build without OpenMP always runs one thread.
"""

import os
import platform
import sys

import numpy as np

from . import __version__
from ._kernels import _build_info, _config as _kconfig

__all__ = ["show_config", "effective_n_threads", "openmp_enabled"]


def openmp_enabled():
    """True when the compiled kernels were built with OpenMP."""
    return _kconfig.openmp_enabled()


def _usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


#: Largest n_threads accepted: kernels take a C int, and far beyond any core count a request
#: is a mistake (2**31 used to overflow into a raw OverflowError).
MAX_N_THREADS = 65536


def effective_n_threads(n_threads=None):
    """Resolve ``n_threads`` to the number of OpenMP threads a kernel will use.

    Parameters
    ----------
    n_threads : int or None, default=None
        None: ``omp_get_max_threads()`` (which honours ``OMP_NUM_THREADS``), capped by the
        usable CPUs when ``OMP_NUM_THREADS`` is not set. An int >= 1: used as given (threads
        beyond the block count simply idle). Results never depend on it.

    Returns
    -------
    int
        The thread count; always 1 in a build without OpenMP.

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
    if not _kconfig.openmp_enabled():
        return 1
    if n_threads is not None:
        return n_threads
    n = _kconfig.omp_max_threads()
    if "OMP_NUM_THREADS" not in os.environ:
        n = min(n, _usable_cpus())
    return max(1, n)


def show_config(file=None):
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
        f"  debug build    {'yes (bounds checks on, -O0 -g)' if _build_info.DEBUG else 'no'}",
        f"  compiler       {_build_info.COMPILER}",
        f"  compile flags  {' '.join(_build_info.EXTRA_COMPILE_ARGS)}",
        f"  link flags     {' '.join(_build_info.EXTRA_LINK_ARGS) or '(none)'}",
    ]
    print("\n".join(lines), file=file)
