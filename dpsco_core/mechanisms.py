"""Differentially private mechanisms: Gaussian, Laplace and report-noisy-max.

Each mechanism is a small object that states its calibration and exposes its guarantee as a
privacy event (``.event``), so that solvers compose mechanisms through an accountant
(:mod:`dpsco_core.privacy`) rather than by hand; each also has a one-call function form.
The noise is drawn by compiled kernels (``dpsco_core._kernels._noise`` and ``_noisy_max``)
under the block scheme of :mod:`dpsco_core._random`: the same ``random_state`` gives the same
output for any ``n_threads``.

Sensitivities are the caller's statement about the function being released, under the
neighbouring relation the caller has in mind (replace-one, add/remove-one, ...): the guarantee
holds for exactly those neighbours. A solver that clips enforces its sensitivity; a user who
passes a sensitivity here is trusted on it.

``epsilon`` is a finite number in (0, inf): ``epsilon=inf`` raises ValueError, because a mechanism
at epsilon = inf would release its input exactly. (The solvers accept ``epsilon=inf`` as their
non-private run; a mechanism's non-private release is the exact value itself.)

Floating-point noise. Mironov (2012) showed that the low-order bits of floating-point Laplace
samples leak the input when noisy values are released: the doubles reachable from one input
differ from those reachable from a neighbour, so some outputs identify the input exactly (an
audit of the floating-point Laplace and Gaussian mechanisms on the event "output in
(-0.5, 0.5) and not a multiple of 2^-53" gives epsilon lower bounds of 13.5 and 12.2 for a
claimed 1). The Gaussian and Laplace mechanisms therefore draw *exact* noise by default
(``secure=True``, :mod:`dpsco_core._secure`): the query is rounded to a power-of-two grid and
discrete Gaussian or discrete Laplace noise (Canonne, Kamath and Steinke 2020) is added in
integer arithmetic, so that every output is a multiple of the grid whichever the input.
``secure=False`` is the explicit opt-out: faster (see ``bench/README.md``), analysed as if the
noise were real-valued, and with no guarantee for the low-order bits of its outputs.
Report-noisy-max releases only an index (its floating-point noise is never released); the
value that ``return_value=True`` adds is drawn by the exact discrete Laplace sampler.
"""

import math

import numpy as np

from ._config import effective_n_threads
from ._kernels import _noise, _noisy_max
from ._random import block_bit_generators, check_random_state, child_seed_sequences
from ._validation import (all_finite, check_delta, check_positive, check_real_array,
                          check_scalar, check_vector)
from .privacy.conversions import zcdp_to_epsilon
from .privacy.events import (ComposedDpEvent, EpsilonDeltaDpEvent, GaussianDpEvent,
                             LaplaceDpEvent, ZCDpEvent)
from .privacy.budget import spend
from .privacy.calibration import calibrate_analytic_gaussian
from .privacy.gdp import gdp_epsilon

__all__ = [
    "GaussianMechanism",
    "LaplaceMechanism",
    "ReportNoisyMax",
    "gaussian_mechanism",
    "laplace_mechanism",
    "report_noisy_max",
    "exponential_mechanism",
    "permute_and_flip",
    "grid_quantile",
]

_NOISE_KINDS = {
    "laplace": _noisy_max.LAPLACE,
    "gumbel": _noisy_max.GUMBEL,
    "exponential": _noisy_max.EXPONENTIAL,
}


#: Largest noise scale and largest |score| of report-noisy-max: every draw of the samplers
#: (Gaussian, Laplace, Gumbel, exponential) is at most about 745 scales (-log of the smallest
#: double), so a noisy score stays below 0.5 + 745 / 2000 of the double range: never inf or
#: NaN (an all -inf row made report-noisy-max return index -1).
_MAX_NOISE_SCALE = float(np.finfo(np.float64).max) / 2000.0
_MAX_SCORE = float(np.finfo(np.float64).max) / 2.0


def _check_epsilon(epsilon):
    """epsilon in (0, inf); at inf, an error that says why and how the solvers differ."""
    epsilon = check_scalar(epsilon, "epsilon", low=0.0, allow_inf=True)
    if math.isinf(epsilon):
        raise ValueError(
            "epsilon must be a finite number in (0, inf); got inf. A mechanism at epsilon = inf "
            "would add no noise and release its input exactly, which protects nothing, so the "
            "mechanisms refuse it. The solvers' epsilon=inf is their name for the non-private "
            "run (reported as epsilon = inf); the mechanisms' equivalent is the exact value "
            "itself: use it directly, or pass a finite epsilon.")
    return epsilon


def _check_noise_scale(scale, formula):
    """Reject a noise scale that overflowed (tiny epsilon, huge sensitivity): infinite noise
    would turn the output into NaN or inf instead of a release."""
    if not (0.0 < scale <= _MAX_NOISE_SCALE):
        raise ValueError(f"the noise scale {formula} must be a finite positive number at most "
                         f"{_MAX_NOISE_SCALE:.3g}; got {scale!r}. Use a larger epsilon or a "
                         "smaller sensitivity.")
    return scale


def _n_blocks(n_items, block_size):
    return -(-n_items // block_size)


def _check_secure(secure):
    if not isinstance(secure, (bool, np.bool_)):
        raise TypeError(f"secure must be a bool; got {type(secure).__name__}.")
    return bool(secure)


def _threads_for(n_blocks, n_threads):
    """Threads for a kernel parallel over blocks: never more than the blocks (a one-block call
    stays serial instead of starting an OpenMP team that has nothing to do)."""
    return max(1, min(effective_n_threads(n_threads), n_blocks))


def _release_arguments(random_state, n_threads):
    """A release's public arguments, checked before its budget is charged (a call refused
    for an invalid argument costs nothing, as :class:`~dpsco_core.privacy.Budget` promises):
    the seed, returned as its SeedSequence, and ``n_threads``."""
    seed_seq = check_random_state(random_state)
    effective_n_threads(n_threads)
    return seed_seq


def _noisy_array(x, name, scale, kind, random_state, n_threads, secure_params=None):
    """x + i.i.d. noise of the given kind and scale, same shape as x, a new array.

    ``secure_params(d)``, when given, returns the exact sampler's grid parameters for d
    coordinates (see :mod:`dpsco_core._secure`) and the noise is drawn exactly on the grid.
    """
    arr = np.asarray(x)
    flat = check_vector(arr.reshape(-1) if arr.ndim != 1 else arr, name, allow_empty=True)
    seed_seq = check_random_state(random_state)
    # serial below the work threshold (issue 18): one draw per element
    n_threads = effective_n_threads(n_threads, work=flat.size)
    if secure_params is not None:
        from . import _secure
        generators = block_bit_generators(
            seed_seq, _n_blocks(flat.size, _secure._discrete.DISCRETE_BLOCK_SIZE))
        kind_name = "gaussian" if kind == _noise.GAUSSIAN else "laplace"
        out = _secure.add_discrete_noise(flat, kind_name, secure_params(flat.size), generators,
                                         _threads_for(len(generators), n_threads))
    else:
        out = np.empty_like(flat)
        generators = block_bit_generators(seed_seq,
                                          _n_blocks(flat.size, _noise.NOISE_BLOCK_SIZE))
        _noise.add_noise(flat, scale, kind, generators, out,
                         _threads_for(len(generators), n_threads))
    if not all_finite(out):
        # x within ~1.8e308 of the double range's edge plus a large draw: the release is not
        # representable (the curator's error, like a NaN in x; nothing is returned)
        raise ValueError(f"{name} + noise overflows float64 (entries of {name} near 1.8e308 "
                         "or a huge noise scale from sensitivity / epsilon); rescale "
                         f"{name} and sensitivity.")
    if arr.ndim == 0:
        return float(out[0])
    return out.reshape(arr.shape)


def _public_grid(parameters, x):
    """``parameters(d)`` of the exact sampler for ``x``'s d coordinates, computed now (a
    function of public numbers: its ValueError must come before the budget is charged), as
    the ``secure_params`` of :func:`_noisy_array`."""
    size = np.asarray(x).size
    grid = parameters(size)
    return lambda d: grid if d == size else parameters(d)


def _secure_gaussian_multiplier(epsilon, delta):
    """Smallest z (up to 1e-9 relative, rounded up) with zcdp_to_epsilon(1/(2 z^2), delta,
    "cks") <= epsilon, by bisection on log z; the returned end satisfies the target."""
    lo, hi = -20.0, 20.0      # log z; z = e^20 is far beyond any sane budget
    if zcdp_to_epsilon(0.5 * math.exp(-2 * hi), delta, conversion="cks") > epsilon:
        raise ValueError(f"epsilon={epsilon!r} at delta={delta!r} needs more noise than "
                         "secure=True supports.")
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if zcdp_to_epsilon(0.5 * math.exp(-2 * mid), delta, conversion="cks") <= epsilon:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


class GaussianMechanism:
    r"""The Gaussian mechanism: release :math:`f(D) + N(0, \sigma^2 I)`.

    Parameters
    ----------
    sensitivity : float
        l2 sensitivity :math:`\Delta_2 = \sup \|f(D) - f(D')\|_2` over neighbours (> 0).
    epsilon, delta : float, optional
        Target :math:`(\varepsilon, \delta)`. Give both, or ``noise_multiplier`` instead.
    noise_multiplier : float, optional
        :math:`z = \sigma / \Delta_2` (> 0), when the noise is set by a solver's accountant.
    calibration : {"zcdp", "analytic", "classic"} or None, default=None
        How :math:`\sigma` follows from ``(epsilon, delta)``. None: ``"zcdp"`` with the exact
        sampler (the default), ``"analytic"`` with ``secure=False``. ``"zcdp"`` (exact sampler
        only, chosen automatically): the smallest :math:`z` whose
        :math:`\rho = 1/(2 z^2)`-zCDP converts to :math:`(\varepsilon, \delta)` by
        Canonne, Kamath and Steinke (2020), Corollary 13 (about 8% more noise than
        ``"analytic"`` at :math:`(1, 10^{-5})`). For ``secure=False`` only: ``"analytic"``,
        the smallest :math:`\sigma` for which the mechanism is
        :math:`(\varepsilon, \delta)`-DP (Balle and Wang 2018, Theorem 8; computed as
        :math:`\sigma = \Delta_2 / \mu(\varepsilon, \delta)` through the exact Gaussian-DP
        profile, Dong, Roth and Su 2019, Corollary 2.13, which is the same curve). Valid for
        every :math:`\varepsilon > 0`. ``"classic"``: :math:`\sigma = \Delta_2
        \sqrt{2 \ln(1.25/\delta)} / \varepsilon` (Dwork and Roth 2014, Theorem A.1), valid
        only for :math:`\varepsilon < 1` (raises otherwise) and always at least as noisy.
    secure : bool, default=True
        ``True``: exact discrete Gaussian noise (Canonne, Kamath and Steinke 2020) on a
        power-of-two grid, :mod:`dpsco_core._secure`; every output is a multiple of the grid,
        so its low-order bits carry nothing about the input. ``False``: floating-point noise
        (faster, see ``bench/README.md``), analysed as if real-valued. *What the opt-out
        costs*: the stated guarantee then holds for the ideal real-valued mechanism only; the
        doubles it outputs are not hardened (Mironov 2012): the event "output in (-0.5, 0.5)
        and not a multiple of 2^-53" has probability about 7% for f(D) = 0 and 0 for
        f(D') = 1 (sensitivity 1, (1, 1e-5)), so no (epsilon, delta) with delta below 7%
        holds; an audit on it gives a lower bound of 12.2 for a claimed 1 from 10^6 releases
        per input, bounded only by the number of trials.

    Attributes
    ----------
    noise_scale : float
        :math:`\sigma`, the standard deviation of each noise coordinate.
    noise_multiplier : float
        :math:`\sigma / \Delta_2`.
    event : ZCDpEvent or GaussianDpEvent
        The privacy event of one release (zCDP for the exact sampler, Gaussian for
        ``secure=False``).

    Notes
    -----
    **Privacy guarantee.** With ``secure=False``, for any neighbours :math:`D \sim D'` with
    :math:`\|f(D) - f(D')\|_2 \le \Delta_2`, one release is :math:`\mu`-GDP with
    :math:`\mu = 1/z`, hence :math:`(\varepsilon, \delta(\varepsilon))`-DP for every
    :math:`\varepsilon` with :math:`\delta(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2) -
    e^{\varepsilon} \Phi(-\varepsilon/\mu - \mu/2)`, and :math:`(\alpha, \alpha / (2 z^2))`-RDP.
    The neighbouring relation is the one under which ``sensitivity`` was computed.

    With ``secure=True`` (default) the query is rounded to the grid :math:`2^k \mathbb{Z}`,
    which inflates the sensitivity to :math:`\Delta_2' = \Delta_2 (1 + 2^{-10})`, and the
    discrete Gaussian of variance at least :math:`(z \Delta_2')^2` is :math:`1/(2 z^2)`-zCDP
    (Canonne, Kamath and Steinke 2020) for every pair of neighbours at l2 distance at most
    :math:`\Delta_2`: ``event`` is that ``ZCDpEvent`` and ``get_epsilon`` its CKS20 conversion
    (the neighbouring relation is again that of ``sensitivity``). ``noise_scale`` is :math:`z \Delta_2`; the noise
    drawn is :math:`(1 + 2^{-10})` times larger, rounded up on the grid.

    Examples
    --------
    >>> from dpsco_core.mechanisms import GaussianMechanism
    >>> mech = GaussianMechanism(sensitivity=1.0, epsilon=1.0, delta=1e-5)
    >>> round(mech.noise_scale, 4)
    4.0451
    >>> round(GaussianMechanism(sensitivity=1.0, epsilon=1.0, delta=1e-5,
    ...                         secure=False).noise_scale, 4)
    3.7306
    >>> noisy = mech([1.0, 2.0, 3.0], random_state=0)   # random
    """

    def __init__(self, *, sensitivity, epsilon=None, delta=None, noise_multiplier=None,
                 calibration=None, secure=True):
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.secure = _check_secure(secure)
        if calibration is None:
            calibration = "zcdp" if self.secure else "analytic"
        accepted = ("zcdp",) if self.secure else ("analytic", "classic")
        if calibration not in accepted:
            raise ValueError(
                f"calibration must be one of {set(accepted)} (or None) with secure="
                f"{self.secure}; got {calibration!r}.")
        self.calibration = calibration
        self.delta = None if delta is None else check_delta(delta)
        if noise_multiplier is not None:
            if epsilon is not None or delta is not None:
                raise ValueError("give either (epsilon, delta) or noise_multiplier, not both.")
            self.noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
        else:
            if epsilon is None or delta is None:
                raise ValueError("give both epsilon and delta, or noise_multiplier.")
            epsilon = _check_epsilon(epsilon)
            delta = check_delta(delta)
            if self.secure:
                # Exact discrete Gaussian: rho-zCDP (CKS20), calibrated through the zCDP ->
                # (epsilon, delta) conversion of CKS20 Corollary 13, on the inflated
                # sensitivity (see Notes).
                self.noise_multiplier = _secure_gaussian_multiplier(epsilon, delta)
            elif calibration == "classic":
                if epsilon >= 1.0:
                    raise ValueError(
                        "epsilon must be in (0, 1) for the classic calibration (Dwork and Roth "
                        f"2014, Theorem A.1); got {epsilon!r}. Use calibration='analytic'.")
                self.noise_multiplier = np.sqrt(2.0 * np.log(1.25 / delta)) / epsilon
            else:
                self.noise_multiplier = calibrate_analytic_gaussian(
                    target_epsilon=epsilon, target_delta=delta)
        self.noise_scale = _check_noise_scale(self.noise_multiplier * self.sensitivity,
                                              "noise_multiplier * sensitivity")
        if self.secure:
            # Guarantee on the rounded query: sensitivity Delta (1 + SLACK), sigma >= z Delta'.
            # (z^2 overflows from z ~ 1.3e154, a valid multiplier: rho is then rounded up from
            # (0.5 / z) / z, which underflows, instead of raising OverflowError.)
            z = self.noise_multiplier
            self.event = ZCDpEvent(0.5 / z ** 2 if z <= 1e154 else
                                   math.nextafter(0.5 / z / z, math.inf))
        else:
            self.event = GaussianDpEvent(self.noise_multiplier)

    @property
    def mu(self):
        """The Gaussian-DP parameter :math:`\\mu = \\Delta_2 / \\sigma` of one release."""
        return 1.0 / self.noise_multiplier

    def get_epsilon(self, delta):
        """The exact epsilon of one release at ``delta`` (Gaussian-DP profile); with
        ``secure=True``, the zCDP conversion of CKS20 Corollary 13.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        float
        """
        if self.secure:
            return zcdp_to_epsilon(self.event.rho, check_delta(delta), conversion="cks")
        return gdp_epsilon(self.mu, check_delta(delta))

    def __call__(self, x, *, random_state=None, n_threads=None, budget=None,
                 neighboring_relation=None):
        """Return ``x`` plus Gaussian noise of scale ``noise_scale`` as a new float64 array of
        the shape of ``x``: exact discrete Gaussian noise on a power-of-two grid by default,
        ``N(0, noise_scale^2 I)`` in floating point with ``secure=False``.

        ``budget`` (a :class:`~dpsco_core.privacy.Budget`) is charged with ``event`` before
        ``x`` is read, under ``neighboring_relation`` (None: the budget's relation), at the
        calibration's delta.
        """
        seed_seq = _release_arguments(random_state, n_threads)
        check_real_array(x, "x")          # its type, not its values: public
        params = None
        if self.secure:
            from ._secure import gaussian_parameters
            # the exact sampler's grid: public (sensitivity, multiplier and x's size), so a
            # noise scale the grid cannot hold is refused before the charge
            params = _public_grid(lambda d: gaussian_parameters(self.sensitivity,
                                                                self.noise_multiplier, d), x)
        spend(budget, self.event, neighboring_relation=neighboring_relation, delta=self.delta)
        return _noisy_array(x, "x", self.noise_scale, _noise.GAUSSIAN, seed_seq, n_threads,
                            params)

    def __repr__(self):
        return (f"GaussianMechanism(sensitivity={self.sensitivity!r}, "
                f"noise_multiplier={self.noise_multiplier!r}, secure={self.secure!r})")


class LaplaceMechanism:
    r"""The Laplace mechanism: release :math:`f(D) + \mathrm{Lap}(b)^d`, :math:`b = \Delta_1/\varepsilon`.

    Parameters
    ----------
    sensitivity : float
        l1 sensitivity :math:`\Delta_1 = \sup \|f(D) - f(D')\|_1` over neighbours (> 0).
    epsilon : float
        Privacy parameter (> 0).
    secure : bool, default=True
        ``True``: exact discrete Laplace noise (Canonne, Kamath and Steinke 2020) on a
        power-of-two grid, :mod:`dpsco_core._secure`; every output is a multiple of the grid,
        so its low-order bits carry nothing about the input. ``False``: floating-point Laplace
        noise (faster, see ``bench/README.md``), analysed as if real-valued. *What the opt-out
        costs*: the guarantee then holds for the ideal real-valued mechanism only; its doubles
        leak the input through their low-order bits (Mironov 2012): the event "output in
        (-0.5, 0.5) and not a multiple of 2^-53" has probability about 27% for f(D) = 0 and 0
        for f(D') = 1 (sensitivity 1, epsilon 1), so no finite epsilon holds (nor any delta
        below 27%); an audit on it gives a lower bound of 13.5 for a claimed 1 from 10^6
        releases per input.

    Attributes
    ----------
    noise_scale : float
        :math:`b = \Delta_1 / \varepsilon`.
    event : LaplaceDpEvent
        The privacy event of one release (noise multiplier :math:`b / \Delta_1 = 1/\varepsilon`).

    Notes
    -----
    **Privacy guarantee.** :math:`\varepsilon`-DP (pure) for neighbours :math:`D \sim D'` with
    :math:`\|f(D) - f(D')\|_1 \le \Delta_1` (Dwork, McSherry, Nissim and Smith 2006; Dwork and
    Roth 2014, Theorem 3.6), under the relation for which ``sensitivity`` was computed.
    With ``secure=True`` (default) the query is rounded to the grid :math:`2^k \mathbb{Z}`
    (sensitivity inflated to :math:`\Delta_1 (1 + 2^{-10})`) and the discrete Laplace scale is
    rounded up, so the same :math:`\varepsilon` holds exactly (the discrete Laplace mechanism
    of Canonne, Kamath and Steinke 2020, at the inflated sensitivity).

    Examples
    --------
    >>> from dpsco_core.mechanisms import LaplaceMechanism
    >>> LaplaceMechanism(sensitivity=2.0, epsilon=0.5).noise_scale
    4.0
    """

    def __init__(self, *, sensitivity, epsilon, secure=True):
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.secure = _check_secure(secure)
        self.epsilon = _check_epsilon(epsilon)
        self.noise_scale = _check_noise_scale(self.sensitivity / self.epsilon,
                                              "sensitivity / epsilon")
        self.event = LaplaceDpEvent(_check_noise_scale(1.0 / self.epsilon, "1 / epsilon"))

    def __call__(self, x, *, random_state=None, n_threads=None, budget=None,
                 neighboring_relation=None):
        """Return ``x`` plus i.i.d. Laplace noise of scale ``noise_scale`` as a new float64
        array: exact discrete Laplace noise on a power-of-two grid by default,
        floating-point ``Lap(noise_scale)`` with ``secure=False``.

        ``budget`` is charged with ``event`` before ``x`` is read (as for
        :class:`GaussianMechanism`).
        """
        seed_seq = _release_arguments(random_state, n_threads)
        check_real_array(x, "x")          # its type, not its values: public
        params = None
        if self.secure:
            from ._secure import laplace_parameters
            # public, before the charge (as for GaussianMechanism)
            params = _public_grid(lambda d: laplace_parameters(self.sensitivity, self.epsilon,
                                                               d), x)
        spend(budget, self.event, neighboring_relation=neighboring_relation)
        return _noisy_array(x, "x", self.noise_scale, _noise.LAPLACE, seed_seq, n_threads,
                            params)

    def __repr__(self):
        return (f"LaplaceMechanism(sensitivity={self.sensitivity!r}, epsilon={self.epsilon!r}, "
                f"secure={self.secure!r})")


class ReportNoisyMax:
    r"""Report-noisy-max: the index of :math:`\max_i \, s_i(D) + Z_i`, ties to the lowest index.

    Parameters
    ----------
    sensitivity : float
        :math:`\Delta = \sup_{D \sim D'} \max_i |s_i(D) - s_i(D')|`, the l-infinity
        sensitivity of the score vector (> 0).
    epsilon : float
        Privacy parameter (> 0).
    noise : {"laplace", "gumbel", "exponential"}, default="laplace"
        ``"laplace"``: Laplace noise (the form of the l1 Frank-Wolfe paper; Dwork and Roth 2014,
        Claim 3.9). ``"gumbel"``: Gumbel noise, which makes this exactly the exponential
        mechanism :math:`P(i) \propto \exp(\varepsilon s_i / (2\Delta))` (McSherry and Talwar
        2007; the Gumbel-max identity). ``"exponential"``: one-sided exponential noise, exactly
        the permute-and-flip mechanism (McKenna and Sheldon 2020; Ding et al. 2021), whose
        utility is never worse than the exponential mechanism's.
    monotonic : bool, default=False
        Declare the scores monotone (on neighbouring data all scores move in the same
        direction, as counts under add/remove-one do). Halves the noise for ``"laplace"`` and
        ``"gumbel"`` (scale :math:`\Delta/\varepsilon`). Not accepted with ``"exponential"``,
        for which we rely only on the general (non-monotone) proof. A false declaration voids
        the guarantee.
    secure : bool, default=False
        ``True``: exact permute-and-flip on grid scores (integer coins, Canonne, Kamath and
        Steinke 2020 samplers). ``False`` keeps the floating-point selection, which releases
        only an index (the noise values themselves never leave the kernel), analysed as if the
        noise were real-valued. The value of ``return_value=True`` is exact either way.

    Attributes
    ----------
    noise_scale : float
        :math:`b = 2\Delta/\varepsilon` (or :math:`\Delta/\varepsilon` for monotone scores).
    event : EpsilonDeltaDpEvent
        Guarantee of releasing the index: pure :math:`\varepsilon`-DP.
    event_with_value : ComposedDpEvent
        Guarantee of releasing the index and a noisy value (``return_value=True``).

    Notes
    -----
    **Privacy guarantee.** Releasing the index is :math:`\varepsilon`-DP (pure) for neighbours
    whose score vectors differ by at most ``sensitivity`` in every coordinate, with noise scale
    :math:`2\Delta/\varepsilon` for any scores (for the signed vertices of an l1 ball the
    paired scores move in opposite directions, so the monotone factor never applies there).
    The noisy maximum itself is *not* released by the index: with ``return_value=True`` the
    value returned is the selected score plus *fresh* exact discrete Laplace noise of scale
    at least :math:`b` on a grid (a Laplace mechanism on one score, :math:`\Delta/b`-DP), and the
    pair is
    :math:`(\varepsilon + \Delta/b)`-DP by composition (``event_with_value``). Returning the
    maximum of the noisy scores directly would not be :math:`\varepsilon`-DP.

    The kernel (``dpsco_core._kernels._noisy_max``) evaluates the exact Laplace or Gumbel
    variate only for candidates that could still win; its output equals drawing every variate
    (``dpsco_core.reference.noisy_max``), bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsco_core.mechanisms import ReportNoisyMax
    >>> rnm = ReportNoisyMax(sensitivity=1.0, epsilon=1.0)
    >>> rnm.noise_scale
    2.0
    >>> rnm(np.array([0.0, 100.0, 3.0]), random_state=0)
    1
    """

    def __init__(self, *, sensitivity, epsilon, noise="laplace", monotonic=False,
                 secure=False):
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.secure = _check_secure(secure)
        if self.secure and monotonic:
            raise ValueError("monotonic=True is not supported with secure=True.")
        self.epsilon = _check_epsilon(epsilon)
        if noise not in _NOISE_KINDS:
            raise ValueError(
                f"noise must be one of {sorted(_NOISE_KINDS)}; got {noise!r}.")
        if not isinstance(monotonic, (bool, np.bool_)):
            raise TypeError(f"monotonic must be a bool; got {type(monotonic).__name__}.")
        if monotonic and noise == "exponential":
            raise ValueError("monotonic=True is not supported with noise='exponential'.")
        self.noise = noise
        self.monotonic = bool(monotonic)
        factor = 1.0 if self.monotonic else 2.0
        self.noise_scale = _check_noise_scale(factor * self.sensitivity / self.epsilon,
                                              f"{factor:g} * sensitivity / epsilon")
        self.event = EpsilonDeltaDpEvent(self.epsilon, 0.0)
        # The value's Laplace noise multiplier b / Delta = factor / epsilon, computed without
        # the round trip through sensitivity / noise_scale, which underflows for tiny epsilon.
        value_multiplier = _check_noise_scale(factor / self.epsilon, f"{factor:g} / epsilon")
        self.event_with_value = ComposedDpEvent((self.event, LaplaceDpEvent(value_multiplier)))

    def __call__(self, scores, *, return_value=False, random_state=None, n_threads=None,
                 budget=None, neighboring_relation=None):
        """Select a candidate.

        Parameters
        ----------
        scores : array-like of shape (m,)
            Finite scores, m >= 1. Not modified.
        return_value : bool, default=False
            Also return the selected score plus fresh Laplace(``noise_scale``) noise (costs
            extra privacy: see ``event_with_value``).
        random_state : None, int, SeedSequence or Generator
            Randomness (see :mod:`dpsco_core._random`); None draws fresh OS entropy.
        n_threads : int or None
            OpenMP threads (None: all cores). The result does not depend on it.
        budget : Budget or None, default=None
            A :class:`~dpsco_core.privacy.Budget` charged with ``event`` (``event_with_value`` with ``return_value=True``) before ``scores`` is
            read; :class:`~dpsco_core.exceptions.PrivacyBudgetError` if it would not fit.
        neighboring_relation : str or None, default=None
            The relation ``sensitivity`` was computed under, for the budget (None: the
            budget's own relation).

        Returns
        -------
        index : int
        value : float
            Only with ``return_value=True``.
        """
        seed_seq = _release_arguments(random_state, n_threads)
        # the scores' shape and type (public), not their values, before the charge
        scores = check_vector(scores, "scores", check_finite=False)
        # the exact samplers' grids (public: sensitivity and epsilon), refused before the
        # charge when they cannot hold the noise
        if self.secure:
            from ._secure import permute_and_flip_parameters
            permute_and_flip_parameters(self.sensitivity, self.epsilon)
        elif return_value:
            self._value_grid(1)
        spend(budget, self.event_with_value if return_value else self.event,
              neighboring_relation=neighboring_relation)
        scores = check_vector(scores, "scores")
        if max(float(scores.max()), -float(scores.min())) > _MAX_SCORE:
            raise ValueError(f"scores must be in [-{_MAX_SCORE:.4g}, {_MAX_SCORE:.4g}] (noisy "
                             "scores must not overflow); rescale scores and sensitivity.")
        select_seq, value_seq = child_seed_sequences(seed_seq, 2)
        if self.secure:
            return self._call_secure(scores, return_value, select_seq, value_seq, n_threads)
        generators = block_bit_generators(
            select_seq, _n_blocks(scores.size, _noisy_max.NOISY_MAX_BLOCK_SIZE))
        threads = effective_n_threads(n_threads, work=scores.size)    # serial when small
        index, _ = _noisy_max.report_noisy_max(scores, self.noise_scale,
                                                _NOISE_KINDS[self.noise], generators,
                                                _threads_for(len(generators), threads))
        if not return_value:
            return int(index)
        # The value is released, so its noise is exact (discrete Laplace on a grid, the
        # Laplace mechanism's default); a floating-point Laplace value would leak its input
        # through the low-order bits (module docstring).
        value = _noisy_array(scores[index:index + 1], "scores", self.noise_scale,
                             _noise.LAPLACE, value_seq, 1, self._value_grid)
        return int(index), float(value[0])

    def _value_grid(self, d):
        """Exact Laplace parameters of the value: scale b, i.e. (epsilon / factor)-DP."""
        from ._secure import laplace_parameters
        factor = 1.0 if self.monotonic else 2.0
        return laplace_parameters(self.sensitivity, self.epsilon / factor, d)

    def _call_secure(self, scores, return_value, select_seq, value_seq, n_threads):
        """Permute-and-flip with exact coins on grid scores (see the class Notes)."""
        from . import _secure
        effective_n_threads(n_threads)   # validated for a uniform API; the selection is serial
        k, temperature = _secure.permute_and_flip_parameters(self.sensitivity, self.epsilon)
        q = _secure.to_grid(scores, k, "scores")
        index = int(_secure._discrete.permute_and_flip(
            q, temperature, block_bit_generators(select_seq, 1)[0]))
        if not return_value:
            return index
        # DLap(T) on the grid score: sensitivity Delta' / 2^k, so (epsilon / 2)-DP at most.
        value = np.empty(1, dtype=np.int64)
        _secure.check_status(_secure._discrete.add_discrete_laplace(
            q[index:index + 1], temperature, block_bit_generators(value_seq, 1), value, 1))
        return index, float(_secure.from_grid(value, k)[0])

    def __repr__(self):
        return (f"ReportNoisyMax(sensitivity={self.sensitivity!r}, epsilon={self.epsilon!r}, "
                f"noise={self.noise!r}, monotonic={self.monotonic!r})")


def gaussian_mechanism(x, *, sensitivity, epsilon=None, delta=None, noise_multiplier=None,
                       calibration=None, secure=True, random_state=None,
                       n_threads=None, budget=None, neighboring_relation=None):
    """Release ``x`` plus Gaussian noise (exact by default); see :class:`GaussianMechanism`
    for the calibration and the budget.

    Parameters
    ----------
    x : float or array-like
        The value :math:`f(D)` to release (finite). Not modified.
    sensitivity : float
        l2 sensitivity of ``x`` under the neighbouring relation the caller uses (> 0).
    epsilon, delta : float, optional
        Target :math:`(\\varepsilon, \\delta)`; or give ``noise_multiplier``.
    noise_multiplier : float, optional
        :math:`\\sigma / \\Delta_2`.
    calibration : {"zcdp", "analytic", "classic"} or None, default=None
        See :class:`GaussianMechanism`.
    secure : bool, default=True
        Exact discrete Gaussian noise on a grid (True) or floating-point noise.
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy, the right choice for a release.
    n_threads : int, optional
        Threads of the sampler; the output does not depend on it.
    budget : Budget or None, default=None
        Charged with the release's event before ``x`` is read.
    neighboring_relation : str or None, default=None
        The relation ``sensitivity`` refers to, required with a ``budget`` that has none yet.

    Returns
    -------
    float or ndarray
        ``x`` plus noise, same shape. :math:`(\\varepsilon, \\delta)`-DP for neighbours whose
        ``x`` differ by at most ``sensitivity`` in l2 norm.
    """
    mech = GaussianMechanism(sensitivity=sensitivity, epsilon=epsilon, delta=delta,
                             noise_multiplier=noise_multiplier, calibration=calibration,
                             secure=secure)
    return mech(x, random_state=random_state, n_threads=n_threads, budget=budget,
                neighboring_relation=neighboring_relation)


def laplace_mechanism(x, *, sensitivity, epsilon, secure=True, random_state=None,
                      n_threads=None, budget=None, neighboring_relation=None):
    """Release ``x + Lap(sensitivity / epsilon)`` (exact by default): epsilon-DP; see
    :class:`LaplaceMechanism`.

    Parameters
    ----------
    x : float or array-like
        The value :math:`f(D)` to release (finite). Not modified.
    sensitivity : float
        l1 sensitivity of ``x`` under the neighbouring relation the caller uses (> 0).
    epsilon : float
        Privacy parameter (> 0).
    secure : bool, default=True
        Exact discrete Laplace noise on a grid (True) or floating-point noise.
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy, the right choice for a release.
    n_threads : int, optional
        Threads of the sampler; the output does not depend on it.
    budget : Budget or None, default=None
        Charged with the release's event before ``x`` is read.
    neighboring_relation : str or None, default=None
        The relation ``sensitivity`` refers to, required with a ``budget`` that has none yet.

    Returns
    -------
    float or ndarray
        ``x`` plus noise, same shape: :math:`\\varepsilon`-DP for neighbours whose ``x`` differ by
        at most ``sensitivity`` in l1 norm.
    """
    mech = LaplaceMechanism(sensitivity=sensitivity, epsilon=epsilon, secure=secure)
    return mech(x, random_state=random_state, n_threads=n_threads, budget=budget,
                neighboring_relation=neighboring_relation)


def report_noisy_max(scores, *, sensitivity, epsilon, noise="laplace", monotonic=False,
                     return_value=False, secure=False, random_state=None, n_threads=None,
                     budget=None, neighboring_relation=None):
    """Epsilon-DP index of the (noisily) largest score; see :class:`ReportNoisyMax`.

    Parameters
    ----------
    scores : array-like of shape (m,)
        Finite scores :math:`s_i(D)`, m >= 1. Not modified.
    sensitivity : float
        l-infinity sensitivity of the score vector under the caller's relation (> 0).
    epsilon : float
        Privacy parameter (> 0).
    noise : {"laplace", "gumbel", "exponential"}, default="laplace"
        Laplace (report-noisy-max), Gumbel (the exponential mechanism) or exponential noise
        (permute-and-flip).
    monotonic : bool, default=False
        Declare monotone scores (halves the noise of ``"laplace"`` and ``"gumbel"``); a false
        declaration voids the guarantee.
    return_value : bool, default=False
        Also return the selected score plus fresh exact Laplace noise (costs more epsilon:
        ``ReportNoisyMax.event_with_value``).
    secure : bool, default=False
        Exact permute-and-flip on grid scores.
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy.
    n_threads : int, optional
        Threads of the kernel; the output does not depend on it.
    budget : Budget or None, default=None
        Charged before ``scores`` is read.
    neighboring_relation : str or None, default=None
        The relation ``sensitivity`` refers to, required with a ``budget`` that has none yet.

    Returns
    -------
    int or tuple of (int, float)
        The selected index (and the noisy value with ``return_value=True``). Releasing the index
        is :math:`\\varepsilon`-DP (pure) for neighbours whose scores differ by at most
        ``sensitivity`` in every coordinate; the noisy maximum itself is never released.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsco_core.mechanisms import report_noisy_max
    >>> report_noisy_max(np.array([0.0, 100.0, 3.0]), sensitivity=1.0, epsilon=1.0,
    ...                  random_state=0)
    1
    """
    mech = ReportNoisyMax(sensitivity=sensitivity, epsilon=epsilon, noise=noise,
                          monotonic=monotonic, secure=secure)
    return mech(scores, return_value=return_value, random_state=random_state,
                n_threads=n_threads, budget=budget, neighboring_relation=neighboring_relation)


def exponential_mechanism(scores, *, sensitivity, epsilon, monotonic=False, random_state=None,
                          n_threads=None, budget=None, neighboring_relation=None):
    """The exponential mechanism, ``P(i) ~ exp(epsilon s_i / (2 sensitivity))``: epsilon-DP.

    Sampled exactly as report-noisy-max with Gumbel noise (:class:`ReportNoisyMax`).

    Parameters
    ----------
    scores : array-like of shape (m,)
        Finite scores, m >= 1. Not modified.
    sensitivity : float
        l-infinity sensitivity of the scores under the caller's relation (> 0).
    epsilon : float
        Privacy parameter (> 0).
    monotonic : bool, default=False
        Declare monotone scores (halves the noise); a false declaration voids the guarantee.
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy.
    n_threads : int, optional
        Threads of the kernel; the output does not depend on it.
    budget : Budget or None, default=None
        Charged before ``scores`` is read.
    neighboring_relation : str or None, default=None
        The relation ``sensitivity`` refers to, required with a ``budget`` that has none yet.

    Returns
    -------
    int
        The selected index: :math:`\\varepsilon`-DP.
    """
    return report_noisy_max(scores, sensitivity=sensitivity, epsilon=epsilon, noise="gumbel",
                            monotonic=monotonic, random_state=random_state,
                            n_threads=n_threads, budget=budget,
                            neighboring_relation=neighboring_relation)


def _grid_counts(values, grid):
    """#{i : values_i <= grid_k} for every grid point (sensitivity 1 under every relation)."""
    return np.searchsorted(np.sort(values), grid, side="right")


def grid_quantile(values, grid, *, q, n_public, epsilon, random_state=None, budget=None,
                  neighboring_relation=None, log_base=None):
    r"""A private ``q``-quantile of ``values``: the point of a public ``grid`` the exponential
    mechanism selects. Pure :math:`\varepsilon`-DP under replace-one, zero-out and
    add/remove-one.

    The utility of grid point :math:`g_k` is :math:`u_k = -|\#\{i : v_i \le g_k\} - q m|`
    with :math:`m` = ``n_public``, and :math:`g_k` is selected with probability
    :math:`\propto \exp(\varepsilon u_k / 2)` (McSherry and Talwar 2007; the private
    quantile of Smith 2011). One record moves every count by at most one under each relation
    (replace-one: one value changes; add/remove-one: one value appears or vanishes while
    :math:`m` is the public count, never the private one; zero-out: the null record's value
    is a fixed public one), so :math:`u` has sensitivity 1 and the index is
    :math:`\varepsilon`-DP (``EpsilonDeltaDpEvent(epsilon)``, charged to ``budget`` before
    ``values`` is read). The error is in rank: :math:`|\#\{v_i \le g\} - q m| \le
    2(\log G + t) / \varepsilon` with probability :math:`1 - e^{-t}` over the G grid
    points, up to the grid's spacing. Used by :func:`dpsco_core.solvers.ssp.dp_ssp` (its row
    clip) and by the estimators' ``rms_row_norm="private"``.

    ``log_base`` is a public base measure :math:`\mu` (McSherry and Talwar's): :math:`g_k` is
    then selected with probability :math:`\propto \mu_k \exp(\varepsilon u_k / 2)`, still
    :math:`\varepsilon`-DP (:math:`\mu` does not depend on the data, so the ratio between
    neighbours is that of the exponential factors). It matters only where the counts cannot
    tell grid points apart (small :math:`\varepsilon m`): it says which miss costs less.

    Parameters
    ----------
    values : array-like of shape (n,)
        The private values (finite).
    grid : array-like of shape (G,)
        The public candidates, finite and strictly increasing, G >= 1.
    q : float
        The quantile, in [0, 1].
    n_public : float
        The public record count m (n itself under replace-one and zero-out, where it is
        public), > 0.
    epsilon : float
        Privacy parameter (> 0).
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy.
    budget : Budget or None, default=None
        Charged before ``values`` is read.
    neighboring_relation : str or None, default=None
        The relation, required with a ``budget`` that has none yet.
    log_base : array-like of shape (G,) or None, default=None
        Public finite log-weights :math:`\log \mu_k` of the grid points (a function of public
        numbers only); None: the uniform base.

    Returns
    -------
    float
        The selected grid point: :math:`\varepsilon`-DP.
    """
    grid = check_vector(grid, "grid")
    if log_base is not None:
        log_base = check_vector(log_base, "log_base")
        if log_base.shape != grid.shape:
            raise ValueError(f"log_base must have the grid's shape {grid.shape}; got "
                             f"{log_base.shape}.")
    if grid.size > 1 and not np.all(np.diff(grid) > 0):
        raise ValueError("grid must be strictly increasing.")
    q = float(q)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1]; got {q!r}.")
    m = check_positive(n_public, "n_public")
    epsilon = _check_epsilon(epsilon)
    seed_seq = _release_arguments(random_state, None)
    values = check_vector(values, "values", allow_empty=True, check_finite=False)  # shape only
    spend(budget, EpsilonDeltaDpEvent(epsilon), neighboring_relation=neighboring_relation)
    values = check_vector(values, "values", allow_empty=True)
    scores = -np.abs(_grid_counts(values, grid) - q * m)
    if log_base is not None:
        # exp(eps (u + 2 log mu / eps) / 2) = mu exp(eps u / 2): a public shift of the scores,
        # their sensitivity unchanged
        scores = scores + (2.0 / epsilon) * log_base
    index = exponential_mechanism(scores, sensitivity=1.0, epsilon=epsilon,
                                  random_state=seed_seq)
    return float(grid[index])


def permute_and_flip(scores, *, sensitivity, epsilon, random_state=None, n_threads=None,
                     budget=None, neighboring_relation=None):
    """Permute-and-flip (McKenna and Sheldon 2020): epsilon-DP selection.

    Sampled exactly as report-noisy-max with exponential noise of scale
    ``2 sensitivity / epsilon`` (Ding et al. 2021); see :class:`ReportNoisyMax`.

    Parameters
    ----------
    scores : array-like of shape (m,)
        Finite scores, m >= 1. Not modified.
    sensitivity : float
        l-infinity sensitivity of the scores under the caller's relation (> 0).
    epsilon : float
        Privacy parameter (> 0).
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy.
    n_threads : int, optional
        Threads of the kernel; the output does not depend on it.
    budget : Budget or None, default=None
        Charged before ``scores`` is read.
    neighboring_relation : str or None, default=None
        The relation ``sensitivity`` refers to, required with a ``budget`` that has none yet.

    Returns
    -------
    int
        The selected index: :math:`\\varepsilon`-DP.
    """
    return report_noisy_max(scores, sensitivity=sensitivity, epsilon=epsilon,
                            noise="exponential", random_state=random_state,
                            n_threads=n_threads, budget=budget,
                            neighboring_relation=neighboring_relation)
