"""Problems B, C and D of the l1 reproduction (note 004, section 7.1): the sweep "problems".

``python -m dpsco_core reproduce l1 --only problems [--full]`` (module :mod:`.l1`, whose tuning,
runners and tables this module reuses). Every problem draws its features from a
:class:`~dpsco_core.datasets.RademacherLassoStream` (``a ~ Unif{-1, +1}^d``, so
``||a||_inf = 1`` and ``E[a a^T] = I``; its ``x_true`` is 5-sparse with ``||x_true||_1 = 0.9``)
and changes the labels and the loss:

* **B, "logistic"**: ``y = +1`` with probability ``sigmoid(<a, x_true>)``, else -1; logistic
  loss over the unit l1 ball (well-specified: x_true, interior, is the population minimizer).
  ``L = 1`` (``|l'| <= 1``).
* **C, "absolute"**: ``y = <a, x_true> + xi``, ``xi ~ Unif[-1/2, 1/2]`` (the data of problem
  A), absolute loss ``|<a, x> - y|`` (median regression, non-smooth; x_true is the population
  minimizer since xi is symmetric). ``L = 1``.
* **D, "simplex"**: the LASSO of problem A with ``x_true`` in the simplex
  ``{x >= 0, sum x = 1}`` (A's support, weights ``|x_true_A| / ||x_true_A||_1``), labels
  ``<a, x_true> + xi``, loss ``(<a, x> - y)^2 / 2`` over the simplex. ``L = 2.5`` (the
  residual is at most ``||x||_1 + ||x_true||_1 + 1/2``).

Excess population loss ``F(x) - F(x_true)``:

* D: exactly ``||x - x_true||_2^2 / 2`` (x_true feasible, identity feature covariance).
* B and C: on a held-out sample of ``HOLDOUT`` feature vectors drawn once per (d, seed) and
  shared by all methods (common random numbers), with the label randomness integrated in
  closed form given the features: B, the mean over held-out a of
  ``KL(Bernoulli(sigmoid(<a, x_true>)) || Bernoulli(sigmoid(<a, x>)))``; C, the mean of
  ``huber_{1/2}(<a, x - x_true>) / (1/2)``, since ``E|t - xi| - E|xi|`` is ``t^2`` for
  ``|t| <= 1/2`` and ``|t| - 1/4`` beyond. Every term is >= 0, so the estimate is >= 0 and its
  only error is the feature sampling (relative standard error about ``sqrt(2 / HOLDOUT)`` near
  x_true).

Methods (epsilon = 1, delta = n^-1.1, tuned as in :mod:`.l1`: clip factor in ``CLIP_FACTORS``
of L times one parameter of the method's own):

* B: ``alg3`` (Algorithm 3, ``vr_frank_wolfe``), ``ttz`` (``ttz_frank_wolfe``, full-batch,
  iterations ``{1/64, 1/16, 1/4} x (n eps)^(2/3)``), ``dp_sgd_proj``, ``alg2``, and x = 0.
* C: ``alg2`` (the paper's method for non-smooth losses), ``dp_sgd_proj``, ``ttz`` (it accepts
  the absolute loss, whose derivative is bounded; its guarantee assumes a bounded curvature
  constant, which the absolute loss does not have: an empirical baseline), and x = 0.
  Algorithm 3 is left out: its variance reduction needs smooth per-sample losses.
* D: ``alg3`` and ``ttz`` with ``domain="simplex"``, and the uniform point ``1/d`` (the
  centre the Frank-Wolfe methods start from). DP-SGD and Algorithm 2 project onto the l1
  ball only.

Grid: n = 1e4, d in {100, 1000}; 3 evaluation seeds and 1 tuning seed (default), 10 and 2
with ``--full``, which adds d = 10 (n = 1e5 does not fit: TTZ's full-batch iterations cost
``n^(5/3) d``, about 5 minutes per run at d = 1000).
"""

import numpy as np

from . import l1

__all__ = ["PROBLEMS", "SWEEPS", "METHODS", "HOLDOUT", "RelabelledStream", "grid",
           "report_problems"]

HOLDOUT = 50_000
_LABELS = {"logistic": "B: logistic", "absolute": "C: absolute loss (non-smooth)",
           "simplex": "D: LASSO over the simplex"}
_EXCESS = {"logistic": "held-out mean KL", "absolute": "held-out closed form",
           "simplex": "||x - x_true||^2 / 2"}


class RelabelledStream:
    """The packed rows of a materialized RademacherLassoStream with other labels and loss.

    A sign-row stream (``sign_rows``, ``n_words``; for ``vr_frank_wolfe`` and
    ``projected_dp_sgd_l1``) with ``dense()``, the cached dense ``Problem`` of the full-batch
    solvers, ``excess_loss(x)`` from ``excess`` and ``objective`` = ``excess_loss`` (what the
    solvers' histories record).
    """

    is_sparse = False

    def __init__(self, stream, y, loss, x_true, excess):
        from dpsco_core.losses import check_loss
        from dpsco_core.penalties import NoPenalty
        self._stream = stream
        self.n_samples, self.n_features = stream.n_samples, stream.n_features
        self.n_words = stream.n_words
        self.loss, self.penalty = check_loss(loss), NoPenalty()
        self.y = np.ascontiguousarray(self.loss.check_labels(y))
        self.x_true, self._excess, self._dense = x_true, excess, None

    def sign_rows(self, indices):
        signs, _ = self._stream.sign_rows(indices)
        return signs, self.y[np.asarray(indices, dtype=np.int64).ravel()]

    def rows(self, indices):
        X, _ = self._stream.rows(indices)
        return X, self.y[np.asarray(indices, dtype=np.int64).ravel()]

    def dense(self):
        if self._dense is None:
            import dpsco_core as dp
            self._dense = dp.Problem(self.rows(np.arange(self.n_samples))[0], self.y,
                                     loss=self.loss)
        return self._dense

    def excess_loss(self, x):
        return float(self._excess(np.asarray(x, dtype=np.float64)))

    objective = excess_loss


def _seeds(seed):
    """Child streams of ``seed`` for the labels and the held-out features (the data stream
    itself uses ``seed``'s root, so all three are independent)."""
    from dpsco_core._random import block_bit_generators, check_random_state, \
        child_seed_sequences
    labels, holdout = child_seed_sequences(check_random_state(seed), 2)
    return (np.random.Generator(block_bit_generators(labels, 1)[0]),
            np.random.Generator(block_bit_generators(holdout, 1)[0]))


def _holdout(rng, d):
    """HOLDOUT x d Rademacher features (float32: exact for +-1, half the memory)."""
    A = rng.integers(0, 2, size=(HOLDOUT, d), dtype=np.int8).astype(np.float32)
    A *= 2.0
    A -= 1.0
    return A


def _margins(A, x):
    return A @ x.astype(np.float32) if x.any() else np.zeros(A.shape[0], dtype=np.float32)


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))        # no overflow


def _logistic_data(n, d, seed):
    from dpsco_core.datasets import RademacherLassoStream
    from dpsco_core.losses import Logistic
    # noise 0: the stream's labels are the margins <a, x_true>.
    stream = RademacherLassoStream(n, d, l1.SPARSITY, radius=1.0, noise=0.0,
                                   random_state=seed).materialize()
    x_true = stream.x_true
    label_rng, hold_rng = _seeds(seed)
    _, m_star = stream.sign_rows(np.arange(n))
    y = np.where(label_rng.random(n) < _sigmoid(m_star), 1.0, -1.0)
    A = _holdout(hold_rng, d)
    z_star = _margins(A, x_true).astype(np.float64)
    p, loss = _sigmoid(z_star), Logistic()

    def risk(z):        # E[l(z, y) | a] with P(y = 1 | a) = sigmoid(<a, x_true>)
        return p * loss.value(z, 1.0) + (1.0 - p) * loss.value(z, -1.0)
    base = float(np.mean(risk(z_star)))
    return RelabelledStream(stream, y, "logistic", x_true,
                            lambda x: np.mean(risk(_margins(A, x).astype(np.float64))) - base)


def _absolute_data(n, d, seed):
    from dpsco_core.losses import Huber
    stream = l1._stream(n, d, seed)
    _, hold_rng = _seeds(seed)
    A = _holdout(hold_rng, d)
    s, huber = l1.NOISE, Huber(l1.NOISE)

    def excess(x):      # E|t - xi| - E|xi| = huber_s(t) / s for xi ~ Unif[-s, s]
        t = _margins(A, x - stream.x_true).astype(np.float64)
        return np.mean(huber.value(t, 0.0)) / s
    return RelabelledStream(stream, stream.sign_rows(np.arange(n))[1], "absolute",
                            stream.x_true, excess)


def _simplex_data(n, d, seed):
    stream = l1._stream(n, d, seed)
    x_true = np.abs(stream.x_true) / np.abs(stream.x_true).sum()
    X, y_a = stream.rows(np.arange(n))
    support = np.flatnonzero(x_true)
    # Same noise xi as problem A: y = y_A - <a, x_A> + <a, x_true>.
    y = y_a + X[:, support] @ (x_true - stream.x_true)[support]
    return RelabelledStream(stream, y, "half_squared", x_true,
                            lambda x: 0.5 * np.sum((x - x_true) ** 2))


PROBLEMS = {"logistic": l1.L1Problem(_logistic_data, lipschitz=1.0),
            "absolute": l1.L1Problem(_absolute_data, lipschitz=1.0),
            "simplex": l1.L1Problem(_simplex_data, lipschitz=l1.LIPSCHITZ, domain="simplex",
                                    baseline="uniform")}
SWEEPS = tuple(PROBLEMS)
METHODS = {"logistic": ("alg3", "ttz", "dp_sgd_proj", "alg2"),
           "absolute": ("alg2", "ttz", "dp_sgd_proj"),
           "simplex": ("alg3", "ttz")}


def grid(full):
    """The problems' points ``(sweep, n, d, epsilon)`` and methods (seeds: :func:`l1.grid`)."""
    ds = (10, 100, 1000) if full else (100, 1000)
    return [(p, 10_000, d, 1.0) for d in ds for p in SWEEPS], dict(METHODS)


def report_problems(rows, chosen, points):
    """Markdown: one table per problem (rows d, columns methods), mean +- standard error."""
    summ = l1.summarize(rows)
    lines = []
    for sweep in SWEEPS:
        pts = [p for p in points if p[0] == sweep]
        if not pts:
            continue
        methods = [m for m in (*METHODS[sweep], PROBLEMS[sweep].baseline)
                   if (sweep, m, *pts[0][1:]) in summ]
        lines += [f"### problem {_LABELS[sweep]} (excess: {_EXCESS[sweep]})", "",
                  "| n | d | epsilon | " + " | ".join(methods) + " |",
                  "|---" * (3 + len(methods)) + "|"]
        lines += [l1._table_row(summ, chosen, sweep, methods, p[1:]) for p in pts]
        if len(pts) >= 2:
            first, last = pts[0][1:], pts[-1][1:]
            lines.append("")
            for m in methods[:-1]:
                f, (lo, hi) = l1.growth_factor(rows, sweep, m, first, last)
                lines.append(f"- {m}: excess x{f:.2f} (95% bootstrap {lo:.2f} .. {hi:.2f}) "
                             f"from d={first[1]} to d={last[1]}.")
        lines.append("")
    return "\n".join(lines)
