/* Ctrl-C (and any Python signal handler) inside long nogil kernels, and dynamic dispatch of
 * long independent items with a master thread that keeps listening for signals.
 *
 * Why: a kernel that runs for seconds without the GIL never lets CPython run its signal
 * handlers (they run only in the main thread, between bytecodes), so Ctrl-C waited for the
 * kernel to return (5 to 21 s, issue 16). Kernels call dpsco_interrupted() between units of
 * work; on the thread that may run handlers it re-acquires the GIL at most every
 * DPSCO_CHECK_SECONDS and calls PyErr_CheckSignals(). If a handler raised, the exception stays
 * set, `stop` goes to 1, every thread sees it at its next check and winds down, and the Python
 * entry point re-raises (dpsco_raise_if_interrupted in _interrupt.pxd). The checks only read
 * a flag and the clock: they never change what a kernel computes, so results stay bitwise the
 * same for any thread count and any check interval.
 *
 * OpenMP regions cannot be left early and only the master thread (thread 0 of the team, the
 * caller) can run Python handlers, so a master with no work left must not wait silently at the
 * region's barrier: dpsco_next_item hands out items (a critical section; items are long) and
 * dpsco_master_wait polls signals while the other threads finish theirs.
 */
#ifndef DPSCO_INTERRUPT_H
#define DPSCO_INTERRUPT_H

#include <Python.h>
#ifdef _OPENMP
#include <omp.h>
#define DPSCO_THREAD_NUM() omp_get_thread_num()
#else
#define DPSCO_THREAD_NUM() 0
#endif
#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif

/* ~50 ms between checks: a Ctrl-C lands well within a second, and one GIL round trip per
 * 50 ms costs nothing measurable even with other Python threads running. */
#define DPSCO_CHECK_SECONDS 0.05
/* Scalar operations between two reads of the clock (tens of microseconds of work). */
#define DPSCO_POLL_WORK 65536

typedef struct {
    volatile int stop;          /* a signal handler raised: every thread winds down */
    double next_check;          /* monotonic time of the master's next signal check */
    Py_ssize_t next_item;       /* dynamic dispatch counter (dpsco_next_item) */
    volatile Py_ssize_t n_done; /* items finished (dpsco_master_wait) */
} dpsco_interrupt;

static double dpsco_monotonic(void) {
#ifdef _WIN32
    return (double) GetTickCount64() * 1e-3;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
#endif
}

static void dpsco_nap(void) {
#ifdef _WIN32
    Sleep(1);
#else
    struct timespec ts = {0, 500000};   /* 0.5 ms: the cost of a join, not of a check */
    nanosleep(&ts, NULL);
#endif
}

static void dpsco_interrupt_init(dpsco_interrupt *it) {
    it->stop = 0;
    it->next_check = dpsco_monotonic() + DPSCO_CHECK_SECONDS;
    it->next_item = 0;
    it->n_done = 0;
}

/* 1 if the kernel must stop. Cheap on every thread but the master, which looks at the clock
 * and, every DPSCO_CHECK_SECONDS, runs the pending Python signal handlers under the GIL. */
static int dpsco_interrupted(dpsco_interrupt *it) {
    double now;
    PyGILState_STATE state;
    if (it->stop)
        return 1;
    if (DPSCO_THREAD_NUM() != 0)
        return 0;
    now = dpsco_monotonic();
    if (now < it->next_check)
        return 0;
    state = PyGILState_Ensure();
    /* Handlers run only in the main thread; elsewhere this returns 0 at once. */
    if (PyErr_CheckSignals() != 0)
        it->stop = 1;
    PyGILState_Release(state);
    it->next_check = dpsco_monotonic() + DPSCO_CHECK_SECONDS;
    return it->stop;
}

/* Work-counted form for hot loops: reads the clock only every DPSCO_POLL_WORK operations. */
static int dpsco_poll(dpsco_interrupt *it, Py_ssize_t *budget, Py_ssize_t work) {
    *budget -= work;
    if (*budget > 0)
        return it->stop;
    *budget = DPSCO_POLL_WORK;
    return dpsco_interrupted(it);
}

/* Next item index for the calling thread (>= n_items: none left). */
static Py_ssize_t dpsco_next_item(dpsco_interrupt *it) {
    Py_ssize_t i;
#ifdef _OPENMP
#pragma omp critical(dpsco_next_item)
#endif
    {
        i = it->next_item;
        it->next_item = i + 1;
    }
    return i;
}

static void dpsco_item_done(dpsco_interrupt *it) {
#ifdef _OPENMP
#pragma omp critical(dpsco_item_done)
#endif
    {
        it->n_done = it->n_done + 1;
    }
}

/* Master only, once it has no item left: keep listening for signals until the other threads
 * have finished (or, once stopped, abandoned) theirs. */
static void dpsco_master_wait(dpsco_interrupt *it, Py_ssize_t n_items) {
    Py_ssize_t done;
    if (DPSCO_THREAD_NUM() != 0)
        return;
    for (;;) {
#ifdef _OPENMP
#pragma omp critical(dpsco_item_done)
#endif
        {
            done = it->n_done;
        }
        if (done >= n_items)
            return;
        dpsco_interrupted(it);
        dpsco_nap();
    }
}

#endif
