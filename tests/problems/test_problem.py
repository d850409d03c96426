"""Problem: data validation, layouts, objective and gradients, constants against brute force."""

import numpy as np
import pytest
import scipy.sparse as sp

import dpsco_core
from dpsco_core import problems
from dpsco_core.losses import Huber, Logistic
from dpsco_core.penalties import L1, L2, ElasticNet
from dpsco_core.problems import Problem


def _data(rng, n=40, p=7, density=0.5):
    X = rng.standard_normal((n, p)) * np.logspace(-1, 1, p)
    X[rng.random((n, p)) > density] = 0.0
    return X, rng.standard_normal(n), np.sign(rng.standard_normal(n))


def _brute_force(X, y, loss):
    n = X.shape[0]
    s = {"squared": 2.0, "logistic": 0.25}[loss]
    M = s * np.array([X[:, j] @ X[:, j] for j in range(X.shape[1])]) / n
    beta = s * np.linalg.eigvalsh(X.T @ X)[-1] / n
    return M, beta


def test_package_exports_problem_lazily():
    assert dpsco_core.Problem is Problem
    assert dpsco_core.problems is problems


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_constants_against_brute_force(loss, global_seed):
    X, y, labels = _data(np.random.default_rng(global_seed))
    target = y if loss == "squared" else labels
    prob = Problem(X, target, loss=loss)
    M, beta = _brute_force(X, target, loss)
    np.testing.assert_allclose(prob.coordinate_smoothness(), M, rtol=1e-13)
    assert prob.smoothness() == pytest.approx(beta, rel=1e-12)
    np.testing.assert_allclose(prob.column_norms(), np.linalg.norm(X, axis=0), rtol=1e-14)
    np.testing.assert_allclose(prob.row_norms(), np.linalg.norm(X, axis=1), rtol=1e-14)
    if loss == "logistic":
        np.testing.assert_allclose(prob.coordinate_lipschitz(), np.abs(X).max(axis=0))
        assert prob.lipschitz() == pytest.approx(np.linalg.norm(X, axis=1).max())
        # L_j bounds every per-sample coordinate gradient, beta bounds the Hessian.
        w = np.random.default_rng(1).standard_normal(X.shape[1])
        assert np.all(np.abs(prob.per_sample_gradients(w)) <= prob.coordinate_lipschitz())
    else:
        with pytest.raises(ValueError, match="not Lipschitz"):
            prob.coordinate_lipschitz()
        with pytest.raises(ValueError, match="not Lipschitz"):
            prob.lipschitz()


def test_huber_and_nonsmooth_constants():
    X, y, labels = _data(np.random.default_rng(2))
    prob = Problem(X, y, loss=Huber(0.5))
    np.testing.assert_allclose(prob.coordinate_lipschitz(), 0.5 * np.abs(X).max(axis=0))
    np.testing.assert_allclose(prob.coordinate_smoothness(), (X ** 2).sum(axis=0) / X.shape[0])
    hinge = Problem(X, labels, loss="hinge")
    with pytest.raises(ValueError, match="not smooth"):
        hinge.coordinate_smoothness()
    with pytest.raises(ValueError, match="not smooth"):
        hinge.smoothness()
    assert hinge.lipschitz() == pytest.approx(np.linalg.norm(X, axis=1).max())


def test_beta_by_arpack_matches_exact(monkeypatch):
    X, y, _ = _data(np.random.default_rng(3), n=60, p=12)
    exact = Problem(X, y).smoothness()
    monkeypatch.setattr(problems, "_EXACT_GRAM_MAX", 1)
    for data in (X, sp.csr_matrix(X)):
        assert Problem(data, y).smoothness() == pytest.approx(exact, rel=1e-10)
    wide = np.random.default_rng(4).standard_normal((8, 30))   # Gram of the smaller side
    monkeypatch.setattr(problems, "_EXACT_GRAM_MAX", 2000)
    assert Problem(wide, np.ones(8)).smoothness() == pytest.approx(
        2 * np.linalg.eigvalsh(wide.T @ wide)[-1] / 8, rel=1e-12)


@pytest.mark.parametrize("loss", ["squared", "half_squared", "logistic", "huber", "hinge",
                                  "absolute"])
def test_objective_and_gradients_against_direct_formulas(loss, global_seed):
    rng = np.random.default_rng(global_seed)
    X, y, labels = _data(rng)
    target = labels if loss in ("logistic", "hinge") else y
    pen = ElasticNet(0.1, 0.3)
    prob = Problem(X, target, loss=loss, penalty=pen)
    w = rng.standard_normal(X.shape[1])
    z = X @ w
    values = prob.loss.value(z, target)
    derivs = prob.loss.deriv(z, target)
    assert prob.smooth_objective(w) == pytest.approx(values.mean(), rel=1e-14)
    assert prob.objective(w) == pytest.approx(values.mean() + pen.value(w), rel=1e-14)
    np.testing.assert_allclose(prob.margins(w), z, rtol=1e-14)
    np.testing.assert_allclose(prob.gradient(w), X.T @ derivs / X.shape[0], rtol=1e-12,
                               atol=1e-15)
    G = prob.per_sample_gradients(w)
    assert G.shape == X.shape
    np.testing.assert_allclose(G.mean(axis=0), prob.gradient(w), rtol=1e-12, atol=1e-15)
    for j in (0, X.shape[1] - 1):
        assert prob.coordinate_gradient(w, j) == pytest.approx(prob.gradient(w)[j],
                                                               rel=1e-12, abs=1e-15)


def _layouts(X):
    return {
        "C": np.ascontiguousarray(X), "F": np.asfortranarray(X), "strided": np.repeat(X, 2, 1)[:, ::2],
        "float32": X.astype(np.float32), "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X),
        "csr_array": sp.csr_array(X), "coo": sp.coo_matrix(X),
    }


def test_dense_and_sparse_layouts_agree(global_seed):
    rng = np.random.default_rng(global_seed)
    X, y, labels = _data(rng)
    X = X.astype(np.float32).astype(np.float64)   # exactly representable in float32
    w = rng.standard_normal(X.shape[1])
    ref = Problem(X, labels, loss="logistic", penalty=L2(0.1))
    for name, data in _layouts(X).items():
        prob = Problem(data, labels, loss="logistic", penalty=L2(0.1))
        assert prob.is_sparse == sp.issparse(data), name
        assert prob.objective(w) == pytest.approx(ref.objective(w), rel=1e-13), name
        np.testing.assert_allclose(prob.gradient(w), ref.gradient(w), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(prob.coordinate_smoothness(), ref.coordinate_smoothness(),
                                   rtol=1e-13)
        np.testing.assert_allclose(prob.coordinate_lipschitz(), ref.coordinate_lipschitz())
        np.testing.assert_allclose(prob.per_sample_gradients(w), ref.per_sample_gradients(w),
                                   rtol=1e-13, atol=1e-15)
        assert prob.smoothness() == pytest.approx(ref.smoothness(), rel=1e-12)


def test_dense_layouts_copy_at_most_once_and_are_cached():
    X = np.asfortranarray(np.random.default_rng(0).standard_normal((20, 4)))
    prob = Problem(X, np.zeros(20))
    Xf = prob.X_fortran()
    assert Xf.flags.f_contiguous and np.shares_memory(Xf, X) and not Xf.flags.writeable
    assert prob.X_fortran() is Xf
    Xc = prob.X_c()
    assert Xc.flags.c_contiguous and not np.shares_memory(Xc, X) and prob.X_c() is Xc
    assert not prob.X.flags.writeable and X.flags.writeable
    with pytest.raises(ValueError, match="X_csc"):
        prob.X_fortran.__self__.X_csc()


def test_sparse_layouts_sorted_and_caller_untouched():
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 1, 0]),
                       np.array([0, 2, 4])), shape=(2, 3))
    assert not X.has_sorted_indices
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    prob = Problem(X, np.zeros(2))
    csr, csc = prob.X_csr(), prob.X_csc()
    assert csr.format == "csr" and csc.format == "csc"
    assert csr.has_sorted_indices and csc.has_sorted_indices
    assert prob.X_csr() is csr and prob.X_csc() is csc
    np.testing.assert_array_equal(csr.toarray(), X.toarray())
    for a, b in zip(before, (X.data, X.indices, X.indptr)):
        np.testing.assert_array_equal(a, b)
    # a canonical CSC input is used without a copy
    Y = sp.csc_matrix(np.eye(3))
    assert np.shares_memory(Problem(Y, np.zeros(3)).X_csc().data, Y.data)
    with pytest.raises(ValueError, match="X_fortran"):
        prob.X_fortran()


def test_read_only_inputs_accepted_and_unchanged():
    rng = np.random.default_rng(5)
    X, y, _ = _data(rng)
    X.flags.writeable = False
    y.flags.writeable = False
    X0, y0 = X.copy(), y.copy()
    prob = Problem(X, y, penalty=L1(0.1))
    w = np.zeros(X.shape[1])
    prob.objective(w), prob.gradient(w), prob.smoothness(), prob.X_fortran(), prob.X_c()
    prob.solve()
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    assert not prob.y.flags.writeable
    assert not prob.coordinate_smoothness().flags.writeable


def test_labels_are_mapped_for_01_logistic():
    X = np.eye(3)
    prob = Problem(X, [0, 1, 1], loss=Logistic(labels="01"))
    np.testing.assert_array_equal(prob.y, [-1.0, 1.0, 1.0])
    assert prob.objective(np.zeros(3)) == pytest.approx(np.log(2.0))


@pytest.mark.parametrize("X, y, loss, exc, match", [
    (np.array([[1.0, np.nan]]), [1.0], "squared", ValueError, "X must contain only finite"),
    (sp.csr_matrix(np.array([[1.0, np.inf]])), [1.0], "squared", ValueError,
     "X must contain only finite"),
    (np.ones((2, 2)), [1.0, np.inf], "squared", ValueError, "y must contain only finite"),
    (np.ones((3, 2)), [1.0, 2.0], "squared", ValueError, r"y must have one entry per row of X \(3\)"),
    (np.ones((0, 2)), [], "squared", ValueError, "X must have at least one sample"),
    (np.ones((2, 0)), [1.0, 1.0], "squared", ValueError, "X must have at least one sample"),
    (np.ones(3), [1.0, 1.0, 1.0], "squared", ValueError, "X must be 2-dimensional"),
    (np.ones((2, 2, 2)), [1.0, 1.0], "squared", ValueError, "X must be 2-dimensional"),
    (np.ones((2, 2)), np.ones((2, 1)), "squared", ValueError, "y must be 1-dimensional"),
    (np.ones((2, 2)), [0.0, 1.0], "logistic", ValueError, r"y must contain labels in \{-1"),
    (np.ones((2, 2)), [0.0, 3.0], "hinge", ValueError, r"y must contain labels in \{-1"),
    (np.ones((2, 2), dtype=complex), [1.0, 1.0], "squared", TypeError, "X must be an array of real"),
    (np.array([["a", "b"]]), [1.0], "squared", TypeError, "X must be an array of real"),
    (np.ones((2, 2)), ["a", "b"], "squared", TypeError, "y must be an array of real"),
    (np.ones((2, 2)), [1.0, 1.0], "cubic", ValueError, "loss must be one of"),
])
def test_bad_input(X, y, loss, exc, match):
    with pytest.raises(exc, match=match):
        Problem(X, y, loss=loss)


def test_bad_penalty_and_w():
    with pytest.raises(TypeError, match="penalty must be"):
        Problem(np.ones((2, 2)), [1.0, 1.0], penalty=0.1)
    with pytest.raises(ValueError, match="lam must be in"):
        L1(-1.0)
    prob = Problem(np.ones((2, 2)), [1.0, 1.0])
    with pytest.raises(ValueError, match="w must have length n_features=2"):
        prob.objective(np.zeros(3))
    with pytest.raises(ValueError, match="j must be an integer in"):
        prob.coordinate_gradient(np.zeros(2), 2)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_row_norm_keeps_the_sparse_structure(fmt):
    """Pinned (session 17, hypothesis outside CI): rows were scaled onto ``row_norm`` by
    ``diags(scale) @ X``, whose CSR rows came back with unsorted indices after an empty row;
    the Problem's read-only X could then not be canonicalised, and ``abs(problem.X)`` (the
    estimators' data scale without a label bound) raised "WRITEBACKIFCOPY base is read-only".
    The stored entries are now scaled in place of a copy: same structure, same values."""
    A = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 0.0]])
    X = getattr(sp, f"{fmt}_matrix")(A)
    prob = Problem(X, np.zeros(3), loss="half_squared", row_norm=1.0)
    assert prob.X.format == fmt and prob.X.has_sorted_indices
    expected = A / np.maximum(np.linalg.norm(A, axis=1), 1.0)[:, None]
    np.testing.assert_array_equal(abs(prob.X).toarray(), np.abs(expected))
    np.testing.assert_array_equal(prob.X.toarray(), expected)
    np.testing.assert_array_equal(X.toarray(), A)          # the input is untouched


def test_estimator_without_label_bound_on_row_scaled_sparse_rows():
    """The estimators' way into that error (a regression without label_bound reads its grid
    scale from abs(problem.X))."""
    pytest.importorskip("sklearn")
    import warnings

    from dpsco_core.estimators import DPLasso

    X = sp.csr_matrix(np.array([[0.0, 0.0], [1.0, 1.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPLasso(epsilon=1.0, passes=1, fit_intercept=False, row_norm=1.0,
                        n_trials=2.0, random_state=0).fit(X, np.zeros(2))
    assert np.all(np.isfinite(model.coef_))


def test_row_norms_do_not_depend_on_the_layout():
    """Session 18: einsum of a Fortran array and multiply().sum(axis=1) of a CSC matrix summed
    each row in another order than the C array and the CSR matrix, and DP-SGD's clipping
    (and the row_norm scaling of public bounds) inherited the last bits. One order now: C-
    ordered float64 rows for dense X, column order for sparse X."""
    import scipy.sparse as sp

    from dpsco_core.public_bounds import _row_sq_norms

    rng = np.random.default_rng(1)
    X = rng.standard_normal((3001, 37)) * (rng.random((3001, 37)) < 0.3)
    X = X.astype(np.float32).astype(np.float64)       # exact in float32 too
    dense = [X, np.asfortranarray(X), X.astype(np.float32),
             np.asfortranarray(X.astype(np.float32)), X[:, ::-1][:, ::-1]]
    reference = np.einsum("ij,ij->i", X, X)
    for variant in dense:
        np.testing.assert_array_equal(_row_sq_norms(variant), reference)
        np.testing.assert_array_equal(Problem(variant, np.zeros(3001)).row_norms(),
                                      np.sqrt(reference))
    sparse = [sp.csr_matrix(X), sp.csc_matrix(X), sp.csr_array(X), sp.csc_array(X)]
    first = _row_sq_norms(sparse[0])
    for variant in sparse:
        np.testing.assert_array_equal(_row_sq_norms(variant), first)
        np.testing.assert_array_equal(Problem(variant, np.zeros(3001)).row_norms(),
                                      np.sqrt(first))
    np.testing.assert_allclose(first, reference, rtol=1e-14)
    assert _row_sq_norms(sp.csr_matrix((4, 3))).tolist() == [0.0] * 4      # empty rows
