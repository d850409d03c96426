# OpenMP shim: every kernel cimports omp functions from here, so that the same source compiles
# with OpenMP (setup.py found -fopenmp) and without it (serial fallback, one thread).

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define DPSCO_OPENMP_ENABLED 1
    #else
    #define DPSCO_OPENMP_ENABLED 0
    static int omp_get_max_threads(void) { return 1; }
    static int omp_get_thread_num(void) { return 0; }
    static int omp_get_num_procs(void) { return 1; }
    #endif
    """
    bint DPSCO_OPENMP_ENABLED
    int omp_get_max_threads() noexcept nogil
    int omp_get_thread_num() noexcept nogil
    int omp_get_num_procs() noexcept nogil
