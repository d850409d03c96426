"""Child process of ``test_sparse_validation.py``: fuzz sparse structures through the public API.

Run as a script (``python _sparse_fuzz_child.py MAX_EXAMPLES SEED``) so that a crash (segfault,
heap corruption found at garbage collection) kills this process, not pytest: the parent checks
the exit code and the "OK" line.

Each example starts from a valid random CSR/CSC/COO matrix, breaks or perturbs its raw arrays
the way SciPy lets a user do (attribute assignment bypasses its constructor's checks), and
passes it to ``Problem``, the solvers and the estimators. Contract:

- ``Problem`` accepts it exactly when the structure is valid by the independent definition
  ``_structure_ok`` below, and then holds the matrix the raw arrays describe (duplicates
  summed, entries past ``indptr[-1]`` ignored), built from its own index arrays;
- otherwise it raises ValueError/TypeError whose message names ``X``;
- the caller's arrays are never modified; ``dp_cd``/``dp_sgd`` return finite coefficients.
"""

import sys
import warnings

import hypothesis
import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsco_core as dp
from dpsco_core.estimators import DPLasso
from dpsco_core.problems import MAX_MAGNITUDE

INDEX_DTYPES = [np.int32, np.int64, np.int8, np.uint32, np.uint64, np.float64]


def _dense_from_raw(fmt, shape, data, indices, indptr, row=None, col=None):
    out = np.zeros(shape)
    if fmt == "coo":
        for v, i, j in zip(data, row, col):
            out[int(i), int(j)] += v
        return out
    for major in range(len(indptr) - 1):
        for k in range(int(indptr[major]), int(indptr[major + 1])):
            if fmt == "csr":
                out[major, int(indices[k])] += data[k]
            else:
                out[int(indices[k]), major] += data[k]
    return out


def _structure_ok(fmt, shape, data, indices, indptr, row=None, col=None):
    """The valid structures, written out element by element (no NumPy vectorisation)."""
    if fmt == "coo":
        arrays = [(row, shape[0]), (col, shape[1])]
        for a, high in arrays:
            if a.dtype.kind not in "iu" or len(a) != len(data):
                return False
            if any(not 0 <= int(x) < high for x in a):
                return False
        return True
    major, minor = shape if fmt == "csr" else shape[::-1]
    if indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        return False
    if len(indptr) != major + 1 or len(indices) != len(data) or int(indptr[0]) != 0:
        return False
    if any(int(indptr[k + 1]) < int(indptr[k]) for k in range(major)):
        return False
    nnz = int(indptr[-1])
    if nnz > len(indices):
        return False
    return all(0 <= int(indices[k]) < minor for k in range(nnz))


@st.composite
def sparse_cases(draw):
    fmt = draw(st.sampled_from(["csr", "csc", "coo"]))
    n, p = draw(st.integers(2, 6)), draw(st.integers(1, 5))
    density = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    A = sp.random(n, p, density=density, format=fmt,
                  random_state=draw(st.integers(0, 2**16)))
    A.data[:] = draw(st.sampled_from([1.0, -2.5, 1e-300, 1e150]))
    mutation = draw(st.sampled_from(
        ["none", "index", "indptr", "dtype", "truncate", "unsorted", "duplicate", "extra"]))
    big = st.one_of(st.integers(-2**40, 2**40), st.sampled_from([-1, -5, 1000, n, p, 2**31]))
    if fmt == "coo":
        row, col = A.row.copy(), A.col.copy()
        if mutation in ("index", "indptr") and row.size:
            which = draw(st.sampled_from(["row", "col"]))
            target = row if which == "row" else col
            target = target.astype(np.int64)
            target[draw(st.integers(0, target.size - 1))] = draw(big)
            row, col = (target, col) if which == "row" else (row, target)
        elif mutation == "dtype":
            row = row.astype(draw(st.sampled_from(INDEX_DTYPES)))
        elif mutation == "truncate" and row.size:
            col = col[:-1]
        elif mutation == "duplicate" and row.size:
            row, col = np.concatenate([row, row[:1]]), np.concatenate([col, col[:1]])
            A = sp.coo_matrix((np.concatenate([A.data, A.data[:1]]), (row, col)), shape=(n, p))
        A.row, A.col = row, col
        return A
    indices, indptr, data = A.indices.copy(), A.indptr.copy(), A.data.copy()
    if mutation == "index" and indices.size:
        indices = indices.astype(np.int64)
        indices[draw(st.integers(0, indices.size - 1))] = draw(big)
    elif mutation == "indptr":
        indptr = indptr.astype(np.int64)
        indptr[draw(st.integers(0, indptr.size - 1))] = draw(big)
    elif mutation == "dtype":
        which = draw(st.booleans())
        dtype = draw(st.sampled_from(INDEX_DTYPES))
        if which:
            indices = indices.astype(dtype)
        else:
            indptr = indptr.astype(dtype)
    elif mutation == "truncate":
        what = draw(st.sampled_from(["indices", "data", "indptr"]))
        if what == "indices":
            indices = indices[:-1]
        elif what == "data":
            data = data[:-1]
        else:
            indptr = indptr[:-1]
    elif mutation == "unsorted" and indices.size > 1:
        perm = np.array(draw(st.permutations(range(indices.size))))
        indices, data = indices[perm], data[perm]   # crosses rows too: still in range
    elif mutation == "duplicate" and indices.size > 1:
        k = draw(st.integers(1, indices.size - 1))
        indices[k] = indices[k - 1]
    elif mutation == "extra":
        indices = np.concatenate([indices, [draw(big) % (2**31)]]).astype(indices.dtype)
        data = np.concatenate([data, [7.0]])
    A.indices, A.indptr, A.data = indices, indptr, data
    return A


def _raw(A):
    if A.format == "coo":
        return dict(data=A.data.copy(), indices=None, indptr=None, row=A.row.copy(),
                    col=A.col.copy())
    return dict(data=A.data.copy(), indices=A.indices.copy(), indptr=A.indptr.copy())


def check_one(A):
    raw = _raw(A)
    ok = _structure_ok(A.format, A.shape, **raw)
    n = A.shape[0]
    y = np.linspace(-1.0, 1.0, n)
    try:
        prob = dp.Problem(A, y)
    except (ValueError, TypeError) as exc:
        if ok:     # only for its values: duplicates summed beyond Problem's magnitude limit
            dense = _dense_from_raw(A.format, A.shape, **raw)
            assert np.abs(dense).max() > MAX_MAGNITUDE, f"a valid structure was rejected: {exc}"
        assert "X" in str(exc), f"the message does not name X: {exc}"
        return "rejected"
    assert ok, "a malformed structure was accepted"
    for key, value in raw.items():                     # the caller's arrays are unchanged
        if value is not None:
            np.testing.assert_array_equal(getattr(A, key), value)
    expected = _dense_from_raw(A.format, A.shape, **raw)
    np.testing.assert_array_equal(prob.X.toarray(), expected)
    for kernel_layout in (prob.X_csc(), prob.X_csr()):
        assert kernel_layout.has_canonical_format
        for caller_array in (A.indices, A.indptr) if A.format != "coo" else (A.row, A.col):
            # the structure the kernels trust is the library's own copy
            assert not np.shares_memory(kernel_layout.indices, caller_array)
            assert not np.shares_memory(kernel_layout.indptr, caller_array)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=1, random_state=0)
        assert np.all(np.isfinite(res.coef))
        if prob.smoothness() > 0:   # dp_sgd says beta = 0 is an error (X == 0 or ~1e-300)
            res = dp.dp_sgd(prob, epsilon=1.0, delta=1e-5, passes=1, batch_size=2,
                            random_state=0)
            assert np.all(np.isfinite(res.coef))
        # step and clip fixed: this fuzzes the sparse structures, not the private selection
        # (which needs n >= 3 and a public clip scale; tests/tuning covers it)
        model = DPLasso(alpha=0.1, passes=1, step=1.0, clip=1.0, random_state=0).fit(A, y)
        assert np.all(np.isfinite(model.predict(A)))
    return "accepted"


def main(max_examples, seed):
    seen = {"accepted": 0, "rejected": 0}

    @hypothesis.seed(seed)
    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(sparse_cases())
    def fuzz(A):
        seen[check_one(A)] += 1

    fuzz()
    print(f"OK accepted={seen['accepted']} rejected={seen['rejected']}")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
