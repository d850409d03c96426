"""Datasets: the real data of the DP-CD experiments (shipped, no network) and synthetic problems.

Both files are gzip-compressed copies of the CSVs in the project's ``shared/data`` folder; the
SHA-256 of the decompressed bytes is checked on every load, so a corrupted or altered copy
raises instead of silently changing results.
"""

import csv
import gzip
import hashlib
import io
from importlib import resources

import numpy as np

__all__ = ["load_california", "load_electricity", "make_sparse_lasso", "make_imbalanced_regression",
           "make_imbalanced_classification", "make_rademacher_lasso", "RademacherLassoStream",
           "standardize", "Standardizer",
           "CALIFORNIA_SHA256", "ELECTRICITY_SHA256"]

#: SHA-256 of the decompressed ``california_housing.csv``.
CALIFORNIA_SHA256 = "8a3727f4cf54ac1a327f69b1d5b4db54c5834ea81c6e4efc0d163300022a685e"
#: SHA-256 of the decompressed ``electricity.csv``.
ELECTRICITY_SHA256 = "9fccbd259787ba5b6f58485850e24c8566d3226f2d0ed027f12e2f363fb47795"

CALIFORNIA_FEATURES = ("MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population",
                       "AveOccup", "Latitude", "Longitude")
ELECTRICITY_FEATURES = ("date", "day", "period", "nswprice", "nswdemand", "vicprice",
                        "vicdemand", "transfer")


def _read_csv(filename, sha256):
    raw = gzip.decompress(resources.files("dpsco_core.data").joinpath(filename).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != sha256:
        raise OSError(f"{filename}: checksum mismatch (sha256 {digest}, expected {sha256}); "
                      "the shipped copy is corrupted, reinstall dpsco-core.")
    reader = csv.reader(io.StringIO(raw.decode("utf-8")))
    header = next(reader)
    return header, list(reader)


def load_california(*, raw=False):
    """California housing: regression, n = 20,433, p = 8 (the scikit-learn features).

    Parameters
    ----------
    raw : bool, default=False
        Return the original numeric columns instead (longitude, latitude,
        housing_median_age, total_rooms, total_bedrooms, population, households,
        median_income; target median_house_value in dollars), still without the incomplete
        rows; the categorical ``ocean_proximity`` column is not returned.

    Returns
    -------
    X : ndarray of shape (20433, 8), float64, C-ordered
        MedInc, HouseAge, AveRooms = total_rooms / households, AveBedrms = total_bedrooms /
        households, Population, AveOccup = population / households, Latitude, Longitude.
    y : ndarray of shape (20433,)
        Median house value in units of 100,000 dollars.

    Notes
    -----
    Provenance: the 1990 California census block groups of Pace and Barry (1997), as in the
    public handson-ml2 repository (``datasets/housing/housing.csv``): 20,640 rows, of which
    the 207 with a missing ``total_bedrooms`` are dropped, leaving n = 20,433. SHA-256 of the
    CSV: ``8a3727f4cf54ac1a327f69b1d5b4db54c5834ea81c6e4efc0d163300022a685e``.
    """
    header, rows = _read_csv("california_housing.csv.gz", CALIFORNIA_SHA256)
    numeric = header[:9]
    data = np.array([[float(v) for v in row[:9]] for row in rows if all(row[:9])],
                    dtype=np.float64)
    col = {name: data[:, k] for k, name in enumerate(numeric)}
    if raw:
        return np.ascontiguousarray(data[:, :8]), data[:, 8].copy()
    households = col["households"]
    X = np.column_stack([
        col["median_income"],
        col["housing_median_age"],
        col["total_rooms"] / households,
        col["total_bedrooms"] / households,
        col["population"],
        col["population"] / households,
        col["latitude"],
        col["longitude"],
    ])
    return np.ascontiguousarray(X), col["median_house_value"] / 100_000.0


def load_electricity():
    """Electricity (Elec2, normalized): binary classification, n = 45,312, p = 8.

    Returns
    -------
    X : ndarray of shape (45312, 8), float64, C-ordered
        date, day, period, nswprice, nswdemand, vicprice, vicdemand, transfer.
    y : ndarray of shape (45312,)
        +1.0 for UP, -1.0 for DOWN (the labels the logistic loss of the DP-CD paper uses).

    Notes
    -----
    Provenance: M. Harries (1999), "Splice-2 comparative evaluation: Electricity pricing"
    (New South Wales market), normalized form ``elecNormNew`` (OpenML dataset 151). SHA-256 of
    the CSV: ``9fccbd259787ba5b6f58485850e24c8566d3226f2d0ed027f12e2f363fb47795``.
    """
    _, rows = _read_csv("electricity.csv.gz", ELECTRICITY_SHA256)
    data = np.array(rows, dtype=np.float64)
    y = np.where(data[:, 8] == 1.0, 1.0, -1.0)
    return np.ascontiguousarray(data[:, :8]), y


# -- synthetic problems --------------------------------------------------------------------------

def _rng(random_state):
    from ._random import check_random_state
    return np.random.Generator(np.random.PCG64DXSM(check_random_state(random_state)))


def make_sparse_lasso(n_samples=1000, n_features=1000, n_informative=10, *, noise=0.1,
                      coef_scale=1.0, random_state=None):
    """The "Sparse LASSO" problem of the DP-CD paper (Mangold et al. 2022, section 6).

    Features i.i.d. N(0, 1); labels a noisy linear combination of ``n_informative`` of them:
    ``y = X w_true + noise * N(0, 1)``, with the active set drawn uniformly and its coefficients
    ``coef_scale * Rademacher`` (the paper states neither the coefficient distribution nor the
    noise level; these are our choices, recorded here).

    Parameters
    ----------
    n_samples, n_features : int, default=1000
        Shape of X.
    n_informative : int, default=10
        Number of nonzero coefficients.
    noise : float, default=0.1
        Standard deviation of the label noise.
    coef_scale : float, default=1.0
        Magnitude of the nonzero coefficients.
    random_state : None, int, SeedSequence or Generator
        Seeds the data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    coef : ndarray of shape (n_features,)
        ``w_true``.
    """
    from ._validation import check_int, check_scalar
    n = check_int(n_samples, "n_samples", low=1)
    p = check_int(n_features, "n_features", low=1)
    k = check_int(n_informative, "n_informative", low=0, high=p)
    noise = check_scalar(noise, "noise", low=0.0, low_open=False)
    coef_scale = check_scalar(coef_scale, "coef_scale", low=0.0, low_open=False)
    rng = _rng(random_state)
    X = rng.standard_normal((n, p))
    coef = np.zeros(p)
    active = rng.choice(p, size=k, replace=False)
    coef[active] = coef_scale * rng.choice([-1.0, 1.0], size=k)
    y = X @ coef + noise * rng.standard_normal(n)
    return X, y, coef


def _column_scales(n_features, scale_range):
    from ._validation import check_scalar
    # X = s N(0, 1) and w_true = N(0, 1) / s: both stay finite for s in [1e-300, 1e300]
    # (5e-324 gave w_true = inf, 1.8e308 gave X = inf).
    lo = check_scalar(scale_range[0], "scale_range[0]", low=1e-300, high=1e300,
                      low_open=False, high_open=False)
    hi = check_scalar(scale_range[1], "scale_range[1]", low=1e-300, high=1e300,
                      low_open=False, high_open=False)
    if lo > hi:
        raise ValueError(f"scale_range must be increasing; got {scale_range!r}.")
    return np.geomspace(lo, hi, n_features)


def make_imbalanced_regression(n_samples=1000, n_features=20, *, scale_range=(0.1, 10.0),
                               noise=0.1, random_state=None):
    """Linear regression whose columns have geometrically spread scales (imbalanced M_j).

    ``X[:, j] = s_j * N(0, 1)`` with ``s_j`` geometric from ``scale_range[0]`` to
    ``scale_range[1]``, ``y = X w_true + noise * N(0, 1)`` with ``w_true_j = N(0, 1) / s_j`` (so
    each feature contributes comparably). Returns ``X, y, w_true``.

    Parameters
    ----------
    n_samples : int, default=1000
        Rows.
    n_features : int, default=20
        Columns.
    scale_range : tuple of float, default=(0.1, 10.0)
        Smallest and largest column scale.
    noise : float, default=0.1
        Standard deviation of the label noise.
    random_state : None, int, SeedSequence or Generator
        Seeds the data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    w_true : ndarray of shape (n_features,)
    """
    from ._validation import check_int, check_scalar
    n = check_int(n_samples, "n_samples", low=1)
    p = check_int(n_features, "n_features", low=1)
    noise = check_scalar(noise, "noise", low=0.0, low_open=False)
    scales = _column_scales(p, scale_range)
    rng = _rng(random_state)
    X = rng.standard_normal((n, p)) * scales
    coef = rng.standard_normal(p) / scales
    y = X @ coef + noise * rng.standard_normal(n)
    return X, y, coef


def make_imbalanced_classification(n_samples=1000, n_features=20, *, scale_range=(0.1, 10.0),
                                   random_state=None):
    """Logistic-model classification with geometrically spread column scales; labels in {-1, +1}.

    ``X[:, j] = s_j * N(0, 1)``, ``w_true_j = N(0, 1) / s_j``, and ``y_i = +1`` with probability
    ``sigmoid(<x_i, w_true>)``. Returns ``X, y, w_true``.

    Parameters
    ----------
    n_samples : int, default=1000
        Rows.
    n_features : int, default=20
        Columns.
    scale_range : tuple of float, default=(0.1, 10.0)
        Smallest and largest column scale.
    random_state : None, int, SeedSequence or Generator
        Seeds the data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    w_true : ndarray of shape (n_features,)
    """
    from ._validation import check_int
    n = check_int(n_samples, "n_samples", low=1)
    p = check_int(n_features, "n_features", low=1)
    scales = _column_scales(p, scale_range)
    rng = _rng(random_state)
    X = rng.standard_normal((n, p)) * scales
    coef = rng.standard_normal(p) / scales
    prob = 0.5 * (1.0 + np.tanh(0.5 * (X @ coef)))      # sigmoid without overflow
    y = np.where(rng.random(n) < prob, 1.0, -1.0)
    return X, y, coef


def make_rademacher_lasso(n_samples=1000, n_features=100, n_informative=5, *, radius=1.0,
                          noise=0.5, random_state=None):
    """Least squares over the l1 ball with a closed-form excess population loss.

    Note 004 (l1 geometry), section 7.1 A: features ``a ~ Unif{-1, +1}^d`` (so
    ``E[a a^T] = I``), ``x_true`` k-sparse with ``||x_true||_1 = 0.9 radius``,
    ``y = <a, x_true> + xi`` with ``xi ~ Unif[-noise, noise]``. For the loss
    ``f = (<a, x> - y)^2 / 2`` the population excess loss is exactly
    ``F(x) - F* = ||x - x_true||_2^2 / 2``.

    Returns ``X, y, x_true``.

    Parameters
    ----------
    n_samples : int, default=1000
        Rows.
    n_features : int, default=100
        d.
    n_informative : int, default=5
        Sparsity k of ``x_true``.
    radius : float, default=1.0
        The l1 radius D (``||x_true||_1 = 0.9 D``).
    noise : float, default=0.5
        Half-width of the uniform label noise.
    random_state : None, int, SeedSequence or Generator
        Seeds the data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    x_true : ndarray of shape (n_features,)
    """
    from ._validation import check_int, check_scalar
    n = check_int(n_samples, "n_samples", low=1)
    d = check_int(n_features, "n_features", low=1)
    k = check_int(n_informative, "n_informative", low=1, high=d)
    radius = check_scalar(radius, "radius", low=0.0)
    noise = check_scalar(noise, "noise", low=0.0, low_open=False)
    rng = _rng(random_state)
    X = rng.choice([-1.0, 1.0], size=(n, d))
    x_true = _rademacher_x_true(rng, d, k, radius)
    y = X @ x_true + rng.uniform(-noise, noise, size=n)
    return X, y, x_true


def _rademacher_x_true(rng, d, k, radius):
    """k-sparse, ||x_true||_1 = 0.9 radius (note 004, section 7.1 A)."""
    x_true = np.zeros(d)
    support = rng.choice(d, size=k, replace=False)
    weights = rng.random(k) + 0.5
    x_true[support] = rng.choice([-1.0, 1.0], size=k) * weights / weights.sum() * 0.9 * radius
    return x_true


class RademacherLassoStream:
    """The Rademacher LASSO of :func:`make_rademacher_lasso`, rows generated on demand as bits.

    For sweeps where the dense X does not fit in memory (n = d = 1e5 is 80 GB of float64, 1.25
    GB of packed bits). Row i is a deterministic function of ``(random_state, i)``: the words
    of the counter-based stream ``Philox(key, counter=(0, i, 0, 0))`` (``key`` drawn from
    ``random_state``; row i's counter blocks ``(c, i, 0, 0)`` never meet another row's), so
    any subset of rows can be produced in any order, by any number of workers, and the same
    index always gives the same sample:

    * words ``0 .. W-1`` (``W = ceil(d / 64)``) are the packed signs: feature j is +1 if bit
      ``j % 64`` of word ``j // 64`` is set, else -1 (bits past d are ignored) -- the layout
      of the kernel ``vr_gradient_rnm_signs``;
    * word W gives ``u = (word >> 11) 2^-53`` in [0, 1) (numpy's double from 64 bits) and the
      label noise ``xi = noise (2 u - 1)``, uniform on [-noise, noise];
    * ``y_i = sum_{j in supp(x_true)} a_ij x_true_j + xi_i`` (support in increasing order).

    ``x_true`` is k-sparse with ``||x_true||_1 = 0.9 radius``; for the loss
    ``f = (<a, x> - y)^2 / 2`` the excess population loss of x is exactly
    ``||x - x_true||_2^2 / 2`` (``E[a a^T] = I``).

    The solvers that take it in place of a ``Problem`` (:func:`~dpsco_core.solvers.
    frank_wolfe.vr_frank_wolfe`, :func:`~dpsco_core.solvers.frank_wolfe.projected_dp_sgd_l1`)
    call :meth:`sign_rows` for every batch; :meth:`materialize` keeps all n packed rows in
    memory (``n W 8`` bytes) so that repeated runs on the same data skip the generation.

    Parameters
    ----------
    n_samples : int
        Rows n.
    n_features : int
        d.
    n_informative : int, default=5
        Sparsity k.
    radius : float, default=1.0
        The l1 radius D.
    noise : float, default=0.5
        Half-width of the uniform label noise.
    random_state : None, int, SeedSequence or Generator
        Seeds the key of the stream.
    """

    is_sparse = False

    def __init__(self, n_samples, n_features, n_informative=5, *, radius=1.0, noise=0.5,
                 random_state=None):
        from ._validation import check_int, check_scalar
        from .losses import check_loss
        from .penalties import NoPenalty
        self.n_samples = check_int(n_samples, "n_samples", low=1)
        self.n_features = d = check_int(n_features, "n_features", low=1)
        k = check_int(n_informative, "n_informative", low=1, high=d)
        radius = check_scalar(radius, "radius", low=0.0)
        self.noise = check_scalar(noise, "noise", low=0.0, low_open=False)
        self.n_words = -(-d // 64)
        rng = _rng(random_state)
        self._key = rng.integers(0, 2 ** 63, size=2, dtype=np.uint64)
        self.x_true = _rademacher_x_true(rng, d, k, radius)
        self._support = np.flatnonzero(self.x_true)
        self.loss = check_loss("half_squared")
        self.penalty = NoPenalty()
        self._packed = None
        self._labels = None

    def _generate(self, indices):
        W = self.n_words
        signs = np.empty((indices.size, W), dtype=np.uint64)
        last = np.empty(indices.size, dtype=np.uint64)
        # One Philox object re-keyed per row: setting the state is ~10x cheaper than building
        # Philox(key, counter=(0, i, 0, 0)) and gives the same words.
        gen = np.random.Philox(key=self._key)
        state = gen.state
        for t, i in enumerate(indices.tolist()):
            state["state"]["counter"][:] = (0, i, 0, 0)
            state["buffer_pos"], state["has_uint32"] = 4, 0
            gen.state = state
            words = gen.random_raw(W + 1)
            signs[t] = words[:W]
            last[t] = words[W]
        u = (last >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
        y = self.noise * (2.0 * u - 1.0)
        margin = np.zeros(indices.size)
        for j in self._support:            # increasing order
            bit = (signs[:, j >> 6] >> np.uint64(j & 63)) & np.uint64(1)
            margin = margin + np.where(bit == 1, 1.0, -1.0) * self.x_true[j]
        return signs, margin + y

    def _check_indices(self, indices):
        indices = np.asarray(indices, dtype=np.int64).ravel()
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_samples):
            raise ValueError(f"indices must lie in [0, {self.n_samples}); got "
                             f"[{indices.min()}, {indices.max()}].")
        return indices

    def sign_rows(self, indices):
        """``(signs, y)`` of the given sample indices: packed rows of shape (m, W), uint64,
        C-ordered, and the labels (m,).

        Parameters
        ----------
        indices : array-like of int
            Sample indices in [0, n).
        """
        indices = self._check_indices(indices)
        if self._packed is not None:
            return self._packed[indices], self._labels[indices]
        return self._generate(indices)

    def rows(self, indices):
        """``(X_rows, y_rows)``: the unpacked +-1 rows, (m, d) float64, and (m,).

        Parameters
        ----------
        indices : array-like of int
            Sample indices in [0, n).
        """
        from .reference.frank_wolfe import unpack_signs
        signs, y = self.sign_rows(indices)
        return unpack_signs(signs, self.n_features), y

    def materialize(self):
        """Generate all n packed rows once and keep them (``n W 8`` bytes); returns self."""
        if self._packed is None:
            self._packed, self._labels = self._generate(np.arange(self.n_samples))
        return self

    def excess_loss(self, x):
        """F(x) - F* = ||x - x_true||_2^2 / 2 (exact).

        Parameters
        ----------
        x : array-like of shape (n_features,)
            The point.

        Returns
        -------
        float
        """
        return 0.5 * float(np.sum((np.asarray(x) - self.x_true) ** 2))

    def objective(self, x):
        """The population objective F(x) = ||x - x_true||^2 / 2 + noise^2 / 6 (E xi^2 / 2).

        Parameters
        ----------
        x : array-like of shape (n_features,)
            The point.

        Returns
        -------
        float
        """
        return self.excess_loss(x) + self.noise ** 2 / 6.0


class Standardizer:
    """The affine map ``x -> (x - mean) / scale`` fitted by :func:`standardize`.

    Columns with zero variance keep ``scale = 1``. Apply to new data with ``transform``; map
    coefficients learned on standardized data back with ``coef_to_original``.

    Parameters
    ----------
    mean, scale : ndarray of shape (n_features,)
        Column means and scales.
    """

    def __init__(self, mean, scale):
        self.mean = mean
        self.scale = scale

    def transform(self, X):
        """Apply the map to ``X``: ``(X - mean) / scale``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features on the original scale.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        return (np.asarray(X, dtype=np.float64) - self.mean) / self.scale

    def coef_to_original(self, coef):
        """Coefficients (and intercept) on the original features of a model fitted on standardized data.

        Parameters
        ----------
        coef : array-like of shape (n_features,)
            Coefficients fitted on standardized data.
        """
        coef = np.asarray(coef, dtype=np.float64)
        return coef / self.scale, -float(np.dot(coef, self.mean / self.scale))


def standardize(X):
    """Standardize columns to zero mean and unit variance; return ``(X_std, transform)``.

    As in the DP-CD paper (section 5.3) the statistics are computed on the data without privacy
    cost being charged: a private pipeline must treat them as public or pay for them.
    Dense input only (centring destroys sparsity).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Dense features.

    Returns
    -------
    X_std : ndarray of shape (n_samples, n_features)
    transform : Standardizer
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional; got shape {X.shape}.")
    if X.shape[0] == 0:
        raise ValueError("X must not be empty.")
    X = X.astype(np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("X must contain only finite values; it has NaN or inf.")
    # Statistics of X / m (m the largest |entry| of each column), then scaled back: the sums
    # and squares of entries near 1.8e308 would overflow (std inf, every output 0).
    m = np.max(np.abs(X), axis=0)
    m[m == 0.0] = 1.0
    Xs = X / m
    mean_s = Xs.mean(axis=0)
    scale_s = Xs.std(axis=0)
    scale_s[scale_s == 0.0] = 1.0
    with np.errstate(over="ignore"):
        mean, scale = mean_s * m, scale_s * m
    X_std = (Xs - mean_s) / scale_s
    if not np.all(np.isfinite(scale)) or not np.all(np.isfinite(X_std)):
        raise ValueError("X has entries too large to standardize: a column's standard "
                         "deviation exceeds the float64 range (1.8e308).")
    return X_std, Standardizer(mean, scale)
