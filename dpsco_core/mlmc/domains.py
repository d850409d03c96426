r"""Convex domains X with a Euclidean projection, as EpochSGD and ball acceleration use them.

A domain is any object with ``project(v) -> ndarray`` (the Euclidean projection
:math:`\Pi_X(v)`, a new array) and ``translate(offset) -> domain`` (the domain
:math:`X - \text{offset}`, so that iterates can be stored relative to the prox centre, note 001
section 8.2 pitfall 1). The projections come from :mod:`dpsco_core.projections`; the box is the
feasible set of :class:`dpsco_core.penalties.Box` (coordinate-wise clipping).

``kernel_spec()`` returns ``(kind, a, b, radius)`` for the domains the compiled batch kernel
(``_mlmc``) handles (whole space, l2 ball, box) and None otherwise.
"""

import math

import numpy as np

from .._validation import check_real_array, check_scalar, check_vector
from ..projections import project_l1_ball, project_l2_ball, project_simplex

__all__ = ["Domain", "EuclideanSpace", "L2Ball", "BoxDomain", "L1Ball", "Simplex",
           "TwoBallIntersection", "project_two_balls", "check_domain", "DOMAIN_NONE",
           "DOMAIN_BALL", "DOMAIN_BOX"]

DOMAIN_NONE = 0
DOMAIN_BALL = 1
DOMAIN_BOX = 2


class Domain:
    """Base class: a closed convex set with a Euclidean projection."""

    def project(self, v):
        """Euclidean projection of ``v`` onto the domain.

        Parameters
        ----------
        v : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        raise NotImplementedError

    def translate(self, offset):
        """The domain ``X - offset`` (a generic wrapper unless a subclass knows better).

        Parameters
        ----------
        offset : ndarray of shape (d,)
            The shift.

        Returns
        -------
        Domain
        """
        return _Translated(self, np.asarray(offset, dtype=np.float64))

    def contains(self, v, tol=1e-12):
        """Whether ``x`` lies in the domain (up to a relative tolerance).

        Parameters
        ----------
        x : ndarray of shape (d,)
            The point.
        tol : float, optional
            Tolerance.

        Returns
        -------
        bool
        """
        v = np.asarray(v, dtype=np.float64)
        return bool(np.linalg.norm(self.project(v) - v) <= tol * (1.0 + np.linalg.norm(v)))

    def kernel_spec(self, d):
        """The domain as the compiled kernel's ``(kind, parameters)`` (None: no kernel form).

        Parameters
        ----------
        d : int
            Dimension.
        """
        return None


class _Translated(Domain):
    def __init__(self, base, offset):
        self.base = base
        self.offset = offset

    def project(self, v):
        return self.base.project(np.asarray(v) + self.offset) - self.offset

    def translate(self, offset):
        return _Translated(self.base, self.offset + np.asarray(offset, dtype=np.float64))


class EuclideanSpace(Domain):
    """X = R^d (the projection is the identity)."""

    def project(self, v):
        """The identity: ``v`` itself.

        Parameters
        ----------
        v : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        return np.array(v, dtype=np.float64)

    def translate(self, offset):
        """Parameters
        ----------
        offset : ndarray of shape (d,)
            The shift.

        Returns
        -------
        Domain
        """
        return self

    def kernel_spec(self, d):
        """The domain as the compiled kernel's ``(kind, parameters)``.

        Parameters
        ----------
        d : int
            Dimension.
        """
        return DOMAIN_NONE, np.zeros(d), np.zeros(d), np.inf

    def __repr__(self):
        return "EuclideanSpace()"


class L2Ball(Domain):
    r"""The ball :math:`\{x : \|x - c\|_2 \le R\}` (``center=None``: the origin).

    Parameters
    ----------
    radius : float
        R >= 0.
    center : array-like of shape (d,), optional
        c (default: the origin).
    """

    def __init__(self, radius, center=None):
        self.radius = check_scalar(radius, "radius", low=0.0, low_open=False, allow_inf=True)
        self.center = None if center is None else check_vector(center, "center", copy=True)

    def _center(self, d):
        return np.zeros(d) if self.center is None else self.center

    def project(self, v):
        """Euclidean projection of ``v`` onto the ball.

        Parameters
        ----------
        v : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        v = np.asarray(v, dtype=np.float64)
        return project_l2_ball(v, self.radius, self._center(v.shape[0]), n_threads=1)

    def translate(self, offset):
        """Parameters
        ----------
        offset : ndarray of shape (d,)
            The shift.

        Returns
        -------
        Domain
        """
        offset = np.asarray(offset, dtype=np.float64)
        return L2Ball(self.radius, self._center(offset.shape[0]) - offset)

    def kernel_spec(self, d):
        """The domain as the compiled kernel's ``(kind, parameters)``.

        Parameters
        ----------
        d : int
            Dimension.
        """
        return DOMAIN_BALL, self._center(d), np.zeros(d), self.radius

    def __repr__(self):
        return f"L2Ball(radius={self.radius!r})"


def _box_bound(value, name):
    """A bound of :class:`BoxDomain`: a real scalar or vector (±inf allowed), as float64."""
    arr = check_real_array(value, name)
    if arr.ndim > 1 or (arr.ndim == 1 and arr.size == 0):
        raise ValueError(f"{name} must be a number or a non-empty 1-d array; got an array of "
                         f"shape {arr.shape}.")
    return np.array(arr, dtype=np.float64)


class BoxDomain(Domain):
    """The box ``lower <= x <= upper`` (scalars or vectors; the set of ``penalties.Box``).

    Parameters
    ----------
    lower, upper : float or array-like of shape (d,)
        The bounds, ``lower <= upper``.
    """

    def __init__(self, lower, upper):
        self.lower = _box_bound(lower, "lower")
        self.upper = _box_bound(upper, "upper")
        if np.any(np.isnan(self.lower)) or np.any(np.isnan(self.upper)):
            raise ValueError("lower and upper must not contain NaN.")
        if np.any(self.lower > self.upper):
            raise ValueError("the box is empty: lower must be <= upper in every coordinate.")
        if np.any(self.lower == np.inf) or np.any(self.upper == -np.inf):
            raise ValueError("the box is empty: lower must be < inf and upper > -inf in every "
                             "coordinate (a point of R^d is finite).")
        if self.lower.ndim and self.upper.ndim and self.lower.shape != self.upper.shape:
            raise ValueError(f"lower and upper must have the same length; got "
                             f"{self.lower.shape[0]} and {self.upper.shape[0]}.")

    def project(self, v):
        """Euclidean projection of ``v`` onto the box (the clip).

        Parameters
        ----------
        v : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        v = check_vector(v, "v")
        for bound, name in ((self.lower, "lower"), (self.upper, "upper")):
            if bound.ndim and bound.shape != v.shape:
                raise ValueError(f"v must have the length of the box's {name} bound "
                                 f"({bound.shape[0]}); got {v.shape[0]}.")
        return np.clip(v, self.lower, self.upper)

    def translate(self, offset):
        """Parameters
        ----------
        offset : ndarray of shape (d,)
            The shift.

        Returns
        -------
        Domain
        """
        offset = np.asarray(offset, dtype=np.float64)
        return BoxDomain(self.lower - offset, self.upper - offset)

    def kernel_spec(self, d):
        """The domain as the compiled kernel's ``(kind, parameters)`` (None: no kernel form).

        Parameters
        ----------
        d : int
            Dimension.
        """
        return (DOMAIN_BOX, np.broadcast_to(self.lower, (d,)).astype(np.float64),
                np.broadcast_to(self.upper, (d,)).astype(np.float64), np.inf)

    def __repr__(self):
        return f"BoxDomain(lower={self.lower!r}, upper={self.upper!r})"


class L1Ball(Domain):
    r"""The l1 ball :math:`\{x : \|x\|_1 \le R\}`.

    Parameters
    ----------
    radius : float
        R >= 0.
    """

    def __init__(self, radius):
        self.radius = check_scalar(radius, "radius", low=0.0, low_open=False)

    def project(self, v):
        """Euclidean projection of ``v`` onto the l1 ball (``projections.project_l1_ball``).

        Parameters
        ----------
        v : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        return project_l1_ball(np.asarray(v, dtype=np.float64), self.radius)

    def __repr__(self):
        return f"L1Ball(radius={self.radius!r})"


class Simplex(Domain):
    r"""The scaled simplex :math:`\{x \ge 0 : \sum_i x_i = a\}`.

    Parameters
    ----------
    total : float, default=1.0
        a > 0.
    """

    def __init__(self, total=1.0):
        self.total = check_scalar(total, "total", low=0.0)

    def project(self, v):
        """Euclidean projection of ``v`` onto the simplex (``projections.project_simplex``).

        Parameters
        ----------
        v : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        return project_simplex(np.asarray(v, dtype=np.float64), self.total)

    def __repr__(self):
        return f"Simplex(total={self.total!r})"


def _orthogonal_unit(e):
    """A unit vector orthogonal to the unit vector e (d >= 2): Gram-Schmidt on the basis
    vector least aligned with e."""
    w = np.zeros_like(e)
    w[int(np.argmin(np.abs(e)))] = 1.0
    w -= (w @ e) * e
    return w / np.linalg.norm(w)


#: Below this np.linalg.norm's squares may be subnormal or 0: _norm recomputes it scaled.
_NORM_RESCALE_BELOW = 2.0 ** -500


def _norm(x):
    """||x||_2: ``np.linalg.norm`` (the same bits) unless the result is below 2^-500, where the
    squares underflow (||[2^-1023]|| came out 0), and then max|x_i| ||x / max|x_i|||."""
    n = float(np.linalg.norm(x))
    if n >= _NORM_RESCALE_BELOW:
        return n
    m = float(np.max(np.abs(x))) if x.size else 0.0
    if m == 0.0:
        return 0.0
    return m * float(np.linalg.norm(x / m))


def project_two_balls(v, center1, radius1, center2, radius2):
    r"""Exact Euclidean projection onto :math:`B(c_1, r_1) \cap B(c_2, r_2)` (closed form).

    Let :math:`p_1 = \Pi_{B_1}(v)`, :math:`p_2 = \Pi_{B_2}(v)`. If :math:`p_1 \in B_2` it is
    the answer (the minimizer over a superset is feasible), likewise :math:`p_2 \in B_1`.
    Otherwise neither constraint can be the only active one, and v is outside both, so by
    KKT both are active: the answer lies on the sphere intersection

    .. math::

        S = \{x : \|x - c_1\| = r_1, \|x - c_2\| = r_2\}
          = \{m + \rho\, w : w \perp e, \|w\| = 1\},\quad
        e = \frac{c_2 - c_1}{D},\ t = \frac{D^2 + r_1^2 - r_2^2}{2D},\
        m = c_1 + t e,\ \rho = \sqrt{r_1^2 - t^2},

    (:math:`D = \|c_2 - c_1\|`), and the point of S nearest v is
    :math:`m + \rho\,(q - m)/\|q - m\|` with :math:`q = v - \langle v - m, e\rangle e` the
    projection of v on the hyperplane of S (any direction orthogonal to e when q = m).

    Parameters
    ----------
    v : ndarray of shape (d,)
        The point.
    center1, center2 : ndarray of shape (d,)
        The centres.
    radius1, radius2 : float
        The radii.

    Returns
    -------
    ndarray of shape (d,)

    Raises
    ------
    ValueError
        If the intersection is empty (:math:`D > r_1 + r_2`).
    """
    v = check_vector(v, "v")
    c1 = check_vector(center1, "center1")
    c2 = check_vector(center2, "center2")
    for name, c in (("center1", c1), ("center2", c2)):
        if c.shape != v.shape:
            raise ValueError(f"{name} must have the length of v, {v.shape[0]}; got "
                             f"{c.shape[0]}.")
    r1 = check_scalar(radius1, "radius1", low=0.0, low_open=False, allow_inf=True)
    r2 = check_scalar(radius2, "radius2", low=0.0, low_open=False, allow_inf=True)
    if math.isinf(r1) or math.isinf(r2):     # one ball is the whole space
        if math.isinf(r1) and math.isinf(r2):
            return v.copy()
        return project_l2_ball(v, r2, c2, n_threads=1) if math.isinf(r1) else \
            project_l2_ball(v, r1, c1, n_threads=1)
    # The projection commutes with scaling: work on everything divided by a power of two M
    # near the largest magnitude (exact; no overflow of the squares or differences near
    # 1.8e308), then scale back.
    top = max(float(np.max(np.abs(v))), float(np.max(np.abs(c1))), float(np.max(np.abs(c2))),
              r1, r2)
    if top == 0.0:
        return np.zeros_like(v)
    M = math.ldexp(1.0, math.frexp(top)[1] - 1)     # top / M in [1, 2)
    with np.errstate(over="ignore", under="ignore"):
        diff = c2 / M - c1 / M
        dist = _norm(diff)
        if dist > r1 / M + r2 / M:
            raise ValueError(f"the intersection of the balls is empty: the centres center1 "
                             f"and center2 are farther apart than the radii radius1 + radius2 "
                             f"= {r1 + r2:g}.")
        out = _project_two_balls(v / M, c1 / M, r1 / M, c2 / M, r2 / M) * M
    if not np.all(np.isfinite(out)):     # only if M ~ 1.8e308 and the answer leaves the range
        raise ValueError("v, center1 and center2 are too large: the projection exceeds the "
                         "float64 range.")
    return out


def _project_two_balls(v, c1, radius1, c2, radius2):
    diff = c2 - c1
    dist = _norm(diff)
    if dist > radius1 + radius2:
        raise ValueError(f"the intersection of the balls is empty: the centres are farther "
                         f"apart than the radii's sum {radius1 + radius2:g}.")
    # A ball inside the other is tested on the radii too, not only on the projection: the
    # projection onto one of two equal balls lands on its sphere, where rounding may put it
    # just outside the other, and the sphere formula below then divided by D = 0
    # (ZeroDivisionError for center1 == center2, radius1 == radius2).
    p1 = project_l2_ball(v, radius1, c1, n_threads=1)
    if dist + radius1 <= radius2 or _norm(p1 - c2) <= radius2:
        return p1
    p2 = project_l2_ball(v, radius2, c2, n_threads=1)
    if dist + radius2 <= radius1 or _norm(p2 - c1) <= radius1:
        return p2
    # Here neither ball contains the other (else one of the returns above fires), so D > 0.
    e = diff / dist
    t = (dist * dist + radius1 * radius1 - radius2 * radius2) / (2.0 * dist)
    rho = np.sqrt(max(radius1 * radius1 - t * t, 0.0))
    m = c1 + t * e
    q = v - ((v - m) @ e) * e - m
    qn = _norm(q)
    if rho == 0.0 or v.shape[0] == 1:
        return m
    return m + rho * (q / qn if qn > 0.0 else _orthogonal_unit(e))


class TwoBallIntersection(Domain):
    r""":math:`B(c_1, r_1) \cap B(c_2, r_2)`, projected exactly by :func:`project_two_balls`.

    Raises ValueError at construction if the intersection is empty.

    Parameters
    ----------
    ball1, ball2 : L2Ball
        The balls.
    d : int
        Dimension.
    """

    def __init__(self, ball1, ball2, d):
        self.center1 = ball1._center(d).copy()
        self.center2 = ball2._center(d).copy()
        self.radius1 = ball1.radius
        self.radius2 = ball2.radius
        dist = float(np.linalg.norm(self.center2 - self.center1))
        if dist > self.radius1 + self.radius2:
            raise ValueError(f"the domain is empty: the balls' centres are farther apart than "
                             f"their radii's sum {self.radius1 + self.radius2:g}.")

    def project(self, v):
        """Exact Euclidean projection of ``v`` onto the intersection (:func:`project_two_balls`).

        Parameters
        ----------
        v : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        return project_two_balls(v, self.center1, self.radius1, self.center2, self.radius2)

    def translate(self, offset):
        """Parameters
        ----------
        offset : ndarray of shape (d,)
            The shift.

        Returns
        -------
        Domain
        """
        offset = np.asarray(offset, dtype=np.float64)
        d = offset.shape[0]
        return TwoBallIntersection(L2Ball(self.radius1, self.center1 - offset),
                                   L2Ball(self.radius2, self.center2 - offset), d)

    def __repr__(self):
        return f"TwoBallIntersection(radius1={self.radius1!r}, radius2={self.radius2!r})"


def check_domain(domain, d):
    """None -> EuclideanSpace(); otherwise an object with ``project`` (TypeError if not)."""
    if domain is None:
        return EuclideanSpace()
    if not callable(getattr(domain, "project", None)):
        raise TypeError(f"domain must be None or have a project(v) method; got "
                        f"{type(domain).__name__}.")
    if isinstance(domain, BoxDomain):
        for name, arr in (("lower", domain.lower), ("upper", domain.upper)):
            if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != d):
                raise ValueError(f"domain {name} must be a scalar or have length {d}; got shape "
                                 f"{arr.shape}.")
    return domain
