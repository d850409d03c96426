r"""High-precision non-private optimum :math:`F^* = \min_w F(w)`: the reference of every relative error.

Every relative error that dpsco-core reports, :math:`(F(w) - F^*) / F^*`, is measured against
:func:`solve`. It is deterministic and certifies what it returns:

=====================================  ===================================  ====================
problem                                method                               certificate (default)
=====================================  ===================================  ====================
squared / half squared, L1, elastic    exact coordinate descent on the      duality gap
net, L2                                Gram matrix with working sets, then  :math:`\le 10^{-12}
                                       an exact solve on the support with   F(w)`
                                       iterative refinement
squared / half squared, no penalty     the same (exact solve, refinement)   gradient norm
squared / half squared, box            coordinate descent                   gradient mapping
logistic / Huber, L2 or no penalty     Newton with backtracking (dense      gradient norm
                                       Hessian; trust-region Newton-CG
                                       beyond 4000 features)
logistic / Huber, L1, elastic net,     proximal Newton (subproblems by the  gradient mapping
box                                    coordinate descent above); FISTA
                                       beyond 4000 features
=====================================  ===================================  ====================

Tolerances. ``tol`` is relative. For the duality gap: stop when
:math:`P(w) - D(\theta) \le \mathrm{tol} \cdot F(w)` (default :math:`10^{-12}`), with a floor of
:math:`64\,\varepsilon_{\mathrm{mach}} F(0)`, the floating-point resolution of the objective.
For the gradient norm :math:`\|\nabla F(w)\|_2` and the gradient mapping
:math:`\|G(w)\|_2 = \beta \|w - \mathrm{prox}_{\psi/\beta}(w - \nabla f(w)/\beta)\|_2`: stop
when the norm is at most :math:`\mathrm{tol} \cdot \max(1, \|G(0)\|_2)` (default
:math:`10^{-10}`), which is scale-aware. The hinge and absolute losses are not handled yet.

Duality gap (squared losses, :math:`h(z) = \frac{c}{n}\|z - y\|^2`, :math:`c \in \{1, 1/2\}`,
:math:`\psi = \lambda_1\|w\|_1 + \frac{\lambda_2}{2}\|w\|^2`):
:math:`D(\theta) = -\theta^\top y - \frac{n}{4c}\|\theta\|^2 - \psi^*(-X^\top\theta)` at
:math:`\theta = \frac{2c}{n}(Xw - y)`, with :math:`\psi^*(v) = \sum_j (|v_j| - \lambda_1)_+^2 /
(2\lambda_2)`; when :math:`\lambda_2 = 0`, :math:`\theta` is rescaled so that
:math:`\|X^\top\theta\|_\infty \le \lambda_1` (as in scikit-learn's ``enet_coordinate_descent``).
"""

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse as sp
from scipy.linalg.blas import daxpy

from ._openmp_env import one_blas_thread
from ._validation import check_int, check_scalar
from .exceptions import DPSCOWarning, external_stacklevel
from .losses import LOSS_HALF_SQUARED, LOSS_HUBER, LOSS_LOGISTIC, LOSS_SQUARED
from .penalties import (PENALTY_BOX, PENALTY_ELASTIC_NET, PENALTY_L1, PENALTY_L2,
                        PENALTY_NONE)

__all__ = ["Optimum", "solve", "ConvergenceWarning", "DEFAULT_GAP_TOL", "DEFAULT_GRAD_TOL"]

DEFAULT_GAP_TOL = 1e-12
DEFAULT_GRAD_TOL = 1e-10

# Beyond this many features the p x p Gram / Hessian is not formed (128 MB at 4000).
_GRAM_MAX_FEATURES = 4000

# Longest vector a per-coordinate level-1 product hands to BLAS. OpenBLAS (numpy's and scipy's
# wheels) runs dot and axpy on more than 10,000 elements on its thread pool, whose caller and
# workers busy-wait; on a busy machine a worker woken onto its caller's CPU turns each such
# call into one or two scheduler time slices (up to ~10 ms instead of ~10 us: tens of seconds
# for a coordinate-descent loop). Longer products use numpy's einsum, which never calls BLAS.
# _cd_quadratic's daxpy on rows of length p <= _GRAM_MAX_FEATURES stays below the limit.
_BLAS_SERIAL_MAX = 8192
_EPS = np.finfo(np.float64).eps


class ConvergenceWarning(DPSCOWarning):
    """The optimum solver stopped at its iteration limit before meeting its tolerance."""


@dataclass(frozen=True)
class Optimum:
    """A certified minimizer of a :class:`dpsco_core.Problem`.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        The minimizer :math:`w^*` (read-only).
    objective : float
        :math:`F^* = F(w^*)`.
    certificate : float
        The certificate's value at ``coef``: duality gap, gradient norm or gradient-mapping
        norm (see ``certificate_kind``).
    certificate_kind : str
        "duality_gap", "gradient_norm" or "gradient_mapping_norm".
    tol : float
        The relative tolerance requested (see the module docstring).
    threshold : float
        The absolute bound the certificate was compared with.
    n_iter : int
        Coordinate-descent sweeps, Newton or FISTA iterations.
    method : str
        The algorithm used.
    converged : bool
        Whether ``certificate <= threshold``.
    """

    coef: np.ndarray
    objective: float
    certificate: float
    certificate_kind: str
    tol: float
    threshold: float
    n_iter: int
    method: str
    converged: bool


def solve(problem, tol=None, max_iter=None):
    """Minimize ``problem``'s objective to high precision, without privacy.

    Parameters
    ----------
    problem : Problem
        The problem.
    tol : float or None, default=None
        Relative tolerance of the certificate: 1e-12 for duality gaps, 1e-10 for gradient
        (mapping) norms when None. See the module docstring.
    max_iter : int or None, default=None
        Iteration limit (sweeps, Newton or FISTA iterations); a method-specific default when
        None.

    Returns
    -------
    Optimum

    Raises
    ------
    NotImplementedError
        For the hinge and absolute losses.

    Warns
    -----
    ConvergenceWarning
        If the iteration limit is reached first (for example logistic regression without a
        penalty on separable data, which has no minimizer).

    Notes
    -----
    BLAS runs on one thread during the solve when threadpoolctl is installed (restored after):
    see :func:`dpsco_core._openmp_env.one_blas_thread`. The per-coordinate products of the
    column coordinate descent never use a BLAS thread pool (``_dot``).
    """
    if tol is not None:
        tol = check_scalar(tol, "tol", low=0.0)
    if max_iter is not None:
        max_iter = check_int(max_iter, "max_iter", low=1)
    loss_kind = problem.loss.kind
    pen_kind = problem.penalty.kind
    p = problem.n_features
    # One BLAS thread (threadpoolctl, when installed): hundreds of short BLAS calls, each of
    # which OpenBLAS's busy-waiting pool can turn into scheduler time slices on a busy
    # machine (Lasso on California: 150 ms instead of 10 ms after a kernel), and results
    # independent of the BLAS thread count.
    with one_blas_thread():
        if loss_kind in (LOSS_SQUARED, LOSS_HALF_SQUARED):
            if p <= _GRAM_MAX_FEATURES:
                result = _solve_squared_gram(problem, tol, max_iter)
            else:
                result = _solve_squared_columns(problem, tol, max_iter)
        elif loss_kind in (LOSS_LOGISTIC, LOSS_HUBER):
            if pen_kind in (PENALTY_NONE, PENALTY_L2):
                if p <= _GRAM_MAX_FEATURES:
                    result = _solve_newton(problem, tol, max_iter)
                else:
                    result = _solve_trust_ncg(problem, tol, max_iter)
            elif p <= _GRAM_MAX_FEATURES:
                result = _solve_prox_newton(problem, tol, max_iter)
            else:
                result = _solve_fista(problem, tol, max_iter)
        else:
            raise NotImplementedError(f"no high-precision solver for the {problem.loss!r} loss "
                                      "yet (hinge and absolute losses are non-smooth).")
    if not result.converged:
        warnings.warn(f"{result.method} stopped after {result.n_iter} iterations with "
                      f"{result.certificate_kind} {result.certificate:.3e} > "
                      f"{result.threshold:.3e}; F* may be inaccurate.", ConvergenceWarning,
                      stacklevel=external_stacklevel())
    return result


# ------------------------------------------------------------------------ shared pieces
def _l1_l2(penalty):
    """(lambda_1, lambda_2) of psi = l1 ||w||_1 + (l2/2) ||w||^2, or None for the box."""
    if penalty.kind == PENALTY_NONE:
        return 0.0, 0.0
    if penalty.kind == PENALTY_L1:
        return penalty.lam, 0.0
    if penalty.kind == PENALTY_L2:
        return 0.0, penalty.lam
    if penalty.kind == PENALTY_ELASTIC_NET:
        return penalty.l1, penalty.l2
    return None


def _finish(problem, w, certificate, kind, tol, threshold, n_iter, method):
    w = np.array(w, dtype=np.float64)
    w.flags.writeable = False
    return Optimum(coef=w, objective=problem.objective(w), certificate=float(certificate),
                   certificate_kind=kind, tol=tol, threshold=float(threshold),
                   n_iter=int(n_iter), method=method,
                   converged=bool(certificate <= threshold))


def _smooth_grad(problem, w):
    """(f(w), grad f(w), loss second derivatives) of the loss part."""
    z = problem._margins(w)
    v = problem.loss._value(z, problem.y)
    d = problem.loss._deriv(z, problem.y)
    g = np.asarray(problem.X.T @ d).ravel() / problem.n_samples
    return float(np.mean(v)), g, z


def _hessian(problem, z):
    """X^T diag(l''(z)) X / n as a dense (p, p) array."""
    d2 = problem.loss._deriv2(z, problem.y)
    X = problem.X
    if problem.is_sparse:
        H = (X.T @ sp.diags(d2) @ X).toarray()
    else:
        H = X.T @ (X * d2[:, None])
    return H / problem.n_samples


def _gradient_mapping(problem, w, grad, beta):
    """beta (w - prox_{psi/beta}(w - grad/beta)): zero exactly at a minimizer."""
    step = 1.0 / beta
    return (w - problem.penalty.prox(w - step * grad, step)) / step


def _beta(problem):
    beta = problem.smoothness() + problem.penalty.strong_convexity
    return beta if beta > 0 else 1.0


def _solve_linear(M, rhs):
    """Solve the symmetric PSD system M x = rhs (least squares if singular)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        try:
            return scipy.linalg.solve(M, rhs, assume_a="pos")
        except (np.linalg.LinAlgError, ValueError):
            return scipy.linalg.lstsq(M, rhs)[0]


def _dot(a, b):
    """a . b (1-d float64) on the calling thread: never on a BLAS thread pool.

    The same value whatever the BLAS thread count (a threaded dot sums in another order), and
    no busy-waiting BLAS workers in a per-coordinate loop (see ``_BLAS_SERIAL_MAX``).
    """
    if a.shape[0] <= _BLAS_SERIAL_MAX:
        return float(a @ b)
    return float(np.einsum("i,i->", a, b, optimize=False))


# ------------------------------------------------------------------------ quadratic CD
def _coordinate_update(a, wj, gj, l1l2, box):
    """Exact minimizer in t of (a/2)(t - wj)^2 + gj (t - wj) + psi_j(t)."""
    if a <= 0.0:                       # an all-zero column: psi alone decides (0, or clipped)
        return min(max(0.0, box[0]), box[1]) if box is not None else 0.0
    if box is not None:
        return min(max(wj - gj / a, box[0]), box[1])
    l1, l2 = l1l2
    u = a * wj - gj
    return math.copysign(max(abs(u) - l1, 0.0), u) / (a + l2)


def _cd_quadratic(A, b, penalty, w, max_sweeps, step_tol=1e-15):
    """Cyclic exact coordinate descent on q(w) = w^T A w / 2 - b^T w + psi(w).

    A full sweep, then sweeps over the working set (non-zero, or strictly inside the box)
    until the largest step is below ``step_tol * max|w|``; repeated until a full sweep moves
    nothing. The gradient g = A w - b is updated in place (BLAS axpy on a row of A, numpy
    beyond ``_BLAS_SERIAL_MAX`` rows).
    Returns (w, sweeps).
    """
    A = np.ascontiguousarray(A)
    w = np.array(w, dtype=np.float64)
    g = A @ w - b
    diag = np.diag(A).copy()
    l1l2 = _l1_l2(penalty)
    box = penalty.params if l1l2 is None else None
    sweeps = 0
    blas_axpy = b.shape[0] <= _BLAS_SERIAL_MAX      # else numpy: no busy-waiting BLAS pool

    def sweep(coords):
        nonlocal g
        largest = 0.0
        for j in coords:
            new = _coordinate_update(diag[j], w[j], g[j], l1l2, box)
            delta = new - w[j]
            if delta != 0.0:
                w[j] = new
                if blas_axpy:                     # g += delta * A[:, j] (A symmetric)
                    g = daxpy(A[j], g, a=delta)
                else:
                    g += delta * A[j]
                largest = max(largest, abs(delta))
        return largest

    all_coords = range(len(b))
    while sweeps < max_sweeps:
        largest = sweep(all_coords)
        sweeps += 1
        scale = max(float(np.max(np.abs(w))), np.finfo(np.float64).tiny)
        if largest <= step_tol * scale:
            break
        if box is None:
            work = np.flatnonzero(w)
        else:
            work = np.flatnonzero((w > box[0]) & (w < box[1]))
        while sweeps < max_sweeps and work.size:
            largest = sweep(work)
            sweeps += 1
            if largest <= step_tol * max(float(np.max(np.abs(w))), 1e-300):
                break
    return w, sweeps


def _polish(A, b, l1l2, w):
    """Exact minimizer of q on w's support and signs, if it satisfies the KKT conditions.

    Solves (A_SS + l2 I) x = b_S - l1 sign(w_S) (every coordinate when l1 = 0). Returns the
    full vector, or None when the signs change or a coordinate off S violates |g_j| <= l1.
    """
    l1, l2 = l1l2
    p = b.shape[0]
    support = np.flatnonzero(w) if l1 > 0 else np.arange(p)
    signs = np.sign(w[support])
    new = np.zeros(p)
    if support.size:
        M = A[np.ix_(support, support)] + l2 * np.eye(support.size)
        new[support] = _solve_linear(M, b[support] - l1 * signs)
        if l1 > 0 and np.any(np.sign(new[support]) != signs):
            return None
    if l1 > 0:
        g = A @ new - b
        off = np.ones(p, dtype=bool)
        off[support] = False
        if np.any(np.abs(g[off]) > l1 * (1.0 + 1e-9)):
            return None
    return new


# ------------------------------------------------------------------------ squared losses
def _squared_scale(problem):
    """c of f(w) = (c/n) ||Xw - y||^2: 1 for the DP-CD convention, 1/2 for half squared."""
    return 1.0 if problem.loss.kind == LOSS_SQUARED else 0.5


def _squared_certificate(problem, w, tol, f0):
    """(certificate, threshold, kind) for the squared losses at w."""
    c = _squared_scale(problem)
    n = problem.n_samples
    l1l2 = _l1_l2(problem.penalty)
    r = problem._margins(w) - problem.y
    theta = (2.0 * c / n) * r
    v = np.asarray(problem.X.T @ theta).ravel()           # gradient of the smooth part
    if l1l2 is None or l1l2 == (0.0, 0.0):
        if l1l2 is None:
            G = _gradient_mapping(problem, w, v, _beta(problem))
            G0 = _gradient_mapping(problem, np.zeros_like(w),
                                   np.asarray(problem.X.T @ (-(2.0 * c / n) * problem.y)).ravel(),
                                   _beta(problem))
            kind = "gradient_mapping_norm"
        else:
            G = v
            G0 = np.asarray(problem.X.T @ problem.y).ravel() * (2.0 * c / n)
            kind = "gradient_norm"
        tol = DEFAULT_GRAD_TOL if tol is None else tol
        return float(np.linalg.norm(G)), tol * max(1.0, float(np.linalg.norm(G0))), kind, tol
    l1, l2 = l1l2
    primal = (c / n) * float(r @ r) + problem.penalty.value(w)
    if l2 > 0:
        conj = float(np.sum(np.maximum(np.abs(v) - l1, 0.0) ** 2)) / (2.0 * l2)
    else:
        vmax = float(np.max(np.abs(v)))
        if vmax > l1:
            theta = theta * (l1 / vmax)
        conj = 0.0
    dual = -float(theta @ problem.y) - (n / (4.0 * c)) * float(theta @ theta) - conj
    tol = DEFAULT_GAP_TOL if tol is None else tol
    return primal - dual, max(tol * primal, 64.0 * _EPS * f0), "duality_gap", tol


def _refine(problem, w, l1l2, A):
    """Two steps of iterative refinement of the support solve, with the residual from X."""
    l1, l2 = l1l2
    support = np.flatnonzero(w) if l1 > 0 else np.arange(w.size)
    if not support.size:
        return w
    c = _squared_scale(problem)
    M = A[np.ix_(support, support)] + l2 * np.eye(support.size)
    signs = np.sign(w[support])
    for _ in range(2):
        r = problem._margins(w) - problem.y
        grad = (2.0 * c / problem.n_samples) * np.asarray(problem.X.T @ r).ravel()
        grad = grad[support] + l1 * signs + l2 * w[support]
        w = w.copy()
        w[support] -= _solve_linear(M, grad)
    return w


def _solve_squared_gram(problem, tol, max_iter):
    c = _squared_scale(problem)
    n, X, y = problem.n_samples, problem.X, problem.y
    G = X.T @ X
    G = G.toarray() if sp.issparse(G) else np.asarray(G)
    A = (2.0 * c / n) * G
    b = (2.0 * c / n) * np.asarray(X.T @ y).ravel()
    l1l2 = _l1_l2(problem.penalty)
    f0 = problem.objective(np.zeros(problem.n_features))
    max_sweeps = 100_000 if max_iter is None else max_iter
    w = np.zeros(problem.n_features)
    sweeps, tried = 0, None
    best = None
    while True:
        key = (np.sign(w).tobytes())
        if l1l2 is not None and key != tried:
            # Exact solve on the current support and signs (once per support). Refinement with
            # the residual from X usually helps; on badly scaled data its rounding can hurt,
            # so the better of the two certified points is kept.
            tried = key
            cand = _polish(A, b, l1l2, w)
            if cand is not None:
                for point in (cand, _refine(problem, cand, l1l2, A)):
                    cert, thr, kind, tol_used = _squared_certificate(problem, point, tol, f0)
                    if best is None or cert < best[1]:
                        best = (point, cert, thr, kind, tol_used)
                if best[1] <= best[2]:
                    break
        cert, thr, kind, tol_used = _squared_certificate(problem, w, tol, f0)
        if best is None or cert < best[1]:
            best = (w, cert, thr, kind, tol_used)
        if cert <= thr or sweeps >= max_sweeps:
            break
        w, done = _cd_quadratic(A, b, problem.penalty, w, min(10, max_sweeps - sweeps),
                                step_tol=1e-15 if l1l2 is None else 1e-9)
        sweeps += done
    w, cert, thr, kind, tol_used = best
    method = "coordinate descent" + (" + support solve" if l1l2 is not None else "")
    return _finish(problem, w, cert, kind, tol_used, thr, sweeps, method)


def _solve_squared_columns(problem, tol, max_iter):
    """Residual-caching coordinate descent over the columns (too many features for a Gram)."""
    c = _squared_scale(problem)
    n, p = problem.n_samples, problem.n_features
    l1l2 = _l1_l2(problem.penalty)
    box = problem.penalty.params if l1l2 is None else None
    if problem.is_sparse:
        Xc = problem.X_csc()
        cols = [(Xc.indices[Xc.indptr[j]:Xc.indptr[j + 1]], Xc.data[Xc.indptr[j]:Xc.indptr[j + 1]])
                for j in range(p)]
    else:
        Xf = problem.X_fortran()
        cols = [(slice(None), Xf[:, j]) for j in range(p)]
    a = (2.0 * c / n) * np.asarray(problem._column_sq_norms())
    f0 = problem.objective(np.zeros(p))
    w = np.zeros(p)
    r = -np.array(problem.y)                               # r = X w - y
    max_epochs = 10_000 if max_iter is None else max_iter
    epoch = 0
    while True:
        cert, thr, kind, tol_used = _squared_certificate(problem, w, tol, f0)
        if cert <= thr or epoch >= max_epochs:
            break
        for _ in range(5):
            for j, (idx, vals) in enumerate(cols):
                gj = (2.0 * c / n) * _dot(vals, r[idx])    # not threaded BLAS
                new = _coordinate_update(a[j], w[j], gj, l1l2, box)
                delta = new - w[j]
                if delta != 0.0:
                    w[j] = new
                    r[idx] += delta * vals                 # r += delta X[:, j]
            epoch += 1
    return _finish(problem, w, cert, kind, tol_used, thr, epoch, "coordinate descent (columns)")


# ------------------------------------------------------------------------ smooth losses
def _penalty_l2(problem):
    return problem.penalty.lam if problem.penalty.kind == PENALTY_L2 else 0.0


def _grad_full(problem, w, l2):
    f, g, z = _smooth_grad(problem, w)
    return f + 0.5 * l2 * float(w @ w), g + l2 * w, z


def _line_search(F, w, d, F0, slope, grad_norm=None, grad_norm_at=None):
    """Backtracking (Armijo, c = 1e-4) from the full step; accepts a step whose decrease is
    at the rounding level of F when the gradient (mapping) norm decreases."""
    t = 1.0
    for _ in range(60):
        w_new = w + t * d
        F_new = F(w_new)
        if F_new <= F0 + 1e-4 * t * slope:
            return w_new, t
        if grad_norm is not None and F_new <= F0 + 64 * _EPS * abs(F0) and \
                grad_norm_at(w_new) < grad_norm:
            return w_new, t
        t *= 0.5
    return w, 0.0


def _solve_newton(problem, tol, max_iter):
    tol = DEFAULT_GRAD_TOL if tol is None else tol
    l2 = _penalty_l2(problem)
    p = problem.n_features
    max_iter = 200 if max_iter is None else max_iter
    w = np.zeros(p)

    def F(v):
        return problem.objective(v)

    def gnorm(v):
        return float(np.linalg.norm(_grad_full(problem, v, l2)[1]))

    thr = None
    it = 0
    while True:
        f, g, z = _grad_full(problem, w, l2)
        norm = float(np.linalg.norm(g))
        if thr is None:
            thr = tol * max(1.0, norm)
        if norm <= thr or it >= max_iter:
            break
        H = _hessian(problem, z) + l2 * np.eye(p)
        d = -_solve_linear(H, g)
        w_new, t = _line_search(F, w, d, f, float(g @ d), norm, gnorm)
        it += 1
        if t == 0.0:
            break
        w = w_new
    return _finish(problem, w, norm, "gradient_norm", tol, thr, it, "Newton")


def _solve_trust_ncg(problem, tol, max_iter):
    tol = DEFAULT_GRAD_TOL if tol is None else tol
    l2 = _penalty_l2(problem)
    p, n = problem.n_features, problem.n_samples
    w0 = np.zeros(p)
    thr = tol * max(1.0, float(np.linalg.norm(_grad_full(problem, w0, l2)[1])))
    state = {}

    def fun(w):
        f, g, z = _grad_full(problem, w, l2)
        state["z"] = z
        return f, g

    def hessp(w, v):
        d2 = problem.loss._deriv2(problem._margins(w), problem.y)
        return np.asarray(problem.X.T @ (d2 * (problem.X @ v))).ravel() / n + l2 * v

    res = scipy.optimize.minimize(fun, w0, jac=True, hessp=hessp, method="trust-ncg",
                                  options={"gtol": thr, "maxiter": 1000 if max_iter is None
                                           else max_iter})
    norm = float(np.linalg.norm(_grad_full(problem, res.x, l2)[1]))
    return _finish(problem, res.x, norm, "gradient_norm", tol, thr, res.nit, "trust-ncg")


def _solve_prox_newton(problem, tol, max_iter):
    """Proximal Newton: quadratic model of f, penalty kept exact, solved by _cd_quadratic."""
    tol = DEFAULT_GRAD_TOL if tol is None else tol
    p = problem.n_features
    pen = problem.penalty
    l1l2 = _l1_l2(pen)
    beta = _beta(problem)
    max_iter = 200 if max_iter is None else max_iter
    w = np.zeros(p)
    if pen.kind == PENALTY_BOX:
        w = pen.prox(w, 1.0)

    def F(v):
        return problem.objective(v)

    def gmap_norm(v):
        return float(np.linalg.norm(_gradient_mapping(problem, v, _smooth_grad(problem, v)[1],
                                                      beta)))

    thr = None
    it = 0
    while True:
        f, g, z = _smooth_grad(problem, w)
        norm = float(np.linalg.norm(_gradient_mapping(problem, w, g, beta)))
        if thr is None:
            thr = tol * max(1.0, norm)
        if norm <= thr or it >= max_iter:
            break
        H = _hessian(problem, z)
        H[np.diag_indices(p)] += 1e-12 * max(float(np.max(np.diag(H))), 1e-300)
        rhs = H @ w - g
        v, _ = _cd_quadratic(H, rhs, pen, w, max_sweeps=2000, step_tol=1e-13)
        if l1l2 is not None:
            polished = _polish(H, rhs, l1l2, v)
            if polished is not None:
                v = polished
        d = v - w
        Fw = f + pen.value(w)
        slope = float(g @ d) + pen.value(v) - pen.value(w)
        w_new, t = _line_search(F, w, d, Fw, slope, norm, gmap_norm)
        it += 1
        if t == 0.0:
            break
        w = w_new
    return _finish(problem, w, norm, "gradient_mapping_norm", tol, thr, it, "proximal Newton")


def _solve_fista(problem, tol, max_iter):
    """FISTA with adaptive restart (O'Donoghue & Candes 2015), step 1/beta."""
    tol = DEFAULT_GRAD_TOL if tol is None else tol
    p = problem.n_features
    beta = _beta(problem)
    max_iter = 100_000 if max_iter is None else max_iter
    w = problem.penalty.prox(np.zeros(p), 1.0)
    v, t_k = w.copy(), 1.0
    thr = None
    it = 0
    while True:
        g = _smooth_grad(problem, w)[1]
        norm = float(np.linalg.norm(_gradient_mapping(problem, w, g, beta)))
        if thr is None:
            thr = tol * max(1.0, norm)
        if norm <= thr or it >= max_iter:
            break
        gv = _smooth_grad(problem, v)[1]
        w_new = problem.penalty.prox(v - gv / beta, 1.0 / beta)
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t_k * t_k))
        if float((v - w_new) @ (w_new - w)) > 0:          # restart when momentum hurts
            v, t_new = w_new.copy(), 1.0
        else:
            v = w_new + ((t_k - 1.0) / t_new) * (w_new - w)
        w, t_k = w_new, t_new
        it += 1
    return _finish(problem, w, norm, "gradient_mapping_norm", tol, thr, it, "FISTA")
