# cython: language_level=3
"""What the compiled layer was built with: OpenMP or not, and the thread counts it sees.

Design: the only kernel module without a hot loop. ``dpsco_core._config`` reads it to resolve
``n_threads=None`` and to answer ``show_config()``.
"""

from _openmp_helpers cimport DPSCO_OPENMP_ENABLED, omp_get_max_threads, omp_get_num_procs


def openmp_enabled():
    """True when the kernels were compiled with OpenMP."""
    return bool(DPSCO_OPENMP_ENABLED)


def omp_max_threads():
    """``omp_get_max_threads()``: honours OMP_NUM_THREADS; 1 in a serial build."""
    return omp_get_max_threads()


def omp_num_procs():
    """``omp_get_num_procs()``: processors available to the program; 1 in a serial build."""
    return omp_get_num_procs()
