r"""Minimizing the maximum of N convex functions (Asi et al. 2021, section 4.2, App. D.2):
softmax smoothing, the rejection-sampled softmax gradient of Algorithm 9, and its assembly into
Algorithm 4 (ball acceleration) with the λ-bisection of Algorithm 10 (note 001, section 3.3).

:math:`f_{\max}(x) = \max_{i \le N} f_{(i)}(x)` with every :math:`f_{(i)}` convex and
G-Lipschitz is replaced by the softmax

.. math::

    f_{\mathrm{smax}}(x) = \varepsilon' \log \sum_i e^{f_{(i)}(x)/\varepsilon'}, \qquad
    0 \le f_{\mathrm{smax}} - f_{\max} \le \varepsilon' \log N,\qquad
    \nabla f_{\mathrm{smax}} = \sum_i p_i(x) \nabla f_{(i)}(x),\ p_i \propto
    e^{f_{(i)}(x)/\varepsilon'},

with :math:`\varepsilon' = \varepsilon/(2\log N)`. Algorithm 9 (SOFTMAXGRADEST): after one
pass at a centre :math:`\bar x` (N values, the probabilities :math:`p(\bar x)` by log-sum-exp),
an unbiased estimate of :math:`\nabla f_{\mathrm{smax}}(x)` for any x in
:math:`B_{r_\varepsilon}(\bar x)`, :math:`r_\varepsilon = \varepsilon'/G`, draws
:math:`i \sim p(\bar x)` and accepts it with probability

.. math::

    q_i = \exp\Big(\frac{f_{(i)}(x) - f_{(i)}(\bar x)}{\varepsilon'} - 1\Big)
    \in [e^{-2}, 1],

returning :math:`\nabla f_{(i)}(x)` (so the accepted index has law :math:`p(x)`; Lemma 8: one
subgradient and at most :math:`e^2` values in expectation, norm <= G). The ball condition is
what makes q a probability; it is checked (note 8.2, pitfall 11).

:func:`minimize_max_of_functions` runs Theorem 4's method: Algorithm 4 on
:math:`f_{\mathrm{smax}}` to accuracy ε/2 with movement bound :math:`r = r_\varepsilon`, the
ball oracle and the Moreau-gradient oracle built at each query centre from Algorithm 9, and
NEXTLAMBDA by Algorithm 10 between :math:`\lambda_{\min} = \varepsilon
\log^2(GR/\varepsilon)/(r^{2/3}R^{4/3})` [RECON] and :math:`\lambda_{\max} = 2G/r` (where the
prox moves at most r/2 whatever the point). The paper calls this method impractical (§1.5);
it is here as documented machinery, with the same work caps as the oracles it reuses.
"""

import math

import numpy as np

from .._validation import (all_finite, check_int, check_positive, check_real_array,
                           check_vector)

__all__ = ["AffineFamily", "SoftmaxGradientOracle", "softmax_value",
           "minimize_max_of_functions"]


class AffineFamily:
    r"""N affine functions :math:`f_{(i)}(x) = \langle a_i, x\rangle - b_i` (rows of A, b).

    The family protocol the min-max code uses: ``n_functions``, ``lipschitz``,
    ``values(x)`` (all N values, one pass), ``value(i, x)`` and ``subgradient(i, x)``.
    Example: rows :math:`\pm e_j`, :math:`b = \pm s` give :math:`f_{\max}(x) = \|x - s\|_\infty`.

    Parameters
    ----------
    A : array-like of shape (N, d)
        The rows :math:`a_i`.
    b : array-like of shape (N,)
        The offsets.
    """

    def __init__(self, A, b):
        self.A = np.array(check_real_array(A, "A"), dtype=np.float64, ndmin=2)
        if self.A.ndim != 2 or self.A.size == 0:
            raise ValueError(f"A must be a non-empty 2-d array; got shape {self.A.shape}.")
        if not all_finite(self.A):
            raise ValueError("A must contain only finite values; it has NaN or inf.")
        self.b = check_vector(b, "b", copy=True)
        if self.A.shape[0] != self.b.shape[0]:
            raise ValueError(f"b must have one entry per row of A ({self.A.shape[0]}); got "
                             f"{self.b.shape[0]}.")
        m = float(np.max(np.abs(self.A)))
        with np.errstate(over="ignore"):
            self.lipschitz = (m * float(np.linalg.norm(self.A / m, axis=1).max())
                              if m > 0 else 0.0)
        if not math.isfinite(self.lipschitz):
            raise ValueError(f"A is too large: its largest row norm exceeds the float64 range; "
                             f"got max |A_ij| = {m!r}.")

    @property
    def n_functions(self):
        """int: N."""
        return self.A.shape[0]

    def values(self, x):
        """All N values :math:`f_{(i)}(x)`.

        Parameters
        ----------
        x : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (N,)
        """
        return self.A @ x - self.b

    def value(self, i, x):
        """:math:`f_{(i)}(x)`.

        Parameters
        ----------
        i : int
            The function.
        x : ndarray of shape (d,)
            The point.

        Returns
        -------
        float
        """
        return float(self.A[i] @ x - self.b[i])

    def subgradient(self, i, x):
        """The gradient :math:`a_i` of :math:`f_{(i)}` at ``x``.

        Parameters
        ----------
        i : int
            The function.
        x : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        return self.A[i].copy()


def _log_softmax(values, eps_prime):
    z = values / eps_prime
    top = z.max()
    return z - (top + math.log(np.exp(z - top).sum()))


def softmax_value(family, x, eps_prime):
    r""":math:`f_{\mathrm{smax}}(x) = \varepsilon'\log\sum_i e^{f_{(i)}(x)/\varepsilon'}`
    (log-sum-exp, no overflow).

    Parameters
    ----------
    family : AffineFamily
        The functions.
    x : ndarray of shape (d,)
        The point.
    eps_prime : float
        :math:`\varepsilon' > 0`.

    Returns
    -------
    float
    """
    eps_prime = check_positive(eps_prime, "eps_prime")
    x = check_vector(x, "x")
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.asarray(family.values(x), dtype=np.float64)
        if not all_finite(values):
            raise ValueError("x is too large for the family: a value f_i(x) is not finite in "
                             "float64.")
        # eps' (top + log sum) = max_i f_i + eps' log sum exp((f_i - max f) / eps'): no
        # overflow of f_i / eps' for a tiny eps'
        top = float(values.max())
        z = (values - top) / eps_prime
        out = top + eps_prime * math.log(np.exp(z).sum())
    if not math.isfinite(out):
        raise ValueError(f"x and eps_prime are too large: the softmax value exceeds the "
                         f"float64 range; got eps_prime={eps_prime!r}.")
    return float(out)


class SoftmaxGradientOracle:
    r"""Algorithm 9: unbiased :math:`\nabla f_{\mathrm{smax}}` on :math:`B_{r}(\bar x)` by
    rejection sampling (module docstring); a stochastic subgradient oracle ``oracle(x, rng)``.

    Parameters
    ----------
    family : object
        The N functions (see :class:`AffineFamily`).
    eps_prime : float
        ε' of the softmax.
    center : array-like of shape (d,)
        :math:`\bar x`; its N values are computed once here.
    lipschitz : float, optional
        G (default ``family.lipschitz``); sets the valid radius :math:`r = \varepsilon'/G`.

    Attributes
    ----------
    n_values, n_subgradients, n_trials : int
        Function values (N for the pass plus one per trial), subgradients (one per call) and
        rejection-loop iterations so far.
    """

    def __init__(self, family, eps_prime, center, lipschitz=None):
        self.family = family
        self.eps_prime = check_positive(eps_prime, "eps_prime")
        self.center = check_vector(center, "center", copy=True)
        G = family.lipschitz if lipschitz is None else lipschitz
        self.lipschitz = check_positive(G, "lipschitz")
        self.radius = self.eps_prime / self.lipschitz
        self.center_values = np.asarray(family.values(self.center), dtype=np.float64)
        self.log_p = _log_softmax(self.center_values, self.eps_prime)
        self._cdf = np.cumsum(np.exp(self.log_p))
        self.n_values = self.center_values.shape[0]
        self.n_subgradients = 0
        self.n_trials = 0

    @property
    def probabilities(self):
        """:math:`p(\\bar x)`."""
        return np.exp(self.log_p)

    def sample_index(self, x, rng):
        """The accepted index (law :math:`p(x)`) and the number of trials it took.

        Parameters
        ----------
        x : ndarray of shape (d,)
            The point.
        rng : numpy.random.Generator
            The draws.

        Returns
        -------
        tuple of int
        """
        x = np.asarray(x, dtype=np.float64)
        dist = float(np.linalg.norm(x - self.center))
        if dist > self.radius * (1.0 + 1e-9) + 1e-15:
            raise ValueError(f"x lies outside the radius eps_prime / G = {self.radius:g} "
                             "around the centre, where Algorithm 9 is valid.")
        trials = 0
        while True:
            trials += 1
            i = min(int(np.searchsorted(self._cdf, rng.random() * self._cdf[-1], side="right")),
                    self._cdf.shape[0] - 1)
            expo = (self.family.value(i, x) - self.center_values[i]) / self.eps_prime - 1.0
            # <= 0 in exact arithmetic inside the ball; clamp the round-off (pitfall 11)
            if rng.random() < math.exp(min(expo, 0.0)):
                return i, trials

    def __call__(self, x, rng):
        i, trials = self.sample_index(x, rng)
        self.n_trials += trials
        self.n_values += trials
        self.n_subgradients += 1
        return np.asarray(self.family.subgradient(i, np.asarray(x, dtype=np.float64)),
                          dtype=np.float64)


class _CentredOracles:
    """Ball and proximal oracles of Algorithm 4 for f_smax: each call builds Algorithm 9 at its
    own centre (N values) and delegates to the EpochSGD / OPTEST oracles."""

    def __init__(self, family, eps_prime, lipschitz, make_ball, make_prox):
        self.family = family
        self.eps_prime = eps_prime
        self.lipschitz = lipschitz
        self.make_ball = make_ball
        self.make_prox = make_prox
        self.n_values = 0
        self.n_subgradients = 0

    def _oracle(self, center):
        return SoftmaxGradientOracle(self.family, self.eps_prime, center, self.lipschitz)

    def _count(self, oracle):
        self.n_values += oracle.n_values
        self.n_subgradients += oracle.n_subgradients

    def ball(self, center, lam, phi, domain, random_state):
        oracle = self._oracle(center)
        x = self.make_ball(oracle)(center, lam, phi, domain, random_state)
        self._count(oracle)
        return x

    def prox(self, center, lam, delta, sigma, domain, random_state):
        oracle = self._oracle(center)
        x = self.make_prox(oracle)(center, lam, delta, sigma, domain, random_state)
        self._count(oracle)
        return x


def minimize_max_of_functions(family, x0, *, epsilon, radius, domain=None, lam_min=None,
                              lam_max=None, max_iter=100, accuracy_scale=1.0, c=32.0,
                              max_epochs=40, max_copies=None, max_level=40, max_bisections=20,
                              random_state=None):
    r"""Theorem 4: Algorithm 4 + 9 + 10 on :math:`\min_{x \in X} \max_i f_{(i)}(x)`.

    Parameters
    ----------
    family : object
        The N >= 2 functions (``n_functions``, ``lipschitz``, ``values``, ``value``,
        ``subgradient``; see :class:`AffineFamily`).
    x0 : array-like of shape (d,)
    epsilon : float
        Target accuracy on :math:`f_{\max}` (ε/2 from the smoothing, ε/2 from Algorithm 4).
    radius : float
        R with :math:`X \subseteq B_R(x_0)` (or :math:`\|x_0 - x^*\| \le R`).
    domain : Domain, optional
        X (default the whole space).
    lam_min, lam_max : float, optional
        Bisection range (module docstring for the defaults).
    max_iter, accuracy_scale
        As in :func:`dpsco_core.ball_acceleration.ball_acceleration`.
    c, max_epochs, max_copies, max_level
        Passed to the EpochSGD ball oracle and the OPTEST proximal oracle (caps are outside
        the theory when they bind).
    max_bisections : int, default=20
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    result : BallAccelerationResult
    counts : dict
        ``n_values``, ``n_subgradients`` (of the :math:`f_{(i)}`), ``eps_prime``,
        ``movement`` (r), ``lam_min``, ``lam_max``.
    """
    from .. import ball_acceleration as ba   # the package imports mlmc first

    x0 = check_vector(x0, "x0")
    eps = check_positive(epsilon, "epsilon")
    R = check_positive(radius, "radius")
    n_fun = check_int(family.n_functions, "family.n_functions", low=2)
    G = check_positive(family.lipschitz, "family.lipschitz")
    eps_prime = eps / (2.0 * math.log(n_fun))
    r = eps_prime / G
    if not 0.0 < r < math.inf:
        raise ValueError(f"epsilon = {eps!r} is out of range for family.lipschitz = {G!r}: the "
                         f"movement bound epsilon / (2 ln N lipschitz) = {r!r} must be a "
                         "positive finite float.")
    if lam_min is None:
        # in logarithms: r^(2/3) R^(4/3) under- or overflows (ZeroDivisionError /
        # OverflowError) for a radius or epsilon near the float64 limits
        try:
            lam_min = eps * max(1.0, math.log(G * R / eps)) ** 2 / (r ** (2.0 / 3.0) *
                                                                     R ** (4.0 / 3.0))
        except (ZeroDivisionError, OverflowError, ValueError):
            lam_min = math.nan
        if not 0.0 < lam_min < math.inf:
            log_ratio = math.log(G) + math.log(R) - math.log(eps)
            log_lam = (math.log(eps) + 2.0 * math.log(max(1.0, log_ratio))
                       - (2.0 / 3.0) * math.log(r) - (4.0 / 3.0) * math.log(R))
            lam_min = math.exp(log_lam) if log_lam < 709.0 else math.inf
    else:
        lam_min = check_positive(lam_min, "lam_min")
    lam_max = 2.0 * G / r if lam_max is None else check_positive(lam_max, "lam_max")
    if not (0.0 < lam_min < math.inf and 0.0 < lam_max < math.inf):
        raise ValueError(f"epsilon = {eps!r} and radius = {R!r} are out of range: the "
                         f"lambda range [lam_min, lam_max] = [{lam_min!r}, {lam_max!r}] must "
                         "be positive finite floats.")
    lam_max = max(lam_max, lam_min)
    if not 0.0 < 0.01 * lam_min * r * r:      # the ball oracles' accuracy phi = 0.01 lam r^2
        raise ValueError(f"epsilon = {eps!r} and radius = {R!r} are too small: the ball "
                         f"oracle's accuracy 0.01 lam_min r^2 (r = {r!r}, lam_min = "
                         f"{lam_min!r}) underflows to 0.")
    oracles = _CentredOracles(
        family, eps_prime, G,
        make_ball=lambda o: ba.EpochSGDBallOracle(o, G, max_epochs=max_epochs),
        make_prox=lambda o: ba.MLMCProximalOracle(o, G, c=c, max_copies=max_copies,
                                                  max_level=max_level))
    next_lambda = ba.LambdaBisection(oracles.ball, r, lam_min, lam_max, domain=domain,
                                     max_bisections=max_bisections)
    res = ba.ball_acceleration(oracles.ball, oracles.prox, next_lambda, x0, epsilon=eps / 2.0,
                               radius_bound=R, lipschitz=G, movement=r, domain=domain,
                               max_iter=max_iter, accuracy_scale=accuracy_scale,
                               random_state=random_state)
    counts = {"n_values": oracles.n_values, "n_subgradients": oracles.n_subgradients,
              "eps_prime": eps_prime, "movement": r, "lam_min": lam_min, "lam_max": lam_max}
    return res, counts
