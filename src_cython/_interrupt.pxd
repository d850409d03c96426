# Signal checks shared by every long-running kernel; the why is in _interrupt.h.
#
# Use: `cdef Interrupt it; interrupt_init(&it)` with the GIL; in nogil loops
# `if poll(&it, &budget, work): break` (or `interrupted(&it)` between coarse steps); after the
# nogil block, `raise_if_interrupted(&it)` before anything is copied to caller-visible output.

from cpython.exc cimport PyErr_Occurred

cdef extern from "_interrupt.h" nogil:
    ctypedef struct Interrupt "dpsco_interrupt":
        int stop
    void interrupt_init "dpsco_interrupt_init"(Interrupt *it)
    bint interrupted "dpsco_interrupted"(Interrupt *it)
    bint poll "dpsco_poll"(Interrupt *it, Py_ssize_t *budget, Py_ssize_t work)
    Py_ssize_t next_item "dpsco_next_item"(Interrupt *it)
    void item_done "dpsco_item_done"(Interrupt *it)
    void master_wait "dpsco_master_wait"(Interrupt *it, Py_ssize_t n_items)
    enum:
        POLL_WORK "DPSCO_POLL_WORK"


cdef inline int raise_if_interrupted(Interrupt *it) except -1:
    """Re-raise what the signal handler raised (KeyboardInterrupt for Ctrl-C)."""
    if it.stop:
        if PyErr_Occurred() != NULL:
            return -1
        raise KeyboardInterrupt
    return 0
