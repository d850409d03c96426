# cython: language_level=3
"""Per-sample losses over arrays of margins: values, derivatives and second derivatives in z.

Design
- The per-sample formulas are the ``cdef inline`` functions of ``_loss.pxd`` (``loss_value``,
  ``loss_deriv``, ``loss_deriv2``), shared with every other kernel; this module only loops
  over them. Conventions and subgradient choices are stated there (note 002, section 3.6).
- Element-wise: ``out[i] = f(kind, z[i], y[i], param)``. A static ``prange`` over i; every
  element is computed by the same code whatever thread runs it, so the output is bitwise the
  same for any ``n_threads``. No reduction and no randomness.
- Labels are validated and mapped to {-1, +1} in Python (``dpsco_core.losses``); the kernel
  assumes valid input. Twin: ``dpsco_core.reference.loss``.
"""

from cython.parallel cimport prange

# Explicit cimport: the extension is named dpsco_core._kernels._loss, so Cython does not pair
# it with src_cython/_loss.pxd automatically; other kernels cimport the same declarations.
from _loss cimport (LOSS_ABSOLUTE, LOSS_HALF_SQUARED, LOSS_HINGE, LOSS_HUBER, LOSS_LOGISTIC,
                    LOSS_SQUARED, loss_deriv, loss_deriv2, loss_value)

LOSS_KINDS = {
    "squared": LOSS_SQUARED,
    "half_squared": LOSS_HALF_SQUARED,
    "logistic": LOSS_LOGISTIC,
    "huber": LOSS_HUBER,
    "hinge": LOSS_HINGE,
    "absolute": LOSS_ABSOLUTE,
}


cdef int _check(Py_ssize_t n, Py_ssize_t ny, Py_ssize_t nout, int kind) except -1:
    if ny != n or nout != n:
        raise ValueError(f"z, y and the output must have the same length; got {n}, {ny}, "
                         f"{nout}")
    if kind < LOSS_SQUARED or kind > LOSS_ABSOLUTE:
        raise ValueError(f"unknown loss kind {kind}")
    return 0


def loss_values(const double[::1] z,       # IN  (n,) margins
                const double[::1] y,       # IN  (n,) labels or targets
                int kind,
                double param,
                double[::1] value_out,     # OUT (n,)
                int n_threads):
    """Write ``l(z[i], y[i])`` into ``value_out``."""
    cdef Py_ssize_t i, n = z.shape[0]
    _check(n, y.shape[0], value_out.shape[0], kind)
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads):
        value_out[i] = loss_value(kind, z[i], y[i], param)


def loss_derivs(const double[::1] z,       # IN  (n,)
                const double[::1] y,       # IN  (n,)
                int kind,
                double param,
                double[::1] deriv_out,     # OUT (n,)
                int n_threads):
    """Write ``dl/dz (z[i], y[i])`` into ``deriv_out``."""
    cdef Py_ssize_t i, n = z.shape[0]
    _check(n, y.shape[0], deriv_out.shape[0], kind)
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads):
        deriv_out[i] = loss_deriv(kind, z[i], y[i], param)


def loss_derivs2(const double[::1] z,      # IN  (n,)
                 const double[::1] y,      # IN  (n,)
                 int kind,
                 double param,
                 double[::1] deriv2_out,   # OUT (n,)
                 int n_threads):
    """Write ``d2l/dz2 (z[i], y[i])`` into ``deriv2_out``."""
    cdef Py_ssize_t i, n = z.shape[0]
    _check(n, y.shape[0], deriv2_out.shape[0], kind)
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads):
        deriv2_out[i] = loss_deriv2(kind, z[i], y[i], param)


def loss_values_derivs(const double[::1] z,       # IN  (n,)
                       const double[::1] y,       # IN  (n,)
                       int kind,
                       double param,
                       double[::1] value_out,     # OUT (n,)
                       double[::1] deriv_out,     # OUT (n,)
                       int n_threads):
    """Write the values and the derivatives in one pass (one read of z and y)."""
    cdef Py_ssize_t i, n = z.shape[0]
    _check(n, y.shape[0], value_out.shape[0], kind)
    _check(n, y.shape[0], deriv_out.shape[0], kind)
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads):
        value_out[i] = loss_value(kind, z[i], y[i], param)
        deriv_out[i] = loss_deriv(kind, z[i], y[i], param)
