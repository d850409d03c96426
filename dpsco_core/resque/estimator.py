r"""ReSQue: reweighted stochastic queries (Carmon et al. 2023, Definition 2).

For a centre :math:`\bar x`, a smoothing radius ρ and a stochastic gradient oracle g,

.. math::

    \mathrm{ReSQue}(x) = \frac{\gamma_\rho(x - \bar x - \xi)}{\gamma_\rho(\xi)}\,
    g(\bar x + \xi), \qquad \xi \sim N(0, \rho^2 I_d),

is an unbiased estimate of :math:`\nabla \hat f_\rho(x)`, :math:`\hat f_\rho = f * \gamma_\rho`
(Lemma 1), for every x. The query point :math:`\bar x + \xi` does not depend on x, so all the
oracle calls of a ball subproblem are one parallel batch; only the scalar weights depend on the
iterate. The weight is evaluated in log space in standardized coordinates (note 000, 1.2):
with :math:`\tilde v = (x - \bar x)/\rho` and :math:`\zeta = \xi/\rho \sim N(0, I)`,

.. math::

    \log w = \langle \tilde v, \zeta\rangle - \tfrac12\|\tilde v\|^2,

never the Gaussian densities (which under- or overflow) and never :math:`\|\xi\|^2 -
\|v - \xi\|^2` (cancellation). Moments: :math:`E w = 1`, :math:`E w\xi = v`,
:math:`E w^2 = e^{\|v\|^2/\rho^2}` (so keep :math:`\|x - \bar x\| \le \rho`; a warning is raised
beyond). Batched estimates are plain averages :math:`\frac1N\sum_i w_i G_i`, never
self-normalized (which would bias them).

Entry points: :func:`draw_resque_samples`, :func:`resque_log_weights`, :func:`resque_estimate`
(single query or m queries against N stored samples), :class:`ReSQueBatch` (one ball's batch,
samples stored or regenerated from their block streams) and :class:`GLMReSQueBatch` (the GLM
fast path: one loss derivative and one row index per sample, margins cached per centre; note
000, section 10, K4). The compiled kernel is ``_resque`` (OpenMP over fixed sample blocks,
bitwise equal for any thread count); its twin is :mod:`dpsco_core.reference.resque`.

References
----------
.. [1] Y. Carmon, A. Jambulapati, Y. Jin, Y. T. Lee, D. Liu, A. Sidford, K. Tian, "ReSQueing
   parallel and private stochastic convex optimization", FOCS 2023, Definition 2, Lemmas 1-2.
"""

import warnings

import numpy as np

from .._random import block_bit_generators, check_random_state, child_seed_sequences
from .._config import effective_n_threads
from .._validation import (all_finite, check_int, check_n_threads, check_positive,
                          check_real_array, check_vector)
from ..exceptions import DPSCOWarning, external_stacklevel

__all__ = ["ReSQueWarning", "draw_resque_samples", "resque_log_weights", "resque_estimate",
           "ReSQueBatch", "GLMReSQueBatch", "SAMPLE_BLOCK"]

#: Samples per random block and per partial sum of the kernel.
SAMPLE_BLOCK = 512


class ReSQueWarning(DPSCOWarning):
    """A query lies farther than ρ from the centre: the weights' variance exp(‖v‖²/ρ²) explodes."""


def _kernel():
    from .._kernels import _resque
    return _resque


def _check_matrix(a, name, cols=None):
    arr = check_real_array(a, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional; got an array of shape {arr.shape}.")
    if cols is not None and arr.shape[1] != cols:
        raise ValueError(f"{name} must have {cols} columns; got shape {arr.shape}.")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    if not all_finite(out):
        raise ValueError(f"{name} must contain only finite values; it has NaN or inf.")
    return out


def _offsets(x, center, rho):
    """(V, single): standardized offsets (m, d) of the query point(s) and whether x was 1-d."""
    arr = np.asarray(x)
    single = arr.ndim == 1
    X = _check_matrix(arr[None, :] if single else arr, "x", cols=center.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        V = (X - center) / rho
    if not all_finite(V):
        raise ValueError("(x - center) / smoothing_radius overflows float64; rescale x, center "
                         "or smoothing_radius.")
    norms = np.sqrt(np.einsum("ij,ij->i", V, V))
    if norms.size and norms.max() > 1.0 + 1e-12:
        # no distance in the message: queries and centres may be private iterates
        warnings.warn("a query lies more than one smoothing radius from the centre: ReSQue's "
                      "second moment grows like exp(||v||^2/rho^2) with v = (x - center) / "
                      "smoothing_radius.", ReSQueWarning, stacklevel=external_stacklevel())
    return V, single


def _check_queries(x, center, smoothing_radius, zeta):
    """Validated (V, single, zeta) of the functional entry points."""
    center = check_vector(center, "center")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    zeta = _check_matrix(zeta, "zeta", cols=center.shape[0])
    V, single = _offsets(x, center, rho)
    return V, single, zeta


def _check_threads(n_threads):
    """The caller's ``n_threads`` request, validated; None (the default count) stays None so
    that each kernel call resolves it against its own work (:func:`_threads`)."""
    if n_threads is not None:
        check_n_threads(n_threads)
    return n_threads


def _threads(n_threads, work):
    """Threads of one kernel call touching ``work`` elements: ``n_threads`` if given, else the
    default count, 1 below ``_config.SERIAL_WORK`` and capped by the idle CPUs (issue 18:
    a short region on a busy machine waits for a descheduled thread). Results never depend
    on it."""
    return effective_n_threads(n_threads, work=work)


def _batch_work(V, n, p, regenerate=False):
    """Elements one ReSQue batch touches: per sample a d-dot per query, p-axpy per query
    (p = 0: the GLM path's d-axpy), plus d draws per sample when the samples are
    regenerated."""
    m, d = V.shape
    return n * (m * (d + (p or d)) + (d if regenerate else 0))


def _gens(seed_seq, n):
    return block_bit_generators(seed_seq, -(-n // SAMPLE_BLOCK))


def draw_resque_samples(n_samples, n_features, *, random_state=None, n_threads=None):
    """Standardized samples ζ_i ~ N(0, I) (rows), drawn by fixed blocks of SAMPLE_BLOCK rows.

    Block b draws its rows in order from child b of ``check_random_state(random_state)``; the
    regenerating estimators draw exactly these numbers from the same seed.

    Parameters
    ----------
    n_samples : int
        N.
    n_features : int
        d.
    random_state : None, int, SeedSequence or Generator
        Seeds the samples.
    n_threads : int, optional
        Threads; the samples do not depend on it.

    Returns
    -------
    ndarray of shape (n_samples, n_features)
    """
    n = check_int(n_samples, "n_samples", low=1)
    d = check_int(n_features, "n_features", low=1)
    seed = check_random_state(random_state)
    out = np.empty((n, d))
    return _kernel().draw_samples(_gens(seed, n), out, _threads(n_threads, n * d))


def resque_log_weights(x, center, smoothing_radius, zeta, *, n_threads=None):
    r"""Log-weights :math:`\langle (x - \bar x)/\rho, \zeta_i\rangle - \|x - \bar x\|^2/(2\rho^2)`.

    Parameters
    ----------
    x : array-like of shape (d,) or (m, d)
        Query point(s).
    center : array-like of shape (d,)
        Ball centre :math:`\bar x`.
    smoothing_radius : float
        ρ > 0.
    zeta : array-like of shape (N, d)
        Standardized samples ξ_i/ρ.
    n_threads : int, optional

    Returns
    -------
    ndarray of shape (N,) or (N, m)
    """
    V, single, zeta = _check_queries(x, center, smoothing_radius, zeta)
    out = np.empty((zeta.shape[0], V.shape[0]))
    _kernel().resque_log_weights(V, zeta, out, _threads(n_threads, zeta.size * V.shape[0]))
    if not all_finite(out):
        raise ValueError("the log-weights overflow float64: x lies ~1e154 or more smoothing "
                         "radii from center (||(x - center) / smoothing_radius||^2 overflows).")
    return out[:, 0] if single else out


def resque_estimate(x, center, smoothing_radius, zeta, gradients, *, n_threads=None):
    r"""ReSQue estimates :math:`\frac1N \sum_i w_i(x)\, G_i` at one or m query points.

    Parameters
    ----------
    x : array-like of shape (d,) or (m, d)
    center : array-like of shape (d,)
    smoothing_radius : float
    zeta : array-like of shape (N, d)
        Standardized samples; ``gradients[i]`` must be an oracle answer at
        ``center + smoothing_radius * zeta[i]``.
    gradients : array-like of shape (N, p)
    n_threads : int, optional

    Returns
    -------
    ndarray of shape (p,) or (m, p)
    """
    V, single, zeta = _check_queries(x, center, smoothing_radius, zeta)
    G = _check_matrix(gradients, "gradients")
    if G.shape[0] != zeta.shape[0]:
        raise ValueError(f"gradients must have one row per sample ({zeta.shape[0]}); got "
                         f"{G.shape[0]}.")
    out = np.empty((V.shape[0], G.shape[1]))
    with np.errstate(over="ignore", invalid="ignore"):
        _kernel().resque_batch(V, zeta, G, [], out,
                               _threads(n_threads, _batch_work(V, zeta.shape[0], G.shape[1])))
    _check_estimate(out)
    return out[0] if single else out


def _check_estimate(out):
    if not all_finite(out):
        raise ValueError("the ReSQue estimate overflows float64 (weights exp(<v, zeta>) times "
                         "gradients); keep x within smoothing_radius of center and rescale "
                         "gradients.")


class ReSQueBatch:
    r"""The oracle batch of one ball subproblem: N queries at :math:`\bar x + \rho\zeta_i`.

    Build it with :meth:`query` (draws the samples, issues ONE batch of oracle calls) and
    evaluate ReSQue at any iterate with :meth:`estimate` (no further oracle calls).

    Parameters
    ----------
    center : ndarray of shape (d,)
    smoothing_radius : float
    gradients : ndarray of shape (N, p)
    zeta : ndarray of shape (N, d) or None
        Stored samples; None regenerates them from ``seed`` at every estimate (memory
        O(m d) for the samples instead of O(N d)).
    seed : numpy.random.SeedSequence, optional
        The samples' seed (required when ``zeta`` is None).
    n_threads : int, optional
    """

    def __init__(self, center, smoothing_radius, gradients, zeta=None, seed=None,
                 n_threads=None):
        self.center = check_vector(center, "center")
        self.smoothing_radius = check_positive(smoothing_radius, "smoothing_radius")
        self.gradients = _check_matrix(gradients, "gradients")
        d = self.center.shape[0]
        if zeta is None:
            if not isinstance(seed, np.random.SeedSequence):
                raise TypeError("seed must be a numpy.random.SeedSequence when zeta is None.")
        else:
            zeta = _check_matrix(zeta, "zeta", cols=d)
            if zeta.shape[0] != self.gradients.shape[0]:
                raise ValueError(f"zeta and gradients must have the same rows; got "
                                 f"{zeta.shape[0]} and {self.gradients.shape[0]}.")
        self.zeta = zeta
        self._seed = seed
        self.n_threads = _check_threads(n_threads)

    @property
    def n_samples(self):
        """int: the number N of stored oracle answers."""
        return self.gradients.shape[0]

    @classmethod
    def query(cls, grad_batch, center, smoothing_radius, n_samples, *, store_samples=True,
              executor=None, random_state=None, n_threads=None):
        """Draw N samples and issue their N oracle queries as one batch.

        ``grad_batch(Z, random_state) -> G`` is called through ``executor`` (default serial),
        which counts one unit of query depth.

        Parameters
        ----------
        grad_batch : callable
            The batched oracle.
        center : array-like of shape (d,)
            c.
        smoothing_radius : float
            :math:`\\rho > 0`.
        n_samples : int
            N.
        store_samples : bool, default=True
            Keep the samples (False: regenerate them from the seed when estimating).
        executor : SerialExecutor or ThreadExecutor, optional
            Runs and counts the queries.
        random_state : None, int, SeedSequence or Generator
            Seeds the samples and the oracle.
        n_threads : int, optional
            Threads; the result does not depend on it.

        Returns
        -------
        ReSQueBatch
        """
        from ..parallel import SerialExecutor

        center = check_vector(center, "center")
        rho = check_positive(smoothing_radius, "smoothing_radius")
        seed = check_random_state(random_state)
        s_zeta, s_oracle = child_seed_sequences(seed, 2)    # never seed.spawn: see _random
        zeta = draw_resque_samples(n_samples, center.shape[0], random_state=s_zeta,
                                   n_threads=n_threads)
        executor = SerialExecutor() if executor is None else executor
        G = executor.grad_batch(grad_batch, center + rho * zeta, s_oracle)
        return cls(center, rho, G, zeta if store_samples else None, s_zeta, n_threads)

    def estimate(self, x, rows=None):
        """ReSQue at x (shape (d,) or (m, d)); ``rows`` (a slice) uses a minibatch of stored
        samples.

        Parameters
        ----------
        x : array-like of shape (d,) or (m, d)
            Query points.
        rows : slice, optional
            A minibatch of the stored samples.

        Returns
        -------
        ndarray of shape (p,) or (m, p)
        """
        V, single = _offsets(x, self.center, self.smoothing_radius)
        G = self.gradients
        if self.zeta is None:
            if rows is not None:
                raise ValueError("rows needs stored samples (zeta=None regenerates all).")
            zeta, gens = np.empty((0, V.shape[1])), _gens(self._seed, G.shape[0])
        else:
            zeta, gens = self.zeta, []
            if rows is not None:
                zeta, G = zeta[rows], G[rows]
        out = np.empty((V.shape[0], G.shape[1]))
        work = _batch_work(V, G.shape[0], G.shape[1], regenerate=bool(gens))
        _kernel().resque_batch(V, zeta, G, gens, out, _threads(self.n_threads, work))
        return out[0] if single else out


class GLMReSQueBatch:
    r"""GLM fast path: ReSQue for :math:`f(x) = \frac1n\sum_s \ell(\langle a_s, x\rangle, b_s)`.

    Sample i draws a row :math:`z_i` uniformly and :math:`\zeta_i`; its query is
    :math:`\nabla_x \ell(\langle a_{z_i}, \bar x + \rho\zeta_i\rangle, b_{z_i}) = c_i a_{z_i}`
    with :math:`c_i = \ell'(m_{z_i} + \rho\langle a_{z_i}, \zeta_i\rangle)`, the margins
    :math:`m_z = \langle a_z, \bar x\rangle` computed once per centre for the sampled rows only.
    Only :math:`(c_i, z_i)` is stored; with ``store_samples=False`` the ζ's are regenerated
    (memory O(N + m d)).

    Parameters
    ----------
    A : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    loss : dpsco_core.losses loss object or name
    center, smoothing_radius, n_samples
    store_samples : bool, default=True
    random_state, n_threads
    """

    def __init__(self, A, y, loss, center, smoothing_radius, n_samples, *, store_samples=True,
                 random_state=None, n_threads=None):
        from ..losses import check_loss
        from ..problems import _check_magnitude

        # the checks Problem applies to (X, y), under this class's argument names
        self.loss = check_loss(loss)
        self.A = _check_matrix(A, "A")
        if self.A.shape[0] == 0 or self.A.shape[1] == 0:
            raise ValueError(f"A must have at least one row and one column; got shape "
                             f"{self.A.shape}.")
        _check_magnitude(self.A.max(), self.A.min(), "A")
        y = check_vector(y, "y")
        _check_magnitude(y.max(), y.min(), "y")
        if y.shape[0] != self.A.shape[0]:
            raise ValueError(f"y must have one entry per row of A ({self.A.shape[0]}); got "
                             f"{y.shape[0]}.")
        self.y = self.loss.check_labels(y, "y")
        self.center = check_vector(center, "center")
        if self.center.shape[0] != self.A.shape[1]:
            raise ValueError(f"center must have length {self.A.shape[1]}; got "
                             f"{self.center.shape[0]}.")
        self.smoothing_radius = check_positive(smoothing_radius, "smoothing_radius")
        n = check_int(n_samples, "n_samples", low=1)
        self.n_threads = _check_threads(n_threads)
        seed = check_random_state(random_state)
        s_idx, self._seed = child_seed_sequences(seed, 2)    # never seed.spawn: see _random
        self.idx = np.random.Generator(np.random.PCG64DXSM(s_idx)).integers(
            0, self.A.shape[0], size=n).astype(np.int64)
        # margin cache for this centre: only the sampled rows
        rows, inverse = np.unique(self.idx, return_inverse=True)
        with np.errstate(over="ignore", invalid="ignore"):   # checked below
            margins = (self.A[rows] @ self.center)[inverse]
        d = self.A.shape[1]
        self.zeta = (draw_resque_samples(n, d, random_state=self._seed, n_threads=n_threads)
                     if store_samples else None)
        zeta = self.zeta if store_samples else np.empty((0, d))
        self.coefs = np.empty(n)
        _kernel().glm_query_batch(self.A, self.y, self.idx, margins, self.smoothing_radius,
                                  zeta, [] if store_samples else _gens(self._seed, n),
                                  self.loss.kind, float(self.loss.param), self.coefs,
                                  _threads(self.n_threads, n * d))
        if not all_finite(self.coefs):
            raise ValueError("the loss derivatives at the queries overflow: A @ center and "
                             "smoothing_radius * |A| must stay within float64's range; rescale "
                             "A, center or smoothing_radius.")

    @property
    def n_samples(self):
        """int: the number N of stored oracle answers."""
        return self.coefs.shape[0]

    def estimate(self, x):
        """ReSQue of the GLM's smoothed gradient at x (shape (d,) or (m, d)).

        Parameters
        ----------
        x : array-like of shape (d,) or (m, d)
            Query points.

        Returns
        -------
        ndarray of shape (d,) or (m, d)
        """
        V, single = _offsets(x, self.center, self.smoothing_radius)
        if self.zeta is None:
            zeta, gens = np.empty((0, V.shape[1])), _gens(self._seed, self.n_samples)
        else:
            zeta, gens = self.zeta, []
        out = np.empty((V.shape[0], self.A.shape[1]))
        work = _batch_work(V, self.n_samples, 0, regenerate=bool(gens))
        _kernel().resque_glm_batch(V, zeta, self.coefs, self.idx, self.A, gens, out,
                                   _threads(self.n_threads, work))
        return out[0] if single else out
