"""The OpenMP wait policy of the kernels, chosen before the OpenMP runtime starts (issue 18).

Why: GNU libgomp's default lets a thread that finished its share of a parallel region spin for
about 300,000 iterations (milliseconds) before sleeping. On a machine where another process keeps
a core busy, the spinning threads and the one that still has work take turns on the cores, and a
~1 ms kernel took 16-21x longer with 2 threads than with 1 (issue 18's measurements; with
``OMP_WAIT_POLICY=passive``: 0.98-1.08x). A library is often embedded in a busy process or
machine, so dpsco-core asks for the passive policy (idle threads sleep at once) unless the user
chose a policy.

How: the runtime reads its environment once, when it is loaded (libgomp) or first used (LLVM
libomp). :func:`apply` runs from ``dpsco_core/__init__.py``, before any kernel module can load:
if neither ``OMP_WAIT_POLICY`` nor ``GOMP_SPINCOUNT`` is set and no OpenMP runtime is loaded yet,
it sets ``OMP_WAIT_POLICY=passive``, loads the smallest kernel module (which loads and
initialises the runtime), and restores the environment, so that child processes and other
libraries see the user's environment unchanged. A policy the user set is always kept.
:data:`POLICY` says what is in effect; ``show_config()`` prints it.

Pure Python and standard library only: it runs before numpy is imported.
"""

import contextlib
import importlib
import os
import sys

__all__ = ["apply", "blas_note", "one_blas_thread", "POLICY", "WAIT_POLICY_DEFAULT"]

#: The wait policy dpsco-core asks for when the user set none.
WAIT_POLICY_DEFAULT = "passive"

#: What is in effect, for show_config(); set by apply().
POLICY = "not set (dpsco_core not initialised)"

_USER_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def _runtime_already_loaded():
    """True when a shared OpenMP runtime is already mapped in this process (Linux; else False).

    Only the unversioned system names count (``libgomp.so.1``, ``libomp.so``, ``libiomp5.so``):
    the copies vendored in wheels (``libgomp-<hash>.so.1``, scikit-learn's and torch's) are
    separate runtimes with their own settings, and do not start ours.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        with open("/proc/self/maps") as fh:
            names = {os.path.basename(line.split()[-1]) for line in fh if "omp" in line}
    except OSError:
        return False
    return any(name.startswith(("libgomp.so", "libomp.so", "libiomp5.so")) for name in names)


def apply():
    """Choose the wait policy (module docstring) and record it in :data:`POLICY`."""
    global POLICY
    user = {name: os.environ[name] for name in _USER_VARIABLES if name in os.environ}
    if user:
        POLICY = ", ".join(f"{k}={v}" for k, v in user.items()) + " (the user's)"
        return
    if _runtime_already_loaded():
        # Too late: another library started the runtime with its default (spinning) policy.
        POLICY = ("the runtime's default (OpenMP was loaded before dpsco_core; set\n"
                  "                 OMP_WAIT_POLICY=passive not to spin on a busy machine)")
        return
    os.environ["OMP_WAIT_POLICY"] = WAIT_POLICY_DEFAULT
    try:
        from ._kernels import _config as kconfig
        kconfig.omp_max_threads()      # LLVM libomp reads its environment at first use
    except ImportError:                # kernels not built: nothing to configure
        POLICY = "not applicable (compiled kernels not found)"
        return
    finally:
        del os.environ["OMP_WAIT_POLICY"]
    POLICY = (f"{WAIT_POLICY_DEFAULT} (dpsco-core's default; OMP_WAIT_POLICY or "
              "GOMP_SPINCOUNT override it)" if kconfig.openmp_enabled()
              else "not applicable (serial build)")


#: The user-side setting that avoids OpenBLAS's busy-wait slowdown (:func:`blas_note`).
BLAS_ADVICE = ("OPENBLAS_NUM_THREADS=1 (before numpy is imported) or\n"
               "                 threadpoolctl.threadpool_limits(1, user_api='blas') around "
               "level-1-heavy code")


def _openblas_libraries():
    """File names of the OpenBLAS libraries mapped in this process (Linux; else [])."""
    if not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/maps") as fh:
            names = {os.path.basename(line.split()[-1]) for line in fh if "openblas" in line}
    except OSError:
        return []
    return sorted(name for name in names if ".so" in name)


def blas_note():
    """The OpenBLAS thread pools in this process and the busy-machine advice, for show_config().

    dpsco-core's kernels do not use BLAS, but users call numpy, scipy and scikit-learn around
    them. OpenBLAS (vendored in numpy's and scipy's wheels, one pthread pool each, ignoring
    ``OMP_WAIT_POLICY``) runs level-1 calls on more than 10,000 elements on its pool; the caller
    and the workers wait by spinning on ``nop`` without yielding. When a worker that went to
    sleep (about 0.1 s without BLAS work, for example during a dpsco-core kernel) is woken onto
    its caller's CPU while another process keeps the other CPU busy, the two spinning threads
    share one CPU and every call costs scheduler time slices: scikit-learn's ``Lasso`` on
    California took 0.1-23 s instead of 5-40 ms on the 2-core test host. One BLAS thread
    removes it (and was faster there for such calls anyway).
    """
    libs = _openblas_libraries()
    if not libs:
        return "no OpenBLAS loaded"
    chosen = [f"{k}={os.environ[k]}" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
              if k in os.environ]
    counts = []
    try:
        # optional (scikit-learn's dependency, not ours); importlib: no stubs for mypy
        info_of = importlib.import_module("threadpoolctl").threadpool_info
        counts = sorted({info["num_threads"] for info in info_of()
                         if info.get("internal_api") == "openblas"})
    except Exception:              # optional; any failure only drops the count
        pass
    threads = (", " + "/".join(map(str, counts)) + " thread(s)") if counts else ""
    head = f"OpenBLAS x{len(libs)}{threads}" + (f" ({', '.join(chosen)})" if chosen else "")
    env_one = os.environ.get("OPENBLAS_NUM_THREADS", os.environ.get("OMP_NUM_THREADS")) == "1"
    if counts == [1] or (not counts and env_one):
        return head + "; one thread: no busy-waiting pool"
    return (f"{head}; its threads busy-wait: on a busy machine\n"
            "                 level-1 BLAS loops (scikit-learn's coordinate descent) can run "
            "100x slower.\n                 Avoid with " + BLAS_ADVICE)


#: threadpoolctl's ThreadpoolController, made at the first one_blas_thread(); False without it.
_BLAS_CONTROLLER = None


def one_blas_thread():
    """Context manager: the BLAS libraries loaded so far run on one thread inside it.

    For dpsco-core's own BLAS loops (:func:`dpsco_core.optimum.solve`): many short BLAS calls
    are where OpenBLAS's busy-waiting pool costs scheduler time slices on a busy machine
    (:func:`blas_note`), and one thread makes their results independent of the BLAS thread
    count. Uses threadpoolctl when it is installed (scikit-learn's dependency, not
    dpsco-core's); without it, does nothing. The limit is process-wide while it lasts (other
    threads' BLAS calls run on one thread too) and the previous counts are restored on exit.
    The controller is made once, at the first call (about 2 ms; 0.05 ms per use after that):
    libraries loaded later are not limited.
    """
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        try:
            _BLAS_CONTROLLER = importlib.import_module("threadpoolctl").ThreadpoolController()
        except Exception:          # not installed (or unusable): nothing to limit with
            _BLAS_CONTROLLER = False
    if _BLAS_CONTROLLER is False:
        return contextlib.nullcontext()
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
