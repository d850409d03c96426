r"""Private Frank-Wolfe in l1 geometry: Algorithm 3 of Asi, Feldman, Koren and Talwar (2021),
the private Frank-Wolfe of Talwar, Thakurta and Zhang (2015), and a projected DP-SGD baseline.

Implementation notes: ``shared/notes/004_l1.md`` (sections 3, 4, 8, 9). The compiled kernel is
``dpsco_core._kernels._frank_wolfe`` (fused batch gradient + report-noisy-max, lazy FW step);
its NumPy twin ``dpsco_core.reference.frank_wolfe``. ``vr_frank_wolfe`` and
``projected_dp_sgd_l1`` also take a stream of +-1 rows generated per batch
(:class:`~dpsco_core.datasets.RademacherLassoStream`; ``solvers/_row_source.py``).

Calibration and ledger (note 004, section 4; "strict" is the default)
-------------------------------------------------------------------------
Neighbouring relation: replace-one (the paper's). Scores are :math:`-\langle c_i, v\rangle`
over the vertices :math:`c_i`, with :math:`R = \max_i \|c_i\|_1`. Per-sample gradients are
clipped by the kernel so that :math:`\|\nabla f(x; z)\|_\infty \le L`. Replacing one sample
changes

* the root estimate (batch :math:`b`) by at most :math:`2L/b` in l-infinity: score
  sensitivity :math:`\Delta_0 = 2RL/b`;
* a right child at depth :math:`j` (batch :math:`b/2^j`), whose correction
  :math:`\nabla f(x; S) - \nabla f(x'; S)` has per-sample terms of l-infinity norm
  :math:`G_j \le \min(2L, \beta \|x - x'\|_1)`, by :math:`2 G_j 2^j / b`: sensitivity
  :math:`\Delta_j = 2 R G_j 2^j / b`. By default :math:`G_j = 2L` (enforced by clipping); with
  ``smoothness=beta`` (a declared, not enforced, bound) :math:`\|x - x'\|_1` is bounded by
  :math:`\mathrm{diam}_1 \sum \eta_k` over the :math:`2^{t-j}` steps between the parent and
  the child: a data-independent bound, since the step sizes are fixed in advance.

A sample placed at depth :math:`j` of phase :math:`t` influences exactly the :math:`2^{t-j}`
leaves of its vertex's subtree; every sample is placed at exactly one vertex (one secret
uniform permutation consumed in depth-first order), so a sample's privacy loss is that of
:math:`k = 2^{t-j}` adaptive report-noisy-max releases, each :math:`2\Delta_j/\lambda_t`-DP
(the factor 2: the paired scores of :math:`\pm e_j` move in opposite directions, so the
monotone factor 1 never applies). The run's guarantee is the maximum over the levels (t, j).

* Pure DP (Theorem 6): basic composition; :math:`\lambda_t = \max_j 2^{t-j} 2\Delta_j /
  \varepsilon`, i.e. :math:`8 R L 2^t / (b \varepsilon)` with the Lipschitz bound (the paper's
  ``"paper"`` calibration :math:`2 L D 2^t / (b\varepsilon)`, D the l1 diameter :math:`= 2R`,
  i.e. :math:`4 R L 2^t/(b\varepsilon)`, uses :math:`\Delta = DL/|S|`, half the replace-one
  bound; note 004, section 4 and errata 12).
* Approximate DP (Theorem 7, Lemma 4.4): a level's :math:`k` releases compose to
  :math:`\varepsilon_0 = \min(k\varepsilon_\ell,\ \rho + 2\sqrt{\rho\ln(1/\delta_0)})` with
  :math:`\rho = k\varepsilon_\ell^2/2` (pure DP implies zCDP, Bun and Steinke 2016, Prop. 3.3
  and 1.3; tighter than the paper's advanced composition, Lemma 2.2). At depth :math:`j` the
  :math:`p = 2^j` vertices' samples are shuffled by the secret permutation (the paper's
  reduction in the proof of Lemma 4.4), so amplification by shuffling applies: Feldman,
  McMillan and Talwar (2021), Theorem 3.8 [recalled, not re-derived]: :math:`p` adaptive
  :math:`(\varepsilon_0, \delta_0)`-DP randomizers, for :math:`\delta_s` with
  :math:`\varepsilon_0 \le \ln(p / (16 \ln(2/\delta_s)))`, give
  :math:`(\varepsilon_f, \delta_s + (e^{\varepsilon_f}+1)(1 + e^{-\varepsilon_0}/2) p
  \delta_0)` with :math:`\varepsilon_f = \ln(1 + \frac{e^{\varepsilon_0}-1}{e^{\varepsilon_0}+1}
  (\frac{8\sqrt{e^{\varepsilon_0}\ln(4/\delta_s)}}{\sqrt p} + \frac{8 e^{\varepsilon_0}}{p}))`.
  **Preconditions, enforced**: the amplified bound is used only at levels where the inequality
  on :math:`\varepsilon_0` holds (elsewhere the unamplified :math:`\varepsilon_0` at
  :math:`\delta` is used, which needs no precondition); the permutation must be uniform and
  secret (it is drawn from ``random_state``, never returned); ``delta <= 1/n`` (Theorem 7)
  and the replace-one relation are required, else ValueError. We take :math:`\delta_s =
  \delta/2` and :math:`\delta_0 = \delta / (3 p (e^{\varepsilon}+1))`, so the level's delta is
  at most :math:`\delta` whenever :math:`\varepsilon_f \le \varepsilon`; :math:`\lambda_t` is
  the smallest (bisection, conservative end) for which every level of phase t meets the target.

The privacy report is computed by :class:`~dpsco_core.privacy.PureDpAccountant` from the
event of the worst-placed sample (``SelfComposedDpEvent(EpsilonDeltaDpEvent(eps_leaf), k)``
in the pure case; the level's amplified ``EpsilonDeltaDpEvent`` in the approximate case);
:func:`vr_frank_wolfe_ledger` lists every level, and a test recomputes the report from it.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .._config import effective_n_threads
from .._kernels import _frank_wolfe, _noisy_max
from .._random import block_bit_generators, check_random_state, child_seed_sequences
from .._validation import check_delta, check_int, check_scalar
from ..exceptions import DPSCOWarning, external_stacklevel
from ..penalties import PENALTY_NONE
from ..privacy.budget import Budget, spend
from ..privacy.accountants import RdpAccountant
from ..privacy.conversions import zcdp_to_epsilon
from ..privacy.events import (EpsilonDeltaDpEvent, GaussianDpEvent, NeighboringRelation,
                              NonPrivateDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent)
from ..privacy.report import DEFAULT_ASSUMPTIONS, PrivacyReport, seed_assumptions
from ..public_bounds import _loss_smoothness
from ..result import History, Result
from ._common import check_noise_scale, check_problem, check_solver_epsilon, objective_or_inf
from ._row_source import is_sign_stream, row_source

if TYPE_CHECKING:
    from .._typing import ArrayLike, RandomStateLike
    from ..problems import Problem

__all__ = ["vr_frank_wolfe", "vr_frank_wolfe_ledger", "vr_frank_wolfe_schedule",
           "dyadic_tree", "ttz_frank_wolfe", "projected_dp_sgd_l1"]

_NOISE = {"laplace": _noisy_max.LAPLACE, "gumbel": _noisy_max.GUMBEL,
          "exponential": _noisy_max.EXPONENTIAL}
_SHUFFLE_ASSUMPTIONS = (
    "the sample-to-vertex assignment is a uniformly random permutation kept secret",
    "amplification by shuffling: Feldman, McMillan and Talwar 2021, Theorem 3.8 (constants "
    "recalled from the paper, not re-derived here)",
)


class PaperCalibrationWarning(DPSCOWarning):
    """The paper's noise formula gives a weaker guarantee than its nominal epsilon."""


# --------------------------------------------------------------------------------------------
# Domain, tree and schedule
# --------------------------------------------------------------------------------------------

class _Domain:
    """The polytope: "l1" (vertices +-radius e_j), "simplex" (radius e_j) or explicit vertices."""

    def __init__(self, domain, radius, d, center=None, outer_radius=None):
        self.center = None
        self.arms = None
        if outer_radius is not None and center is None:
            raise ValueError("outer_radius needs center.")
        if center is not None:
            if not (isinstance(domain, str) and domain == "l1"):
                raise ValueError("center needs domain='l1'.")
            c = np.array(center, dtype=np.float64)
            if c.shape != (d,) or not np.all(np.isfinite(c)):
                raise ValueError(f"center must be a finite vector of length {d}.")
            self.center = c
        if d < 1:
            raise ValueError(f"the number of features must be at least 1; got {d}.")
        if isinstance(domain, str):
            if domain not in ("l1", "simplex"):
                raise ValueError(f"domain must be 'l1', 'simplex' or an array of vertices; "
                                 f"got {domain!r}.")
            self.name = domain
            self.radius = check_scalar(radius, "radius", low=0.0)
            self.code = (_frank_wolfe.DOMAIN_L1_BALL if domain == "l1"
                         else _frank_wolfe.DOMAIN_SIMPLEX)
            self.n_vertices = 2 * d if domain == "l1" else d
            self.vertex_norm = self.radius
            self.vertices = None
        else:
            C = np.array(domain, dtype=np.float64)
            if C.ndim != 2 or C.shape[1] != d or C.shape[0] < 1 or not np.all(np.isfinite(C)):
                raise ValueError(f"domain must be 'l1', 'simplex' or a finite (m, {d}) array of "
                                 f"vertices with m >= 1; got an array of shape {C.shape}.")
            self.name, self.code, self.vertices = "vertices", _frank_wolfe.DOMAIN_NONE, C
            self.n_vertices = C.shape[0]
            self.vertex_norm = float(np.abs(C).sum(axis=1).max())
            self.radius = self.vertex_norm
            if self.vertex_norm == 0.0:
                raise ValueError("the vertices must not all be 0.")
        if outer_radius is not None:
            self._clip_arms(check_scalar(outer_radius, "outer_radius", low=0.0), d)
        # diam_1 <= 2 max ||c_i||_1 (equality for the l1 ball and the simplex).
        self.diameter = 2.0 * self.vertex_norm

    def _clip_arms(self, D, d):
        """Arms c +- a_j^+- e_j: the longest ones (at most R) that stay in {||x||_1 <= D}.

        ||c + s e_j||_1 = ||c||_1 - |c_j| + |c_j + s| <= D gives s <= D - ||c||_1 + |c_j| - c_j
        (the + arm) and s <= D - ||c||_1 + |c_j| + c_j (the - arm). Their hull lies in
        :math:`X \\cap B` and contains the l1 ball around c of radius min(R, D - ||c||_1).
        """
        c = self.center
        slack = D - float(np.abs(c).sum())
        if slack < -1e-12 * D:
            raise ValueError(f"center must lie in the l1 ball of radius outer_radius = {D!r}; "
                             f"got ||center||_1 = {float(np.abs(c).sum())!r}.")
        base = max(slack, 0.0) + np.abs(c)
        arms = np.minimum(self.radius, np.maximum(0.0, np.concatenate([base - c, base + c])))
        if not arms.max() > 0.0:
            raise ValueError("every arm of the clipped ball is 0 (center = 0 and "
                             "outer_radius = 0).")
        self.arms = arms
        self.name, self.code = "arms", _frank_wolfe.DOMAIN_NONE
        # scores are shifted by the common -<c, v>: the sensitivity is that of the arms
        self.vertex_norm = float(arms.max())
        self.radius = self.vertex_norm

    def start(self, d):
        if self.center is not None:
            return self.center.copy()
        if self.name == "l1":
            return np.zeros(d)
        if self.name == "simplex":
            return np.full(d, self.radius / d)
        return self.vertices.mean(axis=0)

    def contains(self, x, tol=1e-9):
        if self.name == "arms":
            return True
        if self.name == "l1":
            c = 0.0 if self.center is None else self.center
            return np.abs(x - c).sum() <= self.radius * (1 + tol)
        if self.name == "simplex":
            return x.min() >= -tol * self.radius and abs(x.sum() - self.radius) <= tol * max(
                1.0, self.radius) * x.size
        return True


def dyadic_tree(T):
    """Depth-first visit of the trees of phases 1..T: a list of ``(t, leaf, depth)``.

    ``depth`` is the depth of the vertex whose fresh samples the leaf's estimate adds: 0 for
    the root (leaf 0), ``t - ctz(leaf)`` for the right child entered just before leaf
    ``leaf >= 1`` (note 004, section 3.1: every leaf takes a Frank-Wolfe step).

    Parameters
    ----------
    T : int
        Number of phases, >= 1.

    Returns
    -------
    list of tuple of int
    """
    T = check_int(T, "T", low=1)
    out = []
    for t in range(1, T + 1):
        for leaf in range(2 ** t):
            out.append((t, leaf, 0 if leaf == 0 else t - ((leaf & -leaf).bit_length() - 1)))
    return out


def _samples_used(b, T):
    """b (T + T (T + 1) / 4): phase t uses b (1 + t/2) samples (note 004, section 3.1)."""
    return sum(b + t * b // 2 for t in range(1, T + 1))


def _log2(x):
    """log2 of x >= 0 (0 and underflowed products: below the smallest subnormal's -1074)."""
    return math.log2(x) if x > 0.0 else -1100.0


def _round_batch(b, T):
    return (int(b) >> T) << T


def vr_frank_wolfe_schedule(n, n_features, *, n_vertices=None, epsilon, delta=None,
                            radius=1.0, lipschitz=1.0, smoothness=None, batch="auto",
                            n_phases=None):
    """(b, T) of Algorithm 3: the root batch and the number of phases.

    ``batch="auto"`` (note 004, section 8): for each T, the largest b (a multiple of 2^T) with
    ``b (T + T (T + 1) / 4) <= n``; T minimises the master inequality
    ``D (L + beta D) sqrt(ln d / b) + beta D^2 / 2^T + noise`` with the noise term
    ``D L 2^T ln m / (b eps)`` (pure) or ``D L 2^(T/2) ln(n/delta) ln m / (b eps)`` (approximate);
    ``beta`` defaults to ``L / D`` when ``smoothness`` is not given. Only public quantities are
    used. ``batch="paper"``: ``b = n / ln^2 n`` and T from Theorem 6 (pure) or 7 (approximate)
    with the paper's D, the l1 diameter ``2 * radius``, clamped to ``[1, log2 b]``. An int: that root batch, with ``n_phases`` (or the largest T
    that fits).

    Parameters
    ----------
    n : int
        Public record count.
    n_features : int
        d.
    n_vertices : int, optional
        Number of vertices m (default 2d, the l1 ball).
    epsilon : float
        Target epsilon.
    delta : float, optional
        None: pure DP.
    radius : float, default=1.0
        D.
    lipschitz : float, default=1.0
        L.
    smoothness : float, optional
        beta (default L / D in the master inequality).
    batch : "auto", "paper" or int, default="auto"
        The rule for b.
    n_phases : int, optional
        T, with an int ``batch``.

    Returns
    -------
    tuple of int
        (b, T).
    """
    n = check_int(n, "n", low=2)
    d = check_int(n_features, "n_features", low=1)
    m = 2 * d if n_vertices is None else check_int(n_vertices, "n_vertices", low=1)
    if n_phases is not None:        # before n is blamed for an invalid n_phases
        n_phases = check_int(n_phases, "n_phases", low=1)
    D, L = radius, lipschitz
    if not math.isfinite(L):        # non-private run without a clip: any scale works
        L = D if smoothness is None else smoothness * D
    beta = L / D if smoothness is None else smoothness
    private = math.isfinite(epsilon)
    approx = delta is not None and delta > 0
    logm, logd = math.log(max(m, 2)), math.log(max(d, 2))

    def fits(b, T):
        return b >= 2 ** T and _samples_used(b, T) <= n

    if isinstance(batch, str) and batch == "paper":
        b = max(2, int(n / math.log(n) ** 2))
        eps = epsilon if private else 1e12
        Dp = 2.0 * D     # Theorems 6 and 7: D is the l1 diameter, twice the radius
        if approx:
            ratio = b * eps * beta * Dp / (L * math.log(n / delta) * logm)
        else:
            ratio = b * eps * beta * Dp / (L * logm)
        if math.isfinite(ratio):
            log_ratio = math.log2(max(ratio, 2.0))
        else:
            # the product overflowed (eps = 1e12 of a non-private run times beta = L / D =
            # 1e300, L / D itself, or n / delta) and int(log2(inf)) raised OverflowError:
            # log2 of it summed term by term (T is clamped to log2 b below)
            log_beta = (_log2(L) - _log2(D) if smoothness is None else _log2(beta))
            log_ratio = max(_log2(b) + _log2(eps) + log_beta + _log2(Dp) - _log2(L)
                            - _log2(logm)
                            - (_log2(math.log(n) - math.log(delta)) if approx else 0.0), 1.0)
        T = (2.0 / 3.0 if approx else 0.5) * log_ratio
        T = max(1, min(int(T), int(math.log2(b))))
        while T > 1 and not fits(_round_batch(b, T), T):
            T -= 1
        b = _round_batch(b, T)
        if not fits(b, T):
            raise ValueError(f"n={n} (the problem's sample count) is too small for Algorithm 3 "
                             "(needs b (1.5) <= n, b >= 2).")
        return b, T
    if not (isinstance(batch, str) and batch == "auto"):
        b = check_int(batch, "batch", low=2)
        if n_phases is None:
            T = 1
            while fits(_round_batch(b, T + 1), T + 1):
                T += 1
        else:
            T = check_int(n_phases, "n_phases", low=1)
        b = _round_batch(b, T)
        if not fits(b, T):
            raise ValueError(f"batch={batch} with {T} phases needs b >= 2^T and "
                             f"b (T + T (T + 1) / 4) <= n={n}.")
        return b, T
    best = None
    for T in range(1, int(math.log2(n)) + 1):
        b = _round_batch(n // (T + T * (T + 1) // 4 + (1 if T * (T + 1) % 4 else 0)), T)
        while b >= 2 ** T and _samples_used(b, T) > n:
            b -= 2 ** T
        if not fits(b, T):
            break
        if n_phases is not None and T != n_phases:
            continue
        stat = D * (L + beta * D) * math.sqrt(logd / b) + beta * D * D / 2 ** T
        if private:
            growth = 2 ** (T / 2) * math.log(n / delta) if approx else 2 ** T
            stat += D * L * growth * logm / (b * epsilon)
        if best is None or stat < best[0]:
            best = (stat, b, T)
    if best is None:
        raise ValueError(f"n={n} (the problem's sample count) is too small for Algorithm 3 with "
                         f"n_phases={n_phases}.")
    return best[1], best[2]


# --------------------------------------------------------------------------------------------
# Sensitivities and the privacy ledger
# --------------------------------------------------------------------------------------------

def _step_sum(k_first, count):
    """sum_{k = k_first}^{k_first + count - 1} 2 / (k + 1)."""
    k = np.arange(k_first, k_first + count, dtype=np.float64)
    return float(np.sum(2.0 / (k + 1.0)))


def _sensitivities(t, b, vertex_norm, lipschitz, smoothness, diameter):
    """Score sensitivities Delta_j, j = 0..t, of phase t (replace-one; module docstring)."""
    k0 = 2 ** t - 2                       # Frank-Wolfe steps before phase t
    delta = np.empty(t + 1)
    delta[0] = 2.0 * vertex_norm * lipschitz / b
    for j in range(1, t + 1):
        G = 2.0 * lipschitz
        if smoothness is not None:
            # First right child at depth j (leaf 2^(t-j)) follows the largest steps k0+1...
            G = min(G, smoothness * diameter * _step_sum(k0 + 1, 2 ** (t - j)))
        delta[j] = 2.0 * vertex_norm * G * 2 ** j / b
    return delta


def _shuffle_epsilon(eps0, p, delta_s):
    """FMT21 Theorem 3.1/3.8 epsilon for p shuffled eps0-randomizers, or None if the
    precondition eps0 <= ln(p / (16 ln(2/delta_s))) fails."""
    if p < 2 or eps0 > math.log(p / (16.0 * math.log(2.0 / delta_s))):
        return None
    e0 = math.exp(eps0)
    return math.log1p((e0 - 1.0) / (e0 + 1.0) * (8.0 * math.sqrt(e0 * math.log(4.0 / delta_s))
                                                 / math.sqrt(p) + 8.0 * e0 / p))


def _compose_pure(k, eps_leaf, delta0):
    """k adaptive eps_leaf-DP releases: (eps, delta) by basic composition or through zCDP."""
    basic = k * eps_leaf
    if delta0 <= 0.0 or k == 1:
        return basic, 0.0
    z = zcdp_to_epsilon(k * eps_leaf ** 2 / 2.0, delta0)
    return (z, delta0) if z < basic else (basic, 0.0)


def _level(k, p, eps_leaf, epsilon, delta):
    """Guarantee (eps, delta, amplified) of one sample at a level with k leaves, p vertices."""
    if delta is None:
        return k * eps_leaf, 0.0, False
    eps_a, delta_a = _compose_pure(k, eps_leaf, delta)
    delta_s = delta / 2.0
    if epsilon < 700.0:
        delta0 = delta / (3.0 * p * (math.exp(epsilon) + 1.0))
    else:   # exp(epsilon) overflows (OverflowError) from about 709: the same value, rescaled
        delta0 = delta * math.exp(-epsilon) / (3.0 * p * (1.0 + math.exp(-epsilon)))
    eps0, d0 = _compose_pure(k, eps_leaf, delta0)
    eps_f = _shuffle_epsilon(eps0, p, delta_s)
    if eps_f is not None and eps_f < eps_a and eps_f < 700.0:
        total = delta_s + (math.exp(eps_f) + 1.0) * (1.0 + math.exp(-eps0) / 2.0) * p * d0
        return eps_f, total, True
    return eps_a, delta_a, False


def _phase_levels(t, lam, sens, epsilon, delta):
    eps_leaf = 2.0 * sens / lam
    return [_level(2 ** (t - j), 2 ** j, eps_leaf[j], epsilon, delta) for j in range(t + 1)]


def _calibrate_phase(t, sens, epsilon, delta):
    """Smallest lambda_t (conservative end of a bisection) meeting (epsilon, delta) per level."""
    pure = max(2 ** (t - j) * 2.0 * sens[j] / epsilon for j in range(t + 1))
    if delta is None:
        return pure

    def ok(lam):
        return all(e <= epsilon and dl <= delta for e, dl, _ in
                   _phase_levels(t, lam, sens, epsilon, delta))
    hi, lo = pure, pure / 2.0
    while ok(lo) and lo > pure * 1e-6:
        hi, lo = lo, lo / 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def vr_frank_wolfe_ledger(*, b, T, lambdas, vertex_norm, lipschitz, epsilon=math.inf,
                          delta=None, smoothness=None, diameter=None):
    """Every level of the tree with its privacy loss, for noise scales ``lambdas[t-1]``.

    Returns a list of dicts ``{"phase", "depth", "leaves", "vertices", "batch", "sensitivity",
    "eps_leaf", "epsilon", "delta", "amplified"}``, one per (t, j). ``epsilon`` (the target)
    only sets delta_0 of the shuffling bound (module docstring).

    Parameters
    ----------
    b : int
        Root batch size.
    T : int
        Number of phases.
    lambdas : sequence of float
        Report-noisy-max noise scale of each phase.
    vertex_norm : float
        :math:`R = \\max_i \\|c_i\\|_1`.
    lipschitz : float
        L, the l-infinity clip of the per-sample gradients.
    epsilon : float, default=inf
        The target (sets delta_0 of the shuffling bound).
    delta : float, optional
        None: pure DP; else the approximate-DP ledger with shuffling.
    smoothness : float, optional
        Declared beta (tightens the right children's sensitivity).
    diameter : float, optional
        l1 diameter of the domain (with ``smoothness``).

    Returns
    -------
    list of dict
    """
    diameter = 2.0 * vertex_norm if diameter is None else diameter
    rows = []
    for t in range(1, T + 1):
        sens = _sensitivities(t, b, vertex_norm, lipschitz, smoothness, diameter)
        levels = _phase_levels(t, lambdas[t - 1], sens, epsilon, delta)
        for j, (e, dl, amp) in enumerate(levels):
            rows.append({"phase": t, "depth": j, "leaves": 2 ** (t - j), "vertices": 2 ** j,
                         "batch": b >> j, "sensitivity": float(sens[j]),
                         "eps_leaf": float(2.0 * sens[j] / lambdas[t - 1]), "epsilon": e,
                         "delta": dl, "amplified": amp})
    return rows


def _worst_event(ledger, approx):
    """The run's event and its largest-epsilon row. Each record lies in the batches of one
    row, so the run is as private as its least private row; with the shuffled (epsilon,
    delta) ledger that is ``(max epsilon, max delta)`` over the rows, which dominates each
    row's pair (session 16: the largest-epsilon row's own delta, 0 for an unamplified row,
    under-stated the delta that another row needs, and a budget charged it as pure)."""
    worst = max(ledger, key=lambda r: (r["epsilon"], r["delta"]))
    if approx:
        return EpsilonDeltaDpEvent(worst["epsilon"], max(r["delta"] for r in ledger)), worst
    return SelfComposedDpEvent(EpsilonDeltaDpEvent(worst["eps_leaf"]), worst["leaves"]), worst


# --------------------------------------------------------------------------------------------
# Shared argument handling
# --------------------------------------------------------------------------------------------

def _check_common(problem, epsilon, delta, lipschitz, noise, allow_stream=False):
    if is_sign_stream(problem):
        if not allow_stream:
            raise TypeError("this solver needs a Problem (full-batch gradients); sign-row "
                            "streams are taken by vr_frank_wolfe and projected_dp_sgd_l1.")
    else:
        problem = check_problem(problem)
    if problem.is_sparse:
        raise ValueError("the Frank-Wolfe solvers take dense X (sparse support is future work).")
    if problem.penalty.kind != PENALTY_NONE:
        raise ValueError("the Frank-Wolfe solvers minimize the loss over a polytope: use "
                         f"penalty=None; got {problem.penalty!r}.")
    if problem.loss.lipschitz_in_margin is None and problem.loss.smoothness is None:
        raise ValueError(f"the loss must have a derivative; got {problem.loss!r}.")
    epsilon = check_solver_epsilon(epsilon)
    if delta is not None:
        delta = check_delta(delta)
    lipschitz = check_scalar(lipschitz, "lipschitz", low=0.0, allow_inf=not math.isfinite(
        epsilon))
    if not isinstance(noise, str) or noise not in _NOISE:
        raise ValueError(f"noise must be one of {sorted(_NOISE)}; got {noise!r}.")
    return problem, epsilon, delta, lipschitz


class _Stepper:
    """Runs one leaf (kernel + selection) and the Frank-Wolfe update on x = alpha w."""

    def __init__(self, source, dom, lipschitz, kind):
        self.source, self.dom, self.kind = source, dom, kind
        # ||grad f||_inf <= L enforced by clipping l' at L / ||a_i||_inf.
        self.clip = source.row_clip(lipschitz, "inf")
        d = source.n_features
        self.d = d
        m = dom.n_vertices          # 2d (l1 ball, arms), d (simplex) or the vertices
        self.n_blocks = -(-m // _frank_wolfe.FW_BLOCK_SIZE)

    def leaf(self, rows, w, alpha, w_prev, alpha_prev, v_prev, correction, seed_seq, scale):
        v = np.empty(self.d)
        resid = np.empty(rows.size)
        gens = (block_bit_generators(seed_seq, self.n_blocks) if scale > 0 else [])
        sel = self.source.gradient(rows, self.clip, w, alpha, w_prev, alpha_prev, v_prev,
                                   correction, self.dom.code, self.dom.radius, scale, self.kind,
                                   gens, resid, v)
        if self.dom.arms is not None:
            # -<c +- a e_j - c, v>: the common -<c, v> dropped (report-noisy-max is
            # invariant to a common shift)
            scores = -np.concatenate([v, -v]) * self.dom.arms
            if scale > 0:
                i, _ = _noisy_max.report_noisy_max(scores, scale, self.kind, gens,
                                                   self.source.threads(scores.size))
            else:
                i = int(np.argmax(scores))
            sel = (int(i), 1)
        elif self.dom.vertices is not None:
            scores = -(self.dom.vertices @ v)
            if scale > 0:
                i, _ = _noisy_max.report_noisy_max(scores, scale, self.kind, gens,
                                                   self.source.threads(scores.size))
            else:
                i = int(np.argmax(scores))
            sel = (int(i), 1)
        return v, sel

    def step(self, w, alpha, sel, eta):
        j, sign = sel
        if self.dom.arms is not None:
            # x <- (1 - eta) x + eta (c +- a_j e_j), kept unscaled (alpha = 1 throughout)
            i, d = j, self.d
            w *= alpha * (1.0 - eta)
            w += eta * self.dom.center
            w[i % d] += eta * (1.0 if i < d else -1.0) * self.dom.arms[i]
            return 1.0
        if self.dom.center is not None:
            # x <- (1 - eta) x + eta (c + sign R e_j), kept unscaled (alpha = 1 throughout)
            w *= alpha * (1.0 - eta)
            w += eta * self.dom.center
            w[j] += eta * sign * self.dom.radius
            return 1.0
        if self.dom.vertices is not None:
            w *= alpha * (1.0 - eta)
            w += eta * self.dom.vertices[j]
            return 1.0
        return _frank_wolfe.lazy_fw_step(w, alpha, j, sign * self.dom.radius, eta)


def _report(event, delta, assumptions, target, approx, calibration):
    rep = PrivacyReport.from_event(
        event, delta=delta if delta is not None else 0.0, accountant="basic-composition",
        neighboring_relation=NeighboringRelation.REPLACE_ONE,
        budget_split={"optimization": 1.0},
        assumptions=tuple(DEFAULT_ASSUMPTIONS) + tuple(assumptions))
    if calibration != "paper" and math.isfinite(target) and rep.epsilon > target:
        raise RuntimeError(f"privacy calibration error: the ledger gives epsilon="
                           f"{rep.epsilon!r} > target {target!r}.")
    return rep


def _fit_to_report(scales, reported_epsilon, target):
    """Noise scales, raised by a relative 1e-12 (doubling) until ``reported_epsilon(scales)``,
    the epsilon of the privacy report, is at most ``target``.

    The calibrations solve for epsilon exactly in floating point; the accountants round their
    bounds up (RDP: ``privacy._checks.round_up``, 1e-13 relative plus an ulp per step; basic
    composition: to the next float when a sum such as ``leaves * eps_leaf`` is inexact), so
    without this step a report could state ``epsilon = 1.0000000000003`` for a target of 1: a
    budget exceeded, if only by rounding. More noise never costs privacy.
    """
    scales = list(scales)
    bump = 1e-12
    for _ in range(60):
        # inf (or astronomically large) noise cannot be sampled: the selection would read
        # NaN scores (an out-of-range vertex); refused naming epsilon, before any charge
        check_noise_scale(scales, target, "report-noisy-max noise scale")
        if reported_epsilon(scales) <= target:
            return scales
        scales = [s * (1.0 + bump) for s in scales]
        bump *= 2.0
    # 60 doublings of the bump multiply the noise by more than 1e57 without reaching the
    # target: the report's conversion at this delta has a floor above it (e.g. the RDP
    # conversion at delta=1e-300), a public limit of (epsilon, delta), not a calibration bug
    raise ValueError(f"epsilon={target!r} cannot be met at this delta: the privacy report "
                     f"stays above it for every noise scale tried (up to {max(scales):.3g}); "
                     "use a larger epsilon or delta.")


# --------------------------------------------------------------------------------------------
# Algorithm 3
# --------------------------------------------------------------------------------------------

def vr_frank_wolfe(problem: Problem | Any, *, epsilon: float, delta: float | None = None,
                   radius: float = 1.0, lipschitz: float = 1.0, domain: str = "l1",
                   smoothness: float | None = None, noise: str = "laplace",
                   calibration: str = "strict", batch: int | str = "auto",
                   n_phases: int | None = None, random_state: RandomStateLike = None,
                   n_threads: int | None = None, record_history: bool = True,
                   budget: Budget | None = None, center: ArrayLike | None = None,
                   outer_radius: float | None = None) -> Result:
    r"""Private variance-reduced ("dyadic") Frank-Wolfe: Algorithm 3 of Asi et al. (2021).

    Minimizes :math:`F(x) = \frac1n\sum_i \ell(\langle a_i, x\rangle, y_i)` over a polytope
    (the l1 ball of radius D by default) in one pass over the data. Phase :math:`t = 1..T` owns
    a complete binary tree of depth t; the root gets b fresh samples and each right child at
    depth j gets :math:`b/2^j`, all taken from one secret uniform permutation in depth-first
    order, so every sample is used at exactly one vertex. The estimate at a right child is the
    SPIDER correction :math:`v = v_{parent} + \nabla f(x; S) - \nabla f(x_{parent}; S)`;
    every leaf (all :math:`2^t` of them) selects a vertex by report-noisy-max on
    :math:`-\langle c_i, v\rangle` and steps :math:`x \leftarrow (1-\eta_k) x + \eta_k c_{i^*}`
    with :math:`\eta_k = 2/(k+1)` and a global step counter k (note 004, section 6, fixes 10
    and 11). :math:`K = 2^{T+1} - 2` steps in all.

    Parameters
    ----------
    problem : Problem or sign-row stream
        Dense X, a smooth loss ("squared", "half_squared", "logistic" or "huber": the
        variance reduction's analysis needs beta-smooth losses; "hinge" and "absolute" raise
        ValueError), no penalty; or a stream of +-1 rows such as
        :class:`~dpsco_core.datasets.RademacherLassoStream`, whose batches are generated on
        the fly (``sign_rows``) and run through the packed-sign kernel (bitwise the dense
        kernel's result on the same rows). With a stream the history records the stream's
        ``objective`` (the population objective for the Rademacher LASSO).
    epsilon : float
        Target epsilon in (0, inf]; inf runs without noise (the non-private SPIDER-FW).
    delta : float or None, default=None
        None: pure epsilon-DP (Theorem 6). A float in (0, 1/n]: (epsilon, delta)-DP with
        amplification by shuffling (Theorem 7; module docstring for the preconditions).
    radius : float, default=1.0
        D > 0: the l1-ball radius, or the simplex total.
    lipschitz : float, default=1.0
        L > 0 with :math:`\|\nabla f(x; z)\|_\infty \le L`, **enforced** by clipping
        :math:`\ell'` per row at :math:`L / \|a_i\|_\infty`.
    domain : {"l1", "simplex"} or array of shape (m, d), default="l1"
        The l1 ball :math:`\{\|x\|_1 \le D\}`, the simplex :math:`\{x \ge 0, \sum x = D\}`,
        or the convex hull of the given vertices (radius is then ignored).
    smoothness : float or None, default=None
        A declared bound beta on the l1 smoothness of every f(., z). Used by the ``"auto"``
        (b, T) choice and, under "strict", to shrink the right-child sensitivity (listed as an
        assumption, since clipping does not enforce it).
    noise : {"laplace", "gumbel", "exponential"}, default="laplace"
        Report-noisy-max noise (Laplace: the paper; Gumbel: the exponential mechanism;
        exponential: permute-and-flip); all :math:`2\Delta/\lambda`-DP per release.
    calibration : {"strict", "paper"}, default="strict"
        ``"strict"``: the replace-one sensitivities of the module docstring. ``"paper"``: the
        paper's :math:`\lambda_t = 2 L D 2^t / (b\varepsilon)` (pure, Theorem 6) or
        :math:`L D 2^{T/2} \ln(n/\delta) / (b \varepsilon)` (approximate, Theorem 7), with the
        paper's D the l1 **diameter** of the domain (:math:`2 \times` ``radius`` for the l1 ball
        and the simplex; :math:`2\max_i\|c_i\|_1` for explicit vertices), so
        :math:`\lambda_t = 4 R L 2^t / (b\varepsilon)` on the l1 ball of radius R; the report
        then states the guarantee the strict ledger proves for those scales (pure: twice the
        target, since strict is :math:`8 R L 2^t / (b\varepsilon)`; a warning says so).
    batch : "auto", "paper" or int, default="auto"
        Root batch b; see :func:`vr_frank_wolfe_schedule`.
    n_phases : int, optional
        T (default: chosen with b).
    random_state : None, int, SeedSequence or Generator
        None (default) for a real release: the permutation must be secret.
    n_threads : int or None
        Kernel threads; the result does not depend on it.
    record_history : bool, default=True
        Record F(x) after every phase.
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged with the run's event (replace-one)
        before the data are read; refused runs read nothing. With ``delta`` the event is an
        (epsilon, delta) guarantee with no RDP curve: use
        ``Budget(..., accountant="basic-composition")``.
    center : array of shape (n_features,), optional
        l1 domain only: the ball :math:`\{\|x - c\|_1 \le R\}` around a **public** c (the
        domain restriction of the strongly convex reduction, section 5; Algorithm 3 has no
        starting point: its first step, :math:`\eta_1 = 1`, lands on a vertex). Its vertices
        :math:`c \pm R e_j` score :math:`-\langle c, v\rangle \mp R v_j`; the common
        term shifts every score alike, which leaves report-noisy-max's output distribution
        unchanged, so the sensitivities and the ledger are those of the radius-R ball at 0.
    outer_radius : float, optional
        With ``center``: D of the constraint set :math:`X = \{\|x\|_1 \le D\}` that the
        ball must stay in. Each vertex :math:`c \pm R e_j` is pulled toward c to the
        longest arm :math:`c \pm a_j^\pm e_j` (:math:`a \le R`) inside X, so the domain is
        the polytope :math:`\mathrm{conv}\{c \pm a_j^\pm e_j\} \subseteq X \cap B`, with 2d
        public vertices (c is public), as Algorithm 3 needs; it contains the l1 ball around c
        of radius :math:`\min(R, D - \|c\|_1)` and every inward arm in full, but not all of
        :math:`X \cap B` when c is near the boundary of X (that intersection is not the hull
        of 2d known points). The scores are :math:`\mp a_j^\pm v_j` (the common
        :math:`-\langle c, v\rangle` dropped), so the sensitivities and the ledger are those
        of the ball of radius :math:`\max a \le R`.

    Returns
    -------
    Result
        ``coef`` (x_K), ``privacy`` (report from the ledger's worst level), ``history`` (per
        phase), ``stats`` (b, T, K, lambdas, samples used, gradient evaluations, ledger, time).

    Notes
    -----
    **Privacy guarantee.** Pure :math:`\varepsilon`-DP (``delta=None``) or
    :math:`(\varepsilon, \delta)`-DP, replace-one, by report-noisy-max at every leaf composed
    per sample over the leaves of its vertex (basic composition, or zCDP + amplification by
    shuffling), maximized over the tree levels; see the module docstring. Assumptions: n and
    (L, D, beta) are public; clipping enforces L; the permutation is secret.

    References
    ----------
    Asi, Feldman, Koren and Talwar, "Private Stochastic Convex Optimization: Optimal Rates in
    l1 Geometry", ICML 2021: Algorithm 3, Lemmas 4.1, 4.4, Theorems 6 and 7.
    """
    problem, epsilon, delta, lipschitz = _check_common(problem, epsilon, delta, lipschitz, noise,
                                                       allow_stream=True)
    # Smoothness is a utility requirement, not a privacy one (clipping enforces L, which is
    # all Lemma 4.1 uses): the SPIDER corrections' variance (Lemma 4.3) and the descent step
    # of Theorems 6 and 7 need beta. Checked at any epsilon, before anything is charged.
    _loss_smoothness(problem.loss, "the l1 smoothness beta that vr_frank_wolfe's "
                     "variance-reduced gradient estimate needs (Asi et al. 2021, Lemma 4.3, "
                     "Theorems 6 and 7)", fix="; for a non-smooth loss use "
                     "localized_mirror_descent (Algorithm 2) or ttz_frank_wolfe")
    if calibration not in ("strict", "paper"):
        raise ValueError(f"calibration must be 'strict' or 'paper'; got {calibration!r}.")
    n, d = problem.n_samples, problem.n_features
    dom = _Domain(domain, radius, d, center, outer_radius)
    if smoothness is not None:
        smoothness = check_scalar(smoothness, "smoothness", low=0.0)
    private = math.isfinite(epsilon)
    approx = delta is not None
    if approx and private and delta > 1.0 / n:
        raise ValueError(f"delta must be in (0, 1/n] = (0, {1.0 / n:.3g}] for the shuffled "
                         f"(epsilon, delta) analysis (Theorem 7); got {delta!r}.")
    if n < 2:
        raise ValueError(f"vr_frank_wolfe needs a problem with at least 2 samples; got n={n}.")
    b, T = vr_frank_wolfe_schedule(n, d, n_vertices=dom.n_vertices, epsilon=epsilon,
                                   delta=delta, radius=dom.radius, lipschitz=lipschitz,
                                   smoothness=smoothness, batch=batch, n_phases=n_phases)
    assumptions = []
    if smoothness is not None and calibration == "strict" and private:
        assumptions.append(f"every f(., z) is {smoothness:g}-smooth in l1 (declared, not "
                           "enforced)")
    if approx and private:
        assumptions.extend(_SHUFFLE_ASSUMPTIONS)
    sens_beta = smoothness if calibration == "strict" else None
    if private and not 0.0 < 2.0 * dom.vertex_norm * lipschitz / b < math.inf:
        # the noise is calibrated to these sensitivities: 0 (underflow) made it NaN
        raise ValueError(f"the scores' sensitivity 2 R L / b is "
                         f"{2.0 * dom.vertex_norm * lipschitz / b!r} in floating point "
                         f"(R = {dom.vertex_norm!r}, the domain's largest vertex norm, from "
                         f"radius / domain; lipschitz={lipschitz!r}; b={b}): rescale them.")
    if private:
        # The rows' delta target is delta itself: the basic-composition report sums exactly
        # (PureDpAccountant rounds up only an inexact sum), so the run's delta, the rows'
        # largest, is reported as it is, and a run whose largest row delta is delta reports
        # a finite epsilon at delta (session 17; the rows used to target a relative 1e-9
        # below delta, as the old rounding put a run's delta above the rows' largest).
        if calibration == "strict":
            lambdas = [_calibrate_phase(t, _sensitivities(t, b, dom.vertex_norm, lipschitz,
                                                          sens_beta, dom.diameter),
                                        epsilon, delta) for t in range(1, T + 1)]
        # The paper's D is the l1 diameter of X (Theorems 6 and 7 assume diam_1(X) <= D; the
        # proof of Theorem 6 bounds one Frank-Wolfe move by eta D): twice the l1-ball radius.
        elif approx:
            lam = lipschitz * dom.diameter * 2 ** (T / 2) * math.log(n / delta) / (b * epsilon)
            lambdas = [lam] * T
        else:
            lambdas = [2.0 * lipschitz * dom.diameter * 2 ** t / (b * epsilon)
                       for t in range(1, T + 1)]

        def ledger_event(lams):
            rows = vr_frank_wolfe_ledger(b=b, T=T, lambdas=lams, vertex_norm=dom.vertex_norm,
                                         lipschitz=lipschitz, epsilon=epsilon, delta=delta,
                                         smoothness=sens_beta, diameter=dom.diameter)
            return rows, _worst_event(rows, approx)[0]

        if calibration == "strict":
            lambdas = _fit_to_report(
                lambdas, lambda lams: _report(ledger_event(lams)[1], delta, (), math.inf, approx,
                                              calibration).epsilon, epsilon)
        ledger, event = ledger_event(lambdas)
        check_noise_scale(lambdas, epsilon, "report-noisy-max noise scale")
    else:
        lambdas, ledger, event = [0.0] * T, [], NonPrivateDpEvent()
    effective_n_threads(n_threads)     # validates n_threads before the charge
    spend(budget, event, neighboring_relation=NeighboringRelation.REPLACE_ONE, delta=delta)

    source = row_source(problem, n_threads)
    seed_seq = check_random_state(random_state)
    perm_seq, noise_seq = child_seed_sequences(seed_seq, 2)
    perm = np.random.Generator(block_bit_generators(perm_seq, 1)[0]).permutation(n)
    perm = perm.astype(np.intp)
    stepper = _Stepper(source, dom, lipschitz, _NOISE[noise])
    start = time.perf_counter()
    w, alpha = dom.start(d), 1.0
    k, cursor, grad_evals = 0, 0, 0
    hist_k, hist_obj = [0], [objective_or_inf(problem, alpha * w)] if record_history else []
    for t in range(1, T + 1):
        snaps_w, snaps_a, snaps_v = [None] * (t + 1), [0.0] * (t + 1), [None] * (t + 1)
        for leaf in range(2 ** t):
            if leaf == 0:
                j, correction = 0, False
                size, prev = b, 0
            else:
                j = t - ((leaf & -leaf).bit_length() - 1)
                correction, size, prev = True, b >> j, j - 1
            rows = perm[cursor:cursor + size]
            cursor += size
            leaf_seq = child_seed_sequences(noise_seq, 1, offset=k)[0]
            v, sel = stepper.leaf(rows, w, alpha, snaps_w[prev] if correction else w,
                                  snaps_a[prev], snaps_v[prev] if correction else w,
                                  correction, leaf_seq, lambdas[t - 1])
            grad_evals += size * (2 if correction else 1)
            snap = w.copy()
            for jj in range(j, t + 1):    # the vertex and its left-child chain share x and v
                snaps_w[jj], snaps_a[jj], snaps_v[jj] = snap, alpha, v
            k += 1
            alpha = stepper.step(w, alpha, sel, 2.0 / (k + 1))
        if record_history:
            hist_k.append(k)
            hist_obj.append(objective_or_inf(problem, alpha * w))
    elapsed = time.perf_counter() - start
    coef = alpha * w
    if dom.name == "arms":    # final safety clamp into X (rounding only)
        norm = np.abs(coef).sum()
        if norm > outer_radius:
            coef = coef * (outer_radius / norm)
    if dom.name == "l1":      # final safety clamp (rounding only; note 004, section 9.3)
        c = dom.center if dom.center is not None else 0.0
        norm = np.abs(coef - c).sum()
        if norm > dom.radius:
            coef = c + (coef - c) * (dom.radius / norm)
    if calibration == "paper" and private:
        assumptions.append("calibration='paper': noise scales from the paper's formulas; "
                           "epsilon is what the strict replace-one ledger proves for them")
    report = _report(event, delta, [*assumptions, *seed_assumptions(random_state)], epsilon,
                     approx, calibration)
    if calibration == "paper" and private and report.epsilon > epsilon * (1 + 1e-9):
        warnings.warn(f"calibration='paper' gives epsilon={report.epsilon:.4g} under the "
                      f"strict replace-one analysis (target {epsilon:g}).",
                      PaperCalibrationWarning, stacklevel=external_stacklevel())
    stats = {"time": elapsed, "batch": b, "n_phases": T, "steps": k, "samples_used": cursor,
             "gradient_evaluations": grad_evals, "lambdas": list(lambdas),
             "calibration": calibration, "noise": noise, "ledger": ledger,
             "privacy_mode": "approx" if approx else "pure"}
    # "passes" here: the fraction of the K Frank-Wolfe steps done at each record.
    history = History(np.asarray(hist_k, dtype=float) / max(k, 1), np.asarray(hist_obj))
    return Result(coef=coef, privacy=report, history=history, stats=stats)


# --------------------------------------------------------------------------------------------
# Baselines
# --------------------------------------------------------------------------------------------

def _rdp_epsilon_selfcomposed(eps_it, count, delta):
    acc = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPSCOWarning)
        return acc.compose(EpsilonDeltaDpEvent(eps_it), count).get_epsilon(delta)


def ttz_frank_wolfe(problem: Problem | Any, *, epsilon: float, delta: float | None = None,
                    radius: float = 1.0, lipschitz: float = 1.0, domain: str = "l1",
                    n_iter: int | None = None, noise: str = "laplace",
                    random_state: RandomStateLike = None, n_threads: int | None = None,
                    budget: Budget | None = None) -> Result:
    r"""Private Frank-Wolfe of Talwar, Thakurta and Zhang (2015): full-batch gradients.

    ``n_iter`` iterations (default :math:`\lceil (n\varepsilon)^{2/3}\rceil`, capped at 2000);
    iteration t computes :math:`\nabla \hat F(x_t)` on all n samples (clipped to
    :math:`\|\cdot\|_\infty \le L`), selects a vertex by report-noisy-max and steps with
    :math:`\eta_t = 2/(t+2)`.

    Parameters
    ----------
    problem : Problem
        Data and a loss (the kernel clips each per-sample gradient to l-infinity norm L).
    epsilon : float
        Target epsilon (> 0).
    delta : float, optional
        None: pure epsilon-DP by basic composition; else (epsilon, delta)-DP through RDP.
    radius : float, default=1.0
        D: the domain is the l1 ball (or simplex) of radius D.
    lipschitz : float, default=1.0
        L: the l-infinity clip of the per-sample gradients (public; not read from the data).
    domain : {"l1", "simplex"} or array of vertices, default="l1"
        The polytope.
    n_iter : int, optional
        T, default :math:`\lceil (n\varepsilon)^{2/3}\rceil` capped at 2000.
    noise : {"laplace", "gumbel", "exponential"}, default="laplace"
        Report-noisy-max noise (:class:`~dpsco_core.mechanisms.ReportNoisyMax`).
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy.
    n_threads : int, optional
        Threads of the kernels; the result does not depend on it.
    budget : Budget or None, default=None
        Charged before the data are read.

    Returns
    -------
    Result
        ``coef`` (the last iterate), ``privacy`` (replace-one), ``history``, ``stats``.

    Notes
    -----
    **Privacy guarantee.** Replace-one; each iteration is :math:`\varepsilon_{it}`-DP
    (scores have sensitivity :math:`2RL/n`, noise :math:`\lambda = 4RL/(n \varepsilon_{it})`).
    Pure: basic composition, :math:`\varepsilon_{it} = \varepsilon / T`. With ``delta``:
    the RDP accountant over ``SelfComposedDpEvent(EpsilonDeltaDpEvent(eps_it), T)`` (pure DP
    to RDP, Bun and Steinke 2016), :math:`\varepsilon_{it}` the largest meeting the target
    (bisection, conservative end) — in place of TTZ15's advanced-composition constant.
    ``budget`` (a :class:`~dpsco_core.privacy.Budget`) is charged with that event before the
    data are read.
    """
    problem, epsilon, delta, lipschitz = _check_common(problem, epsilon, delta, lipschitz, noise)
    n, d = problem.n_samples, problem.n_features
    dom = _Domain(domain, radius, d)
    private = math.isfinite(epsilon)
    if n_iter is None:
        n_iter = int(min(2000, math.ceil((n * min(epsilon, 1e6)) ** (2.0 / 3.0))))
    T = check_int(n_iter, "n_iter", low=1)
    sens = 2.0 * dom.vertex_norm * lipschitz / n
    if private and not 0.0 < sens < math.inf:
        raise ValueError(f"the scores' sensitivity 2 R L / n is {sens!r} in floating point "
                         f"(R = {dom.vertex_norm!r}, the domain's largest vertex norm, from "
                         f"radius / domain; lipschitz={lipschitz!r}): rescale them.")
    if private:
        eps_it = epsilon / T
        if delta is not None:
            lo, hi = eps_it, epsilon
            if _rdp_epsilon_selfcomposed(hi, T, delta) <= epsilon:
                lo = hi
            for _ in range(50):
                if hi - lo <= 1e-12 * hi:
                    break
                mid = 0.5 * (lo + hi)
                if _rdp_epsilon_selfcomposed(mid, T, delta) <= epsilon:
                    lo = mid
                else:
                    hi = mid
            eps_it = lo

        def ttz_report(scales):
            return PrivacyReport.from_event(
                SelfComposedDpEvent(EpsilonDeltaDpEvent(2.0 * sens / scales[0]), T),
                delta=delta if delta is not None else 0.0,
                accountant="rdp" if delta is not None else "basic-composition",
                neighboring_relation=NeighboringRelation.REPLACE_ONE,
                budget_split={"optimization": 1.0},
                assumptions=DEFAULT_ASSUMPTIONS + seed_assumptions(random_state))

        scale = _fit_to_report([2.0 * sens / eps_it], lambda sc: ttz_report(sc).epsilon,
                               epsilon)[0]
        report = ttz_report([scale])
        event = report.event
    else:
        scale, event = 0.0, NonPrivateDpEvent()
        report = PrivacyReport.from_event(event, delta=delta or 0.0,
                                          accountant="basic-composition",
                                          neighboring_relation=NeighboringRelation.REPLACE_ONE)
    effective_n_threads(n_threads)     # validates n_threads before the charge
    spend(budget, event, neighboring_relation=NeighboringRelation.REPLACE_ONE, delta=delta)
    stepper = _Stepper(row_source(problem, n_threads), dom, lipschitz,
                       _NOISE[noise])
    noise_seq = check_random_state(random_state)
    rows = np.arange(n, dtype=np.intp)
    w, alpha = dom.start(d), 1.0
    start = time.perf_counter()
    for t in range(T):
        _, sel = stepper.leaf(rows, w, alpha, w, alpha, w, False,
                              child_seed_sequences(noise_seq, 1, offset=t)[0], scale)
        alpha = stepper.step(w, alpha, sel, 2.0 / (t + 2))
    coef = alpha * w
    stats = {"time": time.perf_counter() - start, "n_iter": T, "scale": scale}
    history = History(np.array([0.0, float(T)]),
                      np.array([np.nan, objective_or_inf(problem, coef)]))
    return Result(coef=coef, privacy=report, history=history, stats=stats)


def projected_dp_sgd_l1(problem, *, epsilon, delta, radius=1.0, clip=1.0, epochs=1.0,
                        batch_size=256, step=None, neighboring_relation="zero_out",
                        public_n=None, random_state=None, n_threads=None, budget=None):
    r"""Baseline: DP-SGD with Euclidean projection onto the l1 ball.

    Poisson sampling at rate :math:`q = B/m` (m: the public record count: the dataset's n
    under zero-out, ``public_n`` under add/remove-one), per-example l2 clipping at C, Gaussian noise
    :math:`N(0, \sigma^2 C^2 I)` on the clipped sum divided by B, step :math:`\eta`, projection
    onto :math:`\{\|x\|_1 \le D\}` (``dpsco_core.projections.project_l1_ball``); returns the
    average iterate. Default :math:`\eta = D / (G \sqrt{K})` with :math:`G^2 = C^2 +
    d \sigma^2 C^2 / B^2`. The clipped batch sum is the Frank-Wolfe kernel's estimate (no
    selection) times the batch size, so ``problem`` may be a dense ``Problem`` or a sign-row
    stream (:class:`~dpsco_core.datasets.RademacherLassoStream`, rows generated per batch).

    Parameters
    ----------
    problem : Problem
        Dense data or a sign-row stream, and a loss.
    epsilon, delta : float
        The target; delta in (0, 1).
    radius : float, default=1.0
        D, the radius of the l1 ball.
    clip : float, default=1.0
        C, the per-example l2 clip (public).
    epochs : float, default=1.0
        Data passes.
    batch_size : int, default=256
        Expected batch B.
    step : float, optional
        :math:`\eta` (default above).
    neighboring_relation : {"zero_out", "add_or_remove_one"}, default="zero_out"
        Replace-one raises ValueError.
    public_n : int, optional
        Public record count m, required under add/remove-one.
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy.
    n_threads : int, optional
        Threads of the kernels; the result does not depend on it.
    budget : Budget or None, default=None
        Charged before the data are read.

    Returns
    -------
    Result

    Notes
    -----
    **Privacy guarantee.** :math:`(\varepsilon, \delta)`-DP under ``neighboring_relation``:
    zero-out (default; n public) or add/remove-one with ``public_n`` (the rate, the steps and
    the divisor B come from the public count, never from the private n; the rule of
    :mod:`dpsco_core.solvers._common`), the relations of the sampled-Gaussian RDP analysis
    (Mironov, Talwar and Zhang 2019); noise multiplier from
    :func:`~dpsco_core.privacy.calibrate_sampled_gaussian`; clipping is enforced (the
    derivative of row i is clipped at :math:`C / \|a_i\|_2`).
    ``budget`` (a :class:`~dpsco_core.privacy.Budget`) is charged with the event before the
    data are read.
    """
    from ..privacy.calibration import calibrate_sampled_gaussian
    from ..projections import project_l1_ball
    from ._common import check_relation, normaliser, public_n_assumptions, report_from_event

    if not is_sign_stream(problem):
        problem = check_problem(problem)
        if problem.is_sparse or problem.penalty.kind != PENALTY_NONE:
            raise ValueError("projected_dp_sgd_l1 takes dense X and penalty=None.")
    epsilon = check_solver_epsilon(epsilon, allow_inf=False)
    delta = check_delta(delta)
    radius = check_scalar(radius, "radius", low=0.0)
    clip = check_scalar(clip, "clip", low=0.0)
    relation = check_relation(neighboring_relation)
    if relation is NeighboringRelation.REPLACE_ONE:
        raise ValueError("neighboring_relation='replace_one' is not supported by "
                         "projected_dp_sgd_l1 (Poisson sampling): use 'zero_out' or "
                         "'add_or_remove_one' with public_n.")
    n, d = problem.n_samples, problem.n_features
    m = normaliser(relation, n, public_n)
    B = check_int(batch_size, "batch_size", low=1, high=m)
    q = B / m
    K = max(1, int(round(check_scalar(epochs, "epochs", low=0.0) / q)))
    sigma = calibrate_sampled_gaussian(target_epsilon=epsilon, target_delta=delta,
                                       sample_rate=q, steps=K)
    event = SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), K)
    report = report_from_event(event, delta=delta, relation=relation,
                               budget_split={"optimization": 1.0},
                               assumptions=public_n_assumptions(relation, m),
                               target_epsilon=epsilon, random_state=random_state,
                               conversion="improved")
    effective_n_threads(n_threads)     # validates n_threads before the charge
    spend(budget, event, neighboring_relation=relation, delta=delta)
    if step is None:
        G = math.sqrt(clip ** 2 + d * (sigma * clip / B) ** 2)
        step = radius / (G * math.sqrt(K))
    rng = np.random.Generator(block_bit_generators(check_random_state(random_state), 1)[0])
    source = row_source(problem, n_threads)
    row_clip = source.row_clip(clip, "2")
    x = np.zeros(d)
    avg = np.zeros(d)
    v = np.empty(d)
    start = time.perf_counter()
    for k in range(K):
        idx = np.flatnonzero(rng.random(n) < q).astype(np.intp)
        g = rng.normal(0.0, sigma * clip, d)
        if idx.size:
            source.gradient(idx, row_clip, x, 1.0, x, 1.0, x, False, _frank_wolfe.DOMAIN_NONE,
                            0.0, 0.0, 0, [], np.empty(idx.size), v)
            g += v * idx.size          # the clipped sum (the kernel returns the mean)
        x = project_l1_ball(x - (step / B) * g, radius)
        avg += (x - avg) / (k + 1)
    stats = {"time": time.perf_counter() - start, "steps": K, "noise_multiplier": sigma,
             "step": step}
    history = History(np.array([0.0, float(epochs)]),
                      np.array([np.nan, objective_or_inf(problem, avg)]))
    return Result(coef=avg, privacy=report, history=history, stats=stats)
