r"""Level arithmetic of EpochSGD and of the MLMC optimum estimator (note 001, sections 2.1-2.4).

EpochSGD (Asi et al. 2021, Algorithm 8) runs epochs k = 1, 2, ... of :math:`T_k = 16 \cdot
2^{k-1}` iterates (:math:`T_k - 1` stochastic gradients) with step :math:`\eta_k = 1/(4\mu
2^{k-1})`, and completes :math:`m(T) = \max\{m \ge 0 : 16(2^m - 1) \le T\}` epochs under a budget
:math:`T`. Its output after :math:`m` epochs is the "snapshot" :math:`\bar x_m` (with
:math:`\bar x_0 = \arg\min_X \psi`), and the run with budget :math:`T' < T` is a prefix of the run
with budget :math:`T` (same stream).

An MLMC *level* names one snapshot:

- ``levels="paper"``: level j is the ODC output with budget :math:`2^j`, i.e. snapshot
  :math:`m(2^j)` (the paper's eq. (1) with the snapshot rule that fixes Remark 1, note 2.3:
  :math:`x_J - x_{J-1} = \bar x_{m(2^J)} - \bar x_{m(2^{J-1})}`, which is 0 for J <= 3 and J = 5);
- ``levels="epoch"``: level l is snapshot l (l completed epochs, note 2.3 [PROPOSAL]).

A draw with base level :math:`\ell_0` picks :math:`K \sim \mathrm{Geom}(1/2)` on {1, 2, ...} and
returns :math:`x_{\ell_0} + 2^K (x_{\ell_0+K} - x_{\ell_0+K-1})` if :math:`\ell_0 + K \le
j_{\max}`, else :math:`x_{\ell_0}`. The sum telescopes: :math:`E\hat x = E x_{j_{\max}}`.

K is drawn from one raw 64-bit word u of the copy's bit generator: :math:`K = \mathrm{ctz}(u) + 1`
(exactly :math:`P(K = k) = 2^{-k}` for k <= 64; u = 0, probability :math:`2^{-64}`, truncates).
"""

import math

from .._validation import check_int, check_positive

__all__ = [
    "T1", "J_MAX_LIMIT", "LEVELS", "epochs_for_budget", "gradients_for_epochs", "level_epochs",
    "level_from_raw", "draw_epochs", "expected_gradients", "j_max_from_bias",
    "n_copies_from_variance",
]

#: Iterates in the first epoch of EpochSGD (the paper's T_1 = 16).
T1 = 16
#: Hard cap on j_max: beyond it 2^j_max amplifies round-off past float64 (note 8.2, pitfall 1).
J_MAX_LIMIT = 40
#: Accepted level schemes and their kernel codes.
LEVELS = {"paper": 0, "epoch": 1}


def epochs_for_budget(budget):
    """m(T): epochs EpochSGD completes under a gradient budget T >= 0 (``16 (2^m - 1) <= T``).

    Parameters
    ----------
    budget : int
        Gradient budget T >= 0.

    Returns
    -------
    int
    """
    # 2^m <= T/16 + 1 <=> 2^m <= floor(T/16) + 1 (2^m is an integer): exact integer arithmetic.
    return (int(budget) // T1 + 1).bit_length() - 1


def gradients_for_epochs(n_epochs):
    """Stochastic gradients used by ``n_epochs`` epochs: ``16 (2^m - 1) - m``.

    Parameters
    ----------
    n_epochs : int
        m >= 0.

    Returns
    -------
    int
    """
    return T1 * ((1 << n_epochs) - 1) - n_epochs


def level_epochs(level, levels):
    """Snapshot index (completed epochs) of a level under the scheme ``levels``.

    Parameters
    ----------
    level : int
        The level j.
    levels : {"epoch", "paper"}
        The level scheme.

    Returns
    -------
    int
    """
    if levels == "paper":
        return epochs_for_budget(1 << level)
    return level


def level_from_raw(raw):
    """K = ctz(raw) + 1 from one raw 64-bit word (65, i.e. "truncated", for raw = 0)."""
    raw = int(raw)
    if raw == 0:
        return 65
    return (raw & -raw).bit_length()


def draw_epochs(k, j_max, levels, base_level):
    """Snapshot indices ``(e0, e1, e2)`` a draw with geometric variate k combines.

    The output is ``snap[e0] + 2^k (snap[e2] - snap[e1])`` when ``e2 > e1``, else ``snap[e0]``
    (truncated draw, ``base_level + k > j_max``, or a zero difference under paper levels: then
    ``e1 = e2 = e0`` and no epoch beyond ``e0`` is run).
    """
    e0 = level_epochs(base_level, levels)
    if base_level + k > j_max:
        return e0, e0, e0
    e1 = level_epochs(base_level + k - 1, levels)
    e2 = level_epochs(base_level + k, levels)
    if e2 == e1:
        return e0, e0, e0
    return e0, e1, e2


def expected_gradients(j_max, levels="epoch", base_level=0):
    r"""Exact expected number of stochastic gradients of one MLMC draw.

    :math:`\sum_{k \ge 1} 2^{-k} N(e_{\max}(k))` with :math:`N(m) = 16(2^m - 1) - m` and
    :math:`e_{\max}(k)` the last epoch the draw runs (``max`` of :func:`draw_epochs`). Draws whose
    difference is exactly zero (paper levels J <= 3 and J = 5) run no extra epoch, so this is
    below the note's table (section 2.4, which charges :math:`N_{ES}(2^J)` to every J) by
    :math:`2^{-5} \cdot 15` when ``j_max >= 5``.

    Parameters
    ----------
    j_max : int
        Top level.
    levels : {"epoch", "paper"}, default="epoch"
        The level scheme.
    base_level : int, default=0
        :math:`\ell_0`.

    Returns
    -------
    float
    """
    total = 0.0
    for k in range(1, j_max - base_level + 1):
        total += gradients_for_epochs(max(draw_epochs(k, j_max, levels, base_level))) / 2.0 ** k
    # truncated draws (probability 2^-(j_max - base_level)) run the base level only
    e0 = level_epochs(base_level, levels)
    return total + gradients_for_epochs(e0) / 2.0 ** (j_max - base_level)


def j_max_from_bias(bias, lipschitz, mu, *, c=32.0, levels="epoch"):
    r"""Smallest j_max whose top level has distance bias at most ``bias``.

    The bias of the estimator is the bias of its top level, at most
    :math:`\sqrt{c G^2/(\mu^2 T)}` for an ODC with constant c (c = 32 for EpochSGD,
    Proposition 3) and budget T; so T must reach :math:`c G^2 / (\mu^2 \delta^2)`: for
    ``levels="paper"`` :math:`2^{j} \ge` that, for ``levels="epoch"`` :math:`16(2^j - 1) \ge`
    that.

    Parameters
    ----------
    bias : float
        Target bias :math:`\delta > 0`.
    lipschitz : float
        G, with :math:`E\|\hat\nabla f\|^2 \le G^2`.
    mu : float
        Strong convexity :math:`\mu > 0`.
    c : float, default=32.0
        The ODC constant.
    levels : {"epoch", "paper"}, default="epoch"
        The level scheme.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If a positive argument is not positive, or the answer exceeds ``J_MAX_LIMIT``.
    """
    bias = check_positive(bias, "bias")
    lipschitz = check_positive(lipschitz, "lipschitz")
    mu = check_positive(mu, "mu")
    c = check_positive(c, "c")
    if levels not in LEVELS:
        raise ValueError(f"levels must be one of {sorted(LEVELS)}; got {levels!r}.")
    # products, not **: a float ** that overflows raises OverflowError instead of giving inf
    den = (mu * mu) * (bias * bias)
    need = c * (lipschitz * lipschitz) / den if den > 0.0 else math.inf
    if 0.0 < need < math.inf:
        if levels == "paper":
            j = max(1, math.ceil(math.log2(need)))
        else:
            j = max(1, math.ceil(math.log2(need / T1 + 1.0)))
    else:   # need under- or overflows (bias ~ 1e-300): the same j from logarithms
        log2_need = (math.log2(c) + 2.0 * math.log2(lipschitz) - 2.0 * math.log2(mu)
                     - 2.0 * math.log2(bias))
        if levels != "paper":
            log2_need = math.log2(2.0 ** min(log2_need - math.log2(T1), 1000.0) + 1.0) \
                if log2_need - math.log2(T1) < 1000.0 else log2_need - math.log2(T1)
        j = max(1, math.ceil(log2_need))
    if j > J_MAX_LIMIT:
        raise ValueError(f"bias {bias:g} needs j_max = {j}, above the limit {J_MAX_LIMIT} "
                         f"(lipschitz / (mu * bias) = {lipschitz / mu / bias:g}).")
    return j


def n_copies_from_variance(mse, lipschitz, mu, j_max, *, base_level=0, c=32.0):
    r"""Copies N for OPTEST (Algorithm 1) to reach mean squared error ``mse``.

    :math:`N = \lceil 32 c G^2 L / (\mu^2 \sigma^2) \rceil` with :math:`L = \max(1, j_{\max} -
    \ell_0)` levels: twice the per-draw variance bound :math:`16 c (G^2/\mu^2) \log_2 T_{\max}`
    of Proposition 1 over :math:`\sigma^2`, so that Var/N <= sigma^2 / 2 (note 2.5, [RECON]).
    The bound is very conservative (note 6.2, E2: measured variance ~0.75 G^2/mu^2 per level).

    Parameters
    ----------
    mse : float
        Target mean squared error :math:`\sigma^2 > 0`.
    lipschitz : float
        G.
    mu : float
        Strong convexity.
    j_max : int
        Top level.
    base_level : int, default=0
        :math:`\ell_0`.
    c : float, default=32.0
        The ODC constant.

    Returns
    -------
    int
    """
    mse = check_positive(mse, "mse")
    lipschitz = check_positive(lipschitz, "lipschitz")
    mu = check_positive(mu, "mu")
    j_max = check_int(j_max, "j_max", low=1, high=J_MAX_LIMIT)
    n_levels = max(1, j_max - base_level)
    den = (mu * mu) * mse
    n = 32.0 * c * (lipschitz * lipschitz) * n_levels / den if den > 0.0 else math.inf
    if not math.isfinite(n):
        raise ValueError(f"mse {mse:g} is too small for lipschitz {lipschitz:g} and mu {mu:g}: "
                         "the number of copies 32 c lipschitz^2 levels / (mu^2 mse) exceeds "
                         "the float64 range.")
    return math.ceil(n)
