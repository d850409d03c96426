r"""Audit cases for the solvers: DP-CD updates and DP-SGD steps, through the real kernels.

Each builder runs the public solver once on the canary dataset to obtain its calibration (the
per-coordinate steps, clips and noise scales of ``dp_cd``; the noise scale, step, sample rate
and step count of ``dp_sgd``) and its claimed guarantee (``Result.privacy``), then returns an
:class:`~dpsco_core.audit.AuditCase` whose batched sampler replays the mechanism many times
through the solver's own compiled kernel with exactly those constants. Nothing is recomputed
by hand: a wrong sensitivity or noise multiplier in a solver shows up in its audit.

The canaries make every per-sample term sit on the clipping boundary for the whole run (labels
of magnitude :data:`CANARY_LABEL`, so that :math:`|x_{ij}\,\ell'(z_i, y_i)| \gg C` at every
iterate a short run reaches): the clipped contributions are constants, the released iterate
is a fixed shift plus Gaussian noise, and the shift between the neighbouring inputs is the
full sensitivity. The statistic is the sum of the released coordinates, which for these
pairs is the Neyman-Pearson (likelihood-ratio) statistic of the composed Gaussian releases.

``noise_factor`` and ``clipping`` build the deliberately broken twins of the power tests
(the claim stays the honest solver's): they exist to show that the audit can fail.
"""

import numpy as np
import scipy.sparse as sp

from .._random import BIT_GENERATOR, child_seed_sequences
from .._validation import check_int, check_scalar
from .cases import AuditCase

__all__ = ["CANARY_LABEL", "dp_cd_case", "dp_sgd_case", "vr_frank_wolfe_leaf_case"]

#: Label magnitude of the canary records: every clipped term stays at its bound (see above).
CANARY_LABEL = 1e6

#: Runs per kernel call in the samplers (bounds the scratch memory of one call).
_CHUNK = 1 << 17

#: Coordinates (independent trials) per DP-SGD kernel call: the kernel's partial sums are
#: dense in p, so one call costs O(steps * q * p^2 / BATCH_BLOCK); 4096 keeps that small.
_SGD_CHUNK = 4096


def _broken(values, noise_factor, clipping, clip_values):
    noise = np.asarray(values, dtype=np.float64) * noise_factor
    clips = np.asarray(clip_values, dtype=np.float64)
    return noise, (clips if clipping else np.full_like(clips, np.inf))


def _twin_tag(noise_factor, clipping):
    """The name suffix of a broken twin ("" for the honest case)."""
    if noise_factor == 1.0 and clipping:
        return ""
    return f", noise x{noise_factor:g}" + ("" if clipping else ", no clipping")


# ---------------------------------------------------------------------------------- DP-CD


def _dp_cd_data(n_features, canary_sign):
    """Five records, every x_i = (1, ..., 1): the canary (row 0) with label
    ``canary_sign * CANARY_LABEL`` and two pairs labelled +-CANARY_LABEL whose clipped terms
    cancel. Squared loss at small margins: ``x_ij l'(z_i, y_i) = z_i - y_i ~ -y_i``, so the
    canary's clipped term is ``-canary_sign * C_j``; replacing it by its mirror image moves
    every coordinate gradient by ``2 C_j / n``, the replace-one sensitivity."""
    X = np.ones((5, n_features), order="F")
    y = np.array([canary_sign, 1.0, -1.0, 1.0, -1.0]) * CANARY_LABEL
    return X, y


def dp_cd_case(*, epsilon, delta, n_updates=1, n_features=2, noise_factor=1.0, clipping=True):
    """DP-CD (replace-one): ``n_updates`` cyclic coordinate updates from 0, the canary moved.

    The solver ``dp_cd`` is run on the canary dataset with ``n_outer=1``,
    ``n_inner=n_updates``, cyclic selection (the canary's coordinates are hit
    deterministically), the last iterate (``average=False``), no penalty and public
    smoothness constants (those of X, which both inputs share, so that steps and clips are
    the same on both inputs; the
    data-dependent ``smoothness="exact"`` is an accounted-for assumption of the solver, not
    part of the audited mechanism). Its ``stats`` give the per-coordinate steps, clips and
    noise scales; its report gives the claimed (epsilon, delta).

    The sampler runs ``n`` independent DP-CD runs per call through the kernel's grid entry
    point ``_cd.cd_grid_dense`` with those constants, one thread and one bit generator shared
    by consecutive runs (each run consumes its own consecutive part of the stream: the
    runs are independent). The statistic is ``coef.sum()``: each update shifts its coordinate
    by ``step_j * 2 C_j / n`` with noise ``step_j * sigma_j``, all equal here, so the sum is
    the likelihood-ratio statistic of the ``n_updates`` composed Gaussian releases (true
    privacy: Gaussian DP with ``mu = sqrt(n_updates) / noise_multiplier``).

    Parameters
    ----------
    epsilon, delta : float
        The budget passed to ``dp_cd``.
    n_updates : int, default=1
        Coordinate updates of the run (releases).
    n_features : int, default=2
        Coordinates (the cyclic rule visits them in turn).
    noise_factor : float, default=1.0
        Multiplies the solver's noise scales (a broken twin: 0.5 is half the noise).
    clipping : bool, default=True
        ``False`` disables clipping in the kernel (a broken twin).
    """
    from .. import solvers
    from .._kernels import _cd
    from ..problems import Problem

    n_updates = check_int(n_updates, "n_updates", low=1)
    n_features = check_int(n_features, "n_features", low=1)
    noise_factor = check_scalar(noise_factor, "noise_factor", low=0.0, low_open=False)
    inputs = [_dp_cd_data(n_features, sign) for sign in (1.0, -1.0)]
    # M_j depends on X only, which the two inputs share: public constants for both.
    smoothness = Problem(*inputs[1], loss="squared").coordinate_smoothness()
    results = [solvers.dp_cd(Problem(X, y, loss="squared"), epsilon=epsilon, delta=delta,
                             n_outer=1, n_inner=n_updates, average=False, selection="cyclic",
                             smoothness=smoothness, random_state=0, record_history=False)
               for X, y in inputs]
    stats = results[1].stats
    for key in ("steps", "clips", "noise_scales"):
        if not np.array_equal(results[0].stats[key], stats[key]):   # pragma: no cover
            raise RuntimeError(f"dp_cd's {key} depend on the canary; the audit needs them "
                               "public (equal on both inputs).")
    problem = Problem(*inputs[1], loss="squared")
    loss_kind, loss_param = problem.loss.kind, problem.loss.param
    penalty = (problem.penalty.kind, *problem.penalty.params)
    noise_scales, clips = _broken(stats["noise_scales"], noise_factor, clipping,
                                  stats["clips"])
    steps = np.asarray(stats["steps"], dtype=np.float64)

    def sampler(data, n, seed_seq):
        X, y = data
        generator = BIT_GENERATOR(seed_seq)
        out = np.empty(n)
        for lo in range(0, n, _CHUNK):
            runs = min(_CHUNK, n - lo)
            coef = np.zeros((runs, n_features))
            _cd.cd_grid_dense(X, y, loss_kind, loss_param, *penalty,
                              np.tile(steps, (runs, 1)), np.tile(clips, (runs, 1)),
                              np.tile(noise_scales, (runs, 1)), coef, 1, n_updates, False,
                              True, [generator] * runs, np.zeros(runs, dtype=np.int64), 1)
            out[lo:lo + runs] = coef.sum(axis=1)
        return out

    report = results[1].privacy
    tag = _twin_tag(noise_factor, clipping)
    return AuditCase(name=f"dp_cd(updates={n_updates}, s={stats['noise_multiplier']:.4g}{tag})",
                     sampler=sampler, input0=inputs[0], input1=inputs[1],
                     epsilon=report.epsilon, delta=report.delta)


# ---------------------------------------------------------------------------------- DP-SGD


def dp_sgd_case(*, epsilon, delta, sample_rate, passes, clip=1.0, noise_factor=1.0,
                clipping=True):
    r"""DP-SGD with Poisson sampling (zero-out): the canary present or zeroed.

    The solver ``dp_sgd`` is run once on the canary dataset (the canary
    :math:`x = 1, y = -` :data:`CANARY_LABEL` and 15 zero records) with
    ``sample_rate``, ``passes``, ``clip`` and ``neighboring_relation="zero_out"`` (the
    "absent" input below is the zero record, and the normalisation replayed is the solver's
    ``q n`` with n public; the add/remove-one version, with ``public_n``, is audited black-box
    in :mod:`~dpsco_core.audit.neighbour_cases`);
    its ``stats`` give the noise scale (absolute, on the clipped sum), the step, the
    normalisation ``q n`` and the number of steps, and its report the claimed guarantee.

    Batched sampler: one call of the kernel ``_batch.sgd_csr`` runs ``k`` independent trials
    at once on the CSR identity (row r is the canary of coordinate r: ``x_r = e_r``,
    ``y_r = -CANARY_LABEL``) for the input "present", or on ``k`` empty rows (gradient 0: the
    zero record of the zero-out relation) for "absent". Row r enters each Poisson batch
    independently with probability q, and coordinate r depends only on row r and on its own
    noise draws (the loss, the clipping by the row norm and the penalty-free prox are all
    coordinate-wise for these rows), so the coordinates are ``k`` independent runs of the
    one-canary mechanism. The statistic is the canary coordinate of the last iterate,
    ``-eta / (q n) * (C * #{steps with the canary} + sum of the noise)``.

    Parameters
    ----------
    epsilon, delta : float
        The solver's target.
    sample_rate : float
        Poisson rate q.
    passes : float
        Data passes.
    clip : float, default=1.0
        Per-sample clip C.
    noise_factor : float, default=1.0
        Multiplies the replayed noise (below 1: a planted bug the audit must catch).
    clipping : bool, default=True
        Replay the clipping (False: a planted bug).

    Returns
    -------
    AuditCase
    """
    from .. import solvers
    from .._kernels import _batch
    from ..problems import Problem

    noise_factor = check_scalar(noise_factor, "noise_factor", low=0.0, low_open=False)
    X = np.zeros((16, 1))
    X[0, 0] = 1.0
    y = np.zeros(16)
    y[0] = -CANARY_LABEL
    problem = Problem(X, y, loss="squared")
    result = solvers.dp_sgd(problem, epsilon=epsilon, delta=delta, passes=passes,
                            sample_rate=sample_rate, clip=clip,
                            neighboring_relation="zero_out", random_state=0,
                            record_history=False)
    stats = result.stats
    noise_scale, clip_used = _broken(stats["noise_scale"], noise_factor, clipping, clip)
    noise_scale, clip_used = float(noise_scale), float(clip_used)
    loss_kind, loss_param = problem.loss.kind, problem.loss.param
    penalty = (problem.penalty.kind, *problem.penalty.params)
    n_steps, q = stats["steps"], stats["sample_rate"]
    eta, norm = stats["step"], stats["batch_size"]

    def sampler(present, n, seed_seq):
        chunks = range(0, n, _SGD_CHUNK)
        out = np.empty(n)
        for lo, seq in zip(chunks, child_seed_sequences(seed_seq, len(chunks))):
            k = min(_SGD_CHUNK, n - lo)
            if present:
                rows = sp.identity(k, format="csr", dtype=np.float64)
                row_norms = np.ones(k)
            else:
                rows = sp.csr_matrix((k, k), dtype=np.float64)
                row_norms = np.zeros(k)
            rows.indices = rows.indices.astype(np.int64)
            rows.indptr = rows.indptr.astype(np.int64)
            coef = np.zeros(k)
            sampling_gen, noise_gen = (BIT_GENERATOR(s) for s in child_seed_sequences(seq, 2))
            _batch.sgd_csr(rows.data, rows.indices, rows.indptr, np.full(k, -CANARY_LABEL),
                           row_norms, loss_kind, loss_param, *penalty, coef, n_steps,
                           _batch.POISSON, q, 0, eta, clip_used, noise_scale, norm,
                           sampling_gen, noise_gen, 1)
            out[lo:lo + k] = coef
        return out

    report = result.privacy
    tag = _twin_tag(noise_factor, clipping)
    return AuditCase(
        name=(f"dp_sgd(q={q:g}, steps={n_steps}, s={stats['noise_multiplier']:.4g}{tag})"),
        sampler=sampler, input0=False, input1=True, epsilon=report.epsilon,
        delta=report.delta)



# ----------------------------------------------------------------------- Frank-Wolfe leaf


def vr_frank_wolfe_leaf_case(*, epsilon, batch=64, noise="laplace", noise_factor=1.0,
                             clipping=True):
    r"""One leaf of ``vr_frank_wolfe`` (replace-one): report-noisy-max over :math:`\pm` grad.

    The solver is run once (pure DP, ``batch`` root samples, one phase, l1 ball of radius 1,
    ``lipschitz=1``) on the canary dataset; its ``stats`` give the phase's noise scale
    ``lambdas[0]`` and its ledger the root level's score sensitivity
    :math:`\Delta = 2 D L / b` and per-leaf guarantee ``eps_leaf`` = :math:`2\Delta/\lambda`,
    which is the claim audited here (one leaf release).

    Data: one feature, every :math:`a_i = 1`, squared loss, labels :math:`\pm 1` (derivative
    :math:`\mp 2`, clipped to :math:`\mp L`) and the canary's :math:`\pm`
    :data:`CANARY_LABEL`, so that the root estimate is :math:`v = (L/b)\,(k_+ - k_-)`
    (without clipping the canary's term dominates: the no-clipping twin is caught). The two
    candidates score :math:`-D v` (vertex :math:`+D e_0`) and :math:`+D v` (vertex
    :math:`-D e_0`); the canary (row 0) flips from :math:`+L` to :math:`-L`, which moves the
    two scores by :math:`\pm\Delta` in opposite directions: the non-monotone adversarial pair
    of note 004, section 10, oracle 6, with a lead of about :math:`4\Delta/\varepsilon_{leaf}`
    for the second candidate. The statistic is the indicator that vertex :math:`+D e_0` is
    selected.

    The sampler calls the kernel ``_frank_wolfe.vr_gradient_rnm`` once per trial (the root
    leaf: ``x = 0``, no correction, rows ``0..b-1``), reusing one bit generator so that trials
    consume consecutive, independent parts of its stream.

    Parameters
    ----------
    epsilon : float
        The solver's target (pure DP).
    batch : int, default=64
        Root batch b.
    noise : {"laplace", "gumbel", "exponential"}, default="laplace"
        Report-noisy-max noise.
    noise_factor : float, default=1.0
        Multiplies the replayed noise (below 1: a planted bug the audit must catch).
    clipping : bool, default=True
        Replay the clipping (False: a planted bug).

    Returns
    -------
    AuditCase
    """
    from .. import solvers
    from .._kernels import _frank_wolfe
    from ..problems import Problem
    from ..solvers.frank_wolfe import _NOISE

    batch = check_int(batch, "batch", low=4)
    batch += batch % 2
    noise_factor = check_scalar(noise_factor, "noise_factor", low=0.0, low_open=False)
    n = 2 * batch                        # Algorithm 3 with T = 1 uses 1.5 b samples
    X = np.ones((n, 1))
    probe = Problem(X, np.full(n, CANARY_LABEL), loss="squared")
    result = solvers.vr_frank_wolfe(probe, epsilon=epsilon, batch=batch, n_phases=1,
                                    noise=noise, random_state=0, record_history=False)
    lam = result.stats["lambdas"][0]
    leaf = next(r for r in result.stats["ledger"] if r["phase"] == 1 and r["depth"] == 0)
    lead = 2 * max(1, round(2.0 / leaf["eps_leaf"]))      # k_+ - k_- on input 0 (even)
    signs = np.ones(batch)
    signs[1 + (batch + lead) // 2:] = -1.0               # row 0 (canary) +, k_+ - k_- = lead
    inputs = []
    for canary in (1.0, -1.0):
        y = np.ones(n)
        y[:batch] = -signs                               # l'(0, y) = -2 y: sign of signs
        y[0] = -CANARY_LABEL * canary
        inputs.append(Problem(X, y, loss="squared"))
    row_clip = np.full(n, 1.0 if clipping else np.inf)  # L / max_j |a_ij| with L = 1
    scale = lam * noise_factor
    kind = _NOISE[noise]
    rows = np.arange(batch, dtype=np.intp)
    loss = inputs[0].loss

    def sampler(problem, n_trials, seed_seq):
        gens = [BIT_GENERATOR(seed_seq)]
        Xc, y = problem.X_c(), problem.y
        w, v, resid = np.zeros(1), np.empty(1), np.empty(batch)
        out = np.empty(n_trials)
        for t in range(n_trials):
            _, sign = _frank_wolfe.vr_gradient_rnm(
                Xc, y, rows, loss.kind, loss.param, row_clip, w, 1.0, w, 1.0, w, False,
                _frank_wolfe.DOMAIN_L1_BALL, 1.0, scale, kind, gens, 1, resid, v)
            out[t] = sign == 1
        return out

    tag = _twin_tag(noise_factor, clipping)
    return AuditCase(name=f"vr_frank_wolfe leaf({noise}, lambda={lam:.4g}{tag})",
                     sampler=sampler, input0=inputs[0], input1=inputs[1],
                     epsilon=leaf["eps_leaf"], delta=0.0)
