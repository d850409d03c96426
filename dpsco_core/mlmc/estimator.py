r"""The MLMC optimum estimator (Asi et al. 2021, eq. (1)), OPTEST (Algorithm 1) and MORGRADEST
(Algorithm 2).

One draw, for :math:`F = f + \psi` μ-strongly convex with minimizer :math:`x^*` and EpochSGD
snapshots :math:`x_\ell` (:mod:`dpsco_core.mlmc._schedule` for the level schemes):

.. math::

    \hat x = x_{\ell_0} + 2^K (x_{\ell_0+K} - x_{\ell_0+K-1})\,1\{\ell_0 + K \le j_{\max}\},
    \qquad P(K = k) = 2^{-k},

so :math:`E\hat x = E x_{j_{\max}}` (telescoping): the bias is that of EpochSGD at the top
level, :math:`\le \sqrt{32}\,G/(\mu\sqrt{T_{\max}})`, at expected cost O(j_max) gradients and
variance :math:`O((G^2/\mu^2) j_{\max})` (Proposition 1). x_J and x_{J-1} come from *one*
EpochSGD run (Remark 1) under the snapshot rule of note 001 section 2.3.

Randomness: copies are grouped in fixed blocks of ``COPY_BLOCK`` = 16 consecutive copies; block b
draws from ``PCG64DXSM(child b)`` of the call's SeedSequence: first one raw 64-bit word per copy
of the block (K = ctz + 1), then the copies in order, each consuming whatever its oracle draws.
(One generator per copy would cost more to seed than a typical copy costs to run.) Copies are
therefore reproducible and independent of ``n_threads``, on the kernel path and the Python path
alike; the average over copies is taken in copy order.

Cost and tails: E N is logarithmic in T_max but the cost and the output are heavy-tailed
(P(N >= t) ~ 1/t). Per unit of work the estimator is far less *statistically* efficient than
plain SGD for point estimation (note 001, 6.2 E4: 70-700x on a 1-d test); what it buys is low
bias at logarithmic expected cost, with embarrassingly parallel copies.

References
----------
.. [1] H. Asi, Y. Carmon, A. Jambulapati, Y. Jin, A. Sidford, "Stochastic bias-reduced gradient
   methods", NeurIPS 2021 (arXiv 2106.09481), eq. (1), Proposition 1, Algorithms 1, 2 and 7.
.. [2] J. Blanchet, P. Glynn, "Unbiased Monte Carlo for optimization and functions of
   expectations via multi-level randomization", WSC 2015.
"""

from dataclasses import dataclass, field

import numpy as np

from .._config import effective_n_threads
from .._random import BIT_GENERATOR, check_random_state, child_seed_sequences, seed_words
from .._validation import all_finite, check_int, check_positive, check_vector
from ._schedule import (J_MAX_LIMIT, LEVELS, draw_epochs, gradients_for_epochs,
                        j_max_from_bias, level_epochs, level_from_raw, n_copies_from_variance)
from .domains import check_domain
from .epoch_sgd import check_psi, run_epochs
from .oracles import GLMOracle

#: Copies per random block (equal to the kernel's ``_mlmc.COPY_BLOCK``).
COPY_BLOCK = 16

__all__ = ["MLMCDraws", "mlmc_draws", "mlmc_combine", "optest", "moreau_gradient",
           "OptestResult", "MoreauGradientResult"]


@dataclass(frozen=True)
class MLMCDraws:
    """Independent MLMC draws.

    Attributes
    ----------
    samples : ndarray of shape (n_copies, d)
        The draws :math:`\\hat x^{(m)}`.
    k : ndarray of shape (n_copies,)
        Geometric variate K of each copy (levels above ``base_level``); ``base_level + k >
        j_max`` means truncated.
    n_gradients : ndarray of shape (n_copies,)
        Stochastic gradients each copy used.
    j_max, base_level : int
    levels : str
    offsets : ndarray of shape (n_copies, d) or None
        The draws relative to the prox centre, :math:`\\hat x^{(m)} - c`, as computed (before
        the centre is added back: callers that work in local coordinates, such as the DP
        phases of :mod:`dpsco_core.mlmc.dp_sco`, keep their full precision, note 8.2
        pitfall 2).
    """

    samples: np.ndarray
    k: np.ndarray
    n_gradients: np.ndarray
    j_max: int
    levels: str
    base_level: int
    offsets: np.ndarray | None = field(default=None, repr=False)

    @property
    def mean(self):
        """Average of the draws (OPTEST's output)."""
        return self.samples.mean(axis=0)


def _check_levels(j_max, levels, base_level):
    if levels not in LEVELS:
        raise ValueError(f"levels must be one of {sorted(LEVELS)}; got {levels!r}.")
    j_max = check_int(j_max, "j_max", low=1, high=J_MAX_LIMIT)
    base_level = check_int(base_level, "base_level", low=0, high=j_max)
    return j_max, base_level


def mlmc_combine(snapshots, k, j_max, levels="epoch", base_level=0):
    """The draw with geometric variate ``k`` built from EpochSGD ``snapshots`` (rows by epoch).

    Deterministic helper (the exact-enumeration identity of note 001 section 9, T2):
    ``sum_k 2^-k mlmc_combine(S, k) + 2^-(j_max - base_level) mlmc_combine(S, inf)`` equals
    ``S[level_epochs(j_max)]``.

    Parameters
    ----------
    snapshots : ndarray of shape (n_epochs + 1, d)
        EpochSGD snapshots, rows by epoch.
    k : int or float
        The geometric variate (``inf``: the base level only).
    j_max : int
        Top level.
    levels : {"epoch", "paper"}, default="epoch"
        The level scheme.
    base_level : int, default=0
        :math:`\\ell_0`.

    Returns
    -------
    ndarray of shape (d,)
    """
    j_max, base_level = _check_levels(j_max, levels, base_level)
    k = min(int(k), 65) if np.isfinite(k) else 65
    e0, e1, e2 = draw_epochs(k, j_max, levels, base_level)
    snapshots = np.asarray(snapshots, dtype=np.float64)
    if e2 > e1:
        return snapshots[e0] + 2.0 ** k * (snapshots[e2] - snapshots[e1])
    return snapshots[e0].copy()


def _draw_python(oracle, mu, center, linear, domain_rel, j_max, levels, base_level, k, bitgen):
    e0, e1, e2 = draw_epochs(k, j_max, levels, base_level)
    last = max(e0, e2)
    snaps = run_epochs(oracle, mu, center, linear, domain_rel, last, np.random.Generator(bitgen),
                       keep={e0, e1, e2})
    if e2 > e1:
        u = snaps[e0] + 2.0 ** k * (snaps[e2] - snaps[e1])
    else:
        u = snaps[e0]
    return u, k, gradients_for_epochs(last)


#: Bytes of a transparent huge page (x86-64, arm64 with 4 KiB pages).
_HUGE_PAGE = 1 << 21


def _output_arrays(n_copies, d):
    """The kernel's two empty (n_copies, d) float64 outputs (``out``, ``samples``); from
    4 MiB each on, both views of ONE buffer, each starting on a 2 MiB boundary.

    Why (issue 18, MLMC 1 -> 2 threads): the kernel's threads first-touch the outputs, so
    the page faults and the kernel's zeroing of fresh memory happen inside the parallel
    region, and they scale poorly (about 3 ms of a 30 ms call at M = 10,000, d = 100). (1)
    numpy asks for huge pages on buffers of 4 MiB or more (``madvise(MADV_HUGEPAGE)``), but
    an unaligned 8 MB array still gets its ends as up to 1,024 4 KiB pages, each its own
    fault; aligned, it is all huge pages (measured: 88 instead of 902 faults per call). (2)
    One buffer instead of two: glibc returns a freed top-of-heap chunk to the system only
    beyond twice the largest chunk it has seen freed, so one freed buffer is kept and the
    next call's outputs reuse it without new faults, whereas two equal buffers freed
    together crossed that limit every call. The spare < 2 MiB per output is never touched;
    either view keeps the whole buffer alive."""
    nbytes = n_copies * d * 8
    if nbytes < 2 * _HUGE_PAGE:
        return np.empty((n_copies, d)), np.empty((n_copies, d))
    stride = -(-nbytes // _HUGE_PAGE) * _HUGE_PAGE
    buf = np.empty(stride + nbytes + _HUGE_PAGE, dtype=np.uint8)
    start = -buf.ctypes.data % _HUGE_PAGE
    return tuple(buf[lo:lo + nbytes].view(np.float64).reshape(n_copies, d)
                 for lo in (start, start + stride))


def _draws_kernel(oracle, mu, center, linear, spec, j_max, levels, base_level, n_copies,
                  bitgens, n_threads):
    from .._kernels import _mlmc

    kind, dom_a, dom_b, radius = spec
    d = center.shape[0]
    table = np.array([level_epochs(j, levels) for j in range(j_max + 1)], dtype=np.int64)
    out, samples = _output_arrays(n_copies, d)
    ks = np.empty(n_copies, dtype=np.int64)
    n_grads = np.empty(n_copies, dtype=np.int64)
    # The domain in coordinates relative to the prox centre (ball centre / box bounds minus c).
    rel_a = np.ascontiguousarray(dom_a - center) if kind else np.zeros(d)
    rel_b = np.ascontiguousarray(dom_b - center) if kind == 2 else np.zeros(d)
    # samples = center + out, and its finiteness, are computed by the kernel's threads (they
    # were the serial part of a call, issue 18); the same additions, so the same bits
    finite = _mlmc.mlmc_glm_batch(oracle.X, oracle.y, oracle.X @ center, oracle.row_norms,
                                  oracle.loss_kind, oracle.loss_param, oracle.clip, linear, mu,
                                  kind, rel_a, rel_b, radius, table, base_level, bitgens, out,
                                  ks, n_grads, n_threads, center=center, samples=samples)
    return out, ks, n_grads, samples, finite


def mlmc_draws(oracle, mu, center, *, j_max, n_copies=1, levels="epoch", base_level=0,
               linear=None, domain=None, random_state=None, n_threads=None):
    r"""Draw ``n_copies`` independent MLMC estimates of :math:`\arg\min_X f + \psi`.

    Parameters
    ----------
    oracle : callable or GLMOracle
        ``oracle(x, rng)``: unbiased stochastic subgradient of f. A :class:`GLMOracle` over a
        domain the kernel handles (whole space, :class:`L2Ball`, :class:`BoxDomain`) runs in
        the compiled parallel kernel ``_mlmc``; anything else runs in Python.
    mu : float
        Strong convexity of :math:`\psi(x) = (\mu/2)\|x - c\|^2 + \langle a, x\rangle`, > 0.
    center : array-like of shape (d,)
        Prox centre c.
    j_max : int
        Top level, in [1, 40]; with ``levels="paper"`` the budget :math:`T_{\max} = 2^{j_{\max}}`,
        with ``levels="epoch"`` (default) :math:`j_{\max}` epochs, :math:`16(2^{j_{\max}} - 1)`
        iterates. See :func:`j_max_from_bias`.
    n_copies : int, default=1
    levels : {"epoch", "paper"}, default="epoch"
    base_level : int, default=0
        :math:`\ell_0` in [0, j_max]: every draw runs at least this level (lower variance
        times cost, note 001 section 2.3). ``base_level=j_max`` turns the correction off: every
        draw is plain EpochSGD at the top level (the baseline of the bias comparisons).
    linear : array-like of shape (d,), optional
        Linear term a of psi.
    domain : Domain, optional
        Closed convex domain (default: the whole space).
    random_state : None, int, SeedSequence or Generator
    n_threads : int or None
        Threads of the kernel path (results do not depend on it).

    Returns
    -------
    MLMCDraws
    """
    mu, center, linear = check_psi(mu, center, linear)
    j_max, base_level = _check_levels(j_max, levels, base_level)
    n_copies = check_int(n_copies, "n_copies", low=1)
    domain = check_domain(domain, center.shape[0])
    if not callable(oracle):
        raise TypeError(f"oracle must be callable as oracle(x, rng); got "
                        f"{type(oracle).__name__}.")
    seed = check_random_state(random_state)
    n_blocks = -(-n_copies // COPY_BLOCK)
    spec = domain.kernel_spec(center.shape[0]) if isinstance(oracle, GLMOracle) else None
    if spec is not None:
        if oracle.n_features != center.shape[0]:
            raise ValueError(f"center must have length {oracle.n_features} (the problem's "
                             f"features); got {center.shape[0]}.")
        # No more threads than blocks: an idle OpenMP team costs milliseconds per call on a
        # busy host, which dominates the many small batches of the applications.
        threads = min(effective_n_threads(n_threads, work=n_copies * center.shape[0]),
                      n_blocks)
        # the block generators are seeded in the kernel, in C, bitwise those of
        # child_seed_sequences (issue 18: 625 of them in Python were 35% of 10,000 copies)
        out, ks, n_grads, samples, finite = _draws_kernel(
            oracle, mu, center, linear, spec, j_max, levels, base_level, n_copies,
            seed_words(seed), threads)
    else:
        domain_rel = domain.translate(center)
        bitgens = [BIT_GENERATOR(s) for s in child_seed_sequences(seed, n_blocks)]
        out = np.empty((n_copies, center.shape[0]))
        ks = np.empty(n_copies, dtype=np.int64)
        n_grads = np.empty(n_copies, dtype=np.int64)
        for m in range(n_copies):   # block b draws the K of its copies first
            ks[m] = level_from_raw(bitgens[m // COPY_BLOCK].random_raw())
        for m in range(n_copies):   # overflow is reported below, naming mu
            with np.errstate(over="ignore", invalid="ignore"):
                out[m], _, n_grads[m] = _draw_python(oracle, mu, center, linear, domain_rel,
                                                     j_max, levels, base_level, int(ks[m]),
                                                     bitgens[m // COPY_BLOCK])
        with np.errstate(over="ignore", invalid="ignore"):
            samples = center + out
        finite = all_finite(samples)
    if not finite:
        raise ValueError(f"mu = {mu!r} is too small for the oracle's gradients (or the oracle "
                         "returned NaN/inf): the EpochSGD iterates, steps ~ 1/(mu t), left the "
                         "float64 range; increase mu or rescale the oracle.")
    return MLMCDraws(samples, ks, n_grads, j_max, levels, base_level, offsets=out)


@dataclass(frozen=True)
class OptestResult:
    """OPTEST output: ``x`` (the average of ``draws.samples``) and the draws.

    Attributes
    ----------
    x : ndarray
        The estimate.
    draws : MLMCDraws
        The draws averaged.
    """

    x: np.ndarray
    draws: MLMCDraws

    @property
    def n_gradients(self):
        """int: the stochastic gradients used by all draws."""
        return int(self.draws.n_gradients.sum())


def _resolve(j_max, bias, n_copies, mse, lipschitz, mu, levels, base_level, c):
    if (j_max is None) == (bias is None):
        raise ValueError("give exactly one of j_max and bias.")
    if (n_copies is None) == (mse is None):
        raise ValueError("give exactly one of n_copies and mse.")
    if (bias is not None or mse is not None) and lipschitz is None:
        raise ValueError("lipschitz (the second-moment bound G of the oracle) is needed to "
                         "derive j_max from bias or n_copies from mse.")
    if bias is not None:
        mse_part = None if mse is None else np.sqrt(check_positive(mse, "mse") / 2.0)
        # Theorem 1: the bias must also be at most sigma / sqrt(2) for the MSE target.
        target = check_positive(bias, "bias") if mse_part is None else min(bias, mse_part)
        j_max = j_max_from_bias(target, lipschitz, mu, c=c, levels=levels)
    if mse is not None:
        n_copies = n_copies_from_variance(mse, lipschitz, mu, j_max, base_level=base_level, c=c)
    return j_max, n_copies


def optest(oracle, mu, center, *, j_max=None, bias=None, n_copies=None, mse=None,
           lipschitz=None, c=32.0, levels="epoch", base_level=0, linear=None, domain=None,
           random_state=None, n_threads=None):
    r"""OPTEST (Algorithm 1): the average of N independent MLMC draws.

    Give ``j_max`` or a bias target ``bias`` (then :math:`j_{\max}` from
    :func:`j_max_from_bias` with the ODC constant ``c``), and ``n_copies`` or a mean-squared-
    error target ``mse`` (:func:`n_copies_from_variance`); both derivations need
    ``lipschitz`` = G with :math:`E\|\hat\nabla f\|^2 \le G^2`. Theorem 1: with the paper's
    constants, :math:`\|E\hat x - x^*\| \le \delta` and :math:`E\|\hat x - x^*\|^2 \le
    \sigma^2`. Other arguments as in :func:`mlmc_draws`.

    Parameters
    ----------
    oracle : object
        Stochastic subgradient oracle of f (see :mod:`dpsco_core.mlmc.oracles`).
    mu : float
        Strong convexity of the regularizer :math:`\psi = (\mu/2)\|x - c\|^2`.
    center : array-like of shape (d,)
        c.
    j_max : int, optional
        Top level (or give ``bias``).
    bias : float, optional
        Target bias.
    n_copies : int, optional
        N (or give ``mse``).
    mse : float, optional
        Target mean squared error.
    lipschitz : float, optional
        G, needed by ``bias`` and ``mse``.
    c : float, default=32.0
        The ODC constant.
    levels : {"epoch", "paper"}, default="epoch"
        The level scheme.
    base_level : int, default=0
        :math:`\ell_0`.
    linear, domain : optional
        As in :func:`mlmc_draws`.
    random_state : None, int, SeedSequence or Generator
        Seeds the draws.
    n_threads : int, optional
        Threads; the result does not depend on it.

    Returns
    -------
    OptestResult
    """
    mu = check_positive(mu, "mu")
    j_max, n_copies = _resolve(j_max, bias, n_copies, mse, lipschitz, mu, levels, base_level, c)
    draws = mlmc_draws(oracle, mu, center, j_max=j_max, n_copies=n_copies, levels=levels,
                       base_level=base_level, linear=linear, domain=domain,
                       random_state=random_state, n_threads=n_threads)
    with np.errstate(over="ignore", invalid="ignore"):
        x = draws.mean
        if not all_finite(x):   # the sum of samples near 1.8e308 overflows; their mean may not
            x = draws.samples[0] + np.mean(draws.samples - draws.samples[0], axis=0)
    if not all_finite(x):
        raise ValueError("center is too large for mu: the mean of the draws exceeds the float64 "
                         "range.")
    return OptestResult(x, draws)


@dataclass(frozen=True)
class MoreauGradientResult:
    """MORGRADEST output: ``gradient`` :math:`\\lambda(y - \\hat x)`, ``prox`` :math:`\\hat x`.

    Attributes
    ----------
    gradient : ndarray
        The Moreau gradient estimate.
    prox : ndarray
        The prox point estimate.
    draws : MLMCDraws
        The underlying draws.
    """

    gradient: np.ndarray
    prox: np.ndarray
    draws: MLMCDraws


def moreau_gradient(oracle, y, lam, *, j_max=None, bias=None, n_copies=None, mse=None,
                    lipschitz=None, c=32.0, levels="epoch", base_level=0, domain=None,
                    random_state=None, n_threads=None):
    r"""MORGRADEST (Algorithm 2): a low-bias estimate of :math:`\nabla f_\lambda(y)`.

    :math:`f_\lambda(y) = \min_{x \in X} f(x) + (\lambda/2)\|x - y\|^2` is λ-smooth with
    :math:`\nabla f_\lambda(y) = \lambda(y - P_{f,\lambda}(y))` (Fact 1.2); the prox point is
    estimated by OPTEST with :math:`\psi = (\lambda/2)\|x - y\|^2` and the targets scaled by
    1/λ: ``bias`` δ and ``mse`` σ² refer to the gradient (Corollary 2: :math:`\|E\hat g -
    \nabla f_\lambda(y)\| \le \delta`, :math:`E\|\hat g - \nabla f_\lambda(y)\|^2 \le \sigma^2`).
    The smoothing is dimension-free (cost and λ do not depend on d).

    Parameters
    ----------
    oracle : object
        Stochastic subgradient oracle of f (see :mod:`dpsco_core.mlmc.oracles`).
    y : array-like of shape (d,)
        The point.
    lam : float
        λ > 0.
    j_max, bias, n_copies, mse, lipschitz, c, levels, base_level, domain : optional
        As in :func:`optest` (targets refer to the gradient).
    random_state : None, int, SeedSequence or Generator
        Seeds the draws.
    n_threads : int, optional
        Threads; the result does not depend on it.

    Returns
    -------
    MoreauGradientResult
    """
    lam = check_positive(lam, "lam")
    y = check_vector(y, "y")
    res = optest(oracle, lam, y, j_max=j_max, bias=None if bias is None else bias / lam,
                 n_copies=n_copies, mse=None if mse is None else mse / lam ** 2,
                 lipschitz=lipschitz, c=c, levels=levels, base_level=base_level, domain=domain,
                 random_state=random_state, n_threads=n_threads)
    with np.errstate(over="ignore", invalid="ignore"):
        gradient = lam * (y - res.x)
    if not all_finite(gradient):
        raise ValueError(f"lam = {lam!r} and y are too large: the Moreau gradient lam (y - x) "
                         "exceeds the float64 range.")
    return MoreauGradientResult(gradient, res.x, res.draws)
