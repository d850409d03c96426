"""Malformed sparse input never reaches SciPy's C++ loops or the kernels (issue 16, crashes).

On main (9cdba7a) a CSC matrix whose ``indices`` held 1000 made ``dp_cd`` segfault, -5 made it
read outside the buffer, and ``dp_sgd`` corrupted the heap while computing the problem's
constants. Every case that could crash runs in a child process: a crash then fails the test
instead of killing pytest.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dpsco_core as dp
from dpsco_core._validation import check_sparse

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("_sparse_fuzz_child.py")


def _run_child(args, timeout=240):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    return proc


def test_fuzzed_sparse_structures_in_a_child_process():
    """Hypothesis over CSR/CSC/COO structures broken or perturbed in every field (index range,
    indptr start/monotonicity/length/end, dtypes, truncated arrays, unsorted and duplicate
    indices, entries past indptr[-1]): accepted exactly when valid, with the right matrix;
    otherwise a ValueError/TypeError naming X (see the child's docstring)."""
    proc = _run_child([str(CHILD), "120", "16"])
    assert proc.returncode == 0 and "OK" in proc.stdout, (
        f"child exited with {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


ISSUE_CASE = textwrap.dedent("""
    import numpy as np, scipy.sparse as sp, dpsco_core as dp
    A = sp.random(30, 4, density=0.5, format="csc", random_state=0)
    A.indices[0] = {index}
    try:
        prob = dp.Problem(A, np.linspace(-1, 1, 30))
    except ValueError as exc:
        assert "X.indices" in str(exc) and "[0, 30)" in str(exc), exc
        print("REJECTED")
    else:
        dp.{solver}(prob, epsilon=1.0, delta=1e-5, passes=2, random_state=0)
        print("ACCEPTED")
    import gc; gc.collect()
""")


@pytest.mark.parametrize("solver", ["dp_cd", "dp_sgd"])
@pytest.mark.parametrize("index", [1000, -5])
def test_issue_out_of_range_indices(solver, index):
    proc = _run_child(["-c", ISSUE_CASE.format(index=index, solver=solver)], timeout=120)
    assert proc.returncode == 0 and "REJECTED" in proc.stdout, (proc.returncode, proc.stderr)


def _csr(data, indices, indptr, shape):
    A = sp.csr_matrix((np.ones(1), np.zeros(1, np.int32), np.array([0, 1] + [1] * (shape[0] - 1))),
                      shape=shape)
    A.data, A.indices, A.indptr = data, indices, indptr    # bypasses SciPy's checks
    return A


@pytest.mark.parametrize("indices, indptr, match", [
    (np.array([0, 9]), np.array([0, 1, 2]), r"X\.indices must be in \[0, 3\)"),
    (np.array([0, 1]), np.array([1, 1, 2]), r"X\.indptr must start at 0"),
    (np.array([0, 1]), np.array([0, 2, 1]), r"X\.indptr must be non-decreasing"),
    (np.array([0, 1]), np.array([0, 1, 5]), r"X\.indptr must end at most at"),
    (np.array([0, 1]), np.array([0, 2]), r"X\.indptr must have 3 entries"),
    (np.array([0, 1, 2]), np.array([0, 1, 2]), r"X\.indices and X\.data must have the same"),
])
def test_malformed_structure_named(indices, indptr, match):
    # checked before SciPy reads the structure: safe in-process (NumPy only)
    A = _csr(np.ones(2), indices, indptr, (2, 3))
    with pytest.raises(ValueError, match=match):
        check_sparse(A, "X")


def test_index_dtypes_named():
    A = _csr(np.ones(2), np.array([0.0, 1.0]), np.array([0, 1, 2]), (2, 3))
    with pytest.raises(TypeError, match=r"X\.indices must hold integers"):
        dp.Problem(A, [1.0, 2.0])


def test_unsorted_and_duplicate_indices_are_canonicalised_without_touching_the_caller():
    data, indices, indptr = np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3, 3])
    A = _csr(data.copy(), indices.copy(), indptr.copy(), (2, 3))
    prob = dp.Problem(A, [1.0, 2.0])
    np.testing.assert_array_equal(prob.X.toarray(), [[2.0, 0.0, 4.0], [0.0, 0.0, 0.0]])
    assert prob.X.has_canonical_format
    np.testing.assert_array_equal(A.indices, indices)
    np.testing.assert_array_equal(A.data, data)
    # the kernels read the library's own index arrays, not the caller's
    assert not np.shares_memory(prob.X_csr().indices, A.indices)


def test_other_formats_checked_too():
    coo = sp.coo_matrix((np.ones(2), (np.array([0, 1]), np.array([0, 1]))), shape=(2, 2))
    coo.col = np.array([0, 7])
    with pytest.raises(ValueError, match=r"X\.col must be in \[0, 2\)"):
        dp.Problem(coo, [1.0, 2.0])
    for fmt in ("lil", "dok", "dia", "bsr"):
        A = sp.random(4, 3, density=0.5, format=fmt, random_state=1)
        np.testing.assert_array_equal(dp.Problem(A, np.ones(4)).X.toarray(), A.toarray())


def test_estimators_check_structure_before_scikit_learn():
    from dpsco_core.estimators import DPLasso

    A = sp.random(10, 3, density=0.5, format="csr", random_state=0)
    model = DPLasso(alpha=0.1, passes=1, random_state=0).fit(A, np.ones(10))
    bad = A.copy()
    bad.indices = bad.indices.copy()
    bad.indices[0] = 100
    with pytest.raises(ValueError, match=r"X\.indices must be in \[0, 3\)"):
        model.predict(bad)
    with pytest.raises(ValueError, match=r"X\.indices must be in \[0, 3\)"):
        DPLasso(alpha=0.1, passes=1, random_state=0).fit(bad, np.ones(10))
