"""Issue 16: silent wrong results and errors a user can act on, one regression test per case.

Each test failed on main (9cdba7a): a wrong or NaN/inf result without an error, a raw message
(Cython buffer, NumPy conversion, accountant internals) instead of one naming the argument and
its accepted range, or a silently ignored input (masked arrays, timedelta64, 2-d grids).
"""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.resque import GLMReSQueBatch, ReSQueBatch
from dpsco_core.tree import TreeAggregation

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    return dp.Problem(rng.standard_normal((30, 3)), rng.standard_normal(30))


# ------------------------------------------------------------------ silent wrong results

@pytest.mark.parametrize("solver", ["dp_cd", "dp_cd_grid", "dp_sgd"])
def test_tiny_epsilon_overflowing_noise_is_an_error_naming_epsilon(problem, solver):
    kwargs = dict(epsilon=1e-300, delta=1e-5, passes=1, random_state=0)
    if solver == "dp_cd_grid":
        kwargs.update(steps=[1.0], clips=[1.0])
    if solver == "dp_sgd":
        kwargs.update(batch_size=5, clip=1e200)     # its calibration caps s; the clip does not
    with pytest.raises(ValueError, match=r"epsilon=1e-300 is too small"):
        getattr(dp, solver)(problem, **kwargs)


def test_dp_cd_issue_case_never_returns_inf(problem):
    """The issue's case: coef came back [0, -inf] with a warning only."""
    rng = np.random.default_rng(1)
    prob = dp.Problem(rng.standard_normal((5, 2)), rng.standard_normal(5))
    for epsilon in (1e-300, 1e-200, 1e-160):
        with pytest.raises(ValueError, match="epsilon"):
            dp.dp_cd(prob, epsilon=epsilon, delta=1e-5, passes=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dp.dp_cd(prob, epsilon=1e-100, delta=1e-5, passes=1, random_state=0)
    assert np.all(np.isfinite(res.coef))


def test_glm_resque_validates_labels_and_magnitudes_like_problem():
    rng = np.random.default_rng(0)
    A, y = rng.standard_normal((20, 3)), np.sign(rng.standard_normal(20))
    with pytest.raises(ValueError, match=r"y must contain labels in \{-1, \+1\}"):
        GLMReSQueBatch(A, (y > 0).astype(float), "logistic", np.zeros(3), 0.1, 8,
                       random_state=0)
    with pytest.raises(ValueError, match=r"A has entries larger than"):
        GLMReSQueBatch(A * 1e300, y, "logistic", np.zeros(3), 0.1, 8, random_state=0)
    with pytest.raises(ValueError, match=r"A @ center"):
        GLMReSQueBatch(A, y, "squared", np.full(3, 1e308), 0.1, 8, random_state=0)
    batch = GLMReSQueBatch(A, y, "logistic", np.zeros(3), 0.1, 8, random_state=0)
    assert np.all(np.isfinite(batch.estimate(np.zeros(3))))


def test_seed_sequence_is_never_mutated_and_gives_the_same_draws():
    rng = np.random.default_rng(0)
    A, y = rng.standard_normal((20, 3)), np.sign(rng.standard_normal(20))
    seed = np.random.SeedSequence(1234)
    state = (seed.entropy, seed.spawn_key, seed.n_children_spawned)

    def glm():
        return GLMReSQueBatch(A, y, "logistic", np.zeros(3), 0.1, 16,
                              random_state=seed).estimate(np.full(3, 0.01))

    def resque():
        return ReSQueBatch.query(lambda Z, rs: 2.0 * Z, np.zeros(3), 0.5, 16,
                                 random_state=seed).estimate(np.full(3, 0.01))

    for draw in (glm, resque):
        np.testing.assert_array_equal(draw(), draw())
        assert (seed.entropy, seed.spawn_key, seed.n_children_spawned) == state


def test_no_library_module_spawns_from_a_seed_it_was_given():
    """``SeedSequence.spawn`` mutates its object: the library derives children with
    ``_random.child_seed_sequences`` instead (the one ``.spawn`` left is on a Generator's own
    sequence, documented: passing a Generator again gives fresh noise)."""
    hits = []
    for path in (ROOT / "dpsco_core").rglob("*.py"):
        for k, line in enumerate(path.read_text().splitlines(), 1):
            if ".spawn(" in line and not line.lstrip().startswith("#"):
                hits.append(f"{path.relative_to(ROOT)}:{k}")
    assert hits == ["dpsco_core/_random.py:61"] or all("_random.py" in h for h in hits), hits


def test_tree_aggregation_rejects_nan():
    tree = TreeAggregation(3, 4, noise_scale=0.0, random_state=0)
    with pytest.raises(ValueError, match=r"x must contain only finite values"):
        tree.next(np.array([np.nan, 1.0, 1.0]))
    assert tree.step == 0                      # nothing released, nothing half-written


# ------------------------------------------------------------------ errors a user can act on

def test_huge_epsilon_names_epsilon_and_its_range(problem):
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, 1e\+06\] or inf"):
        dp.dp_cd(problem, epsilon=1e300, delta=1e-5, passes=1, random_state=0)


@pytest.mark.parametrize("call", [
    lambda: dp.effective_n_threads(2**31),
    lambda: dp.projections.project_l2_ball([1.0, 2.0], 1.0, n_threads=2**31),
])
def test_n_threads_too_large(call):
    with pytest.raises(ValueError, match=r"n_threads must be an integer in \[1, 65536\]"):
        call()


def test_numpy_integer_scalars_accepted_where_ints_are():
    from dpsco_core.estimators import DPLogisticRegression

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 2)), np.sign(rng.standard_normal(30))
    model = DPLogisticRegression(C=np.int64(1), passes=np.int64(2), random_state=0).fit(X, y)
    assert np.all(np.isfinite(model.coef_))
    with pytest.raises(ValueError, match=r"C must be in \(0, inf\)"):
        DPLogisticRegression(C=np.int64(0), random_state=0).fit(X, y)
    assert dp.effective_n_threads(np.int64(1)) == 1


@pytest.mark.parametrize("x, exc, match", [
    ([1.0, 2.0, 3.0], None, None),
    (np.arange(3), None, None),
    (np.arange(6.0)[::2], None, None),
    (np.ones(4), ValueError, r"x must have length n_features=3; got 4"),
    (np.ones((3, 1)), ValueError, r"x must be 1-dimensional"),
    (["a", "b", "c"], TypeError, r"x must be an array of real numbers"),
])
def test_tree_aggregation_next_inputs(x, exc, match):
    tree = TreeAggregation(3, 4, noise_scale=0.0, random_state=0)
    if exc is None:
        np.testing.assert_array_equal(tree.next(x), np.asarray(x, dtype=float))
    else:
        with pytest.raises(exc, match=match):
            tree.next(x)


@pytest.mark.parametrize("out, exc, match", [
    (np.empty(3, dtype=np.int64), TypeError, r"out must be a float64 numpy array"),
    ([0.0, 0.0, 0.0], TypeError, r"out must be a float64 numpy array"),
    (np.empty(4), ValueError, r"out must have shape \(n_features,\) = \(3,\)"),
    (np.empty(6)[::2], ValueError, r"out must be a writeable, C-contiguous array"),
])
def test_tree_aggregation_next_out(out, exc, match):
    tree = TreeAggregation(3, 4, noise_scale=0.0, random_state=0)
    with pytest.raises(exc, match=match):
        tree.next(np.ones(3), out=out)


@pytest.mark.parametrize("steps, exc, match", [
    (["a"], TypeError, r"steps must be an array of real numbers"),
    ([[1.0, 2.0]], ValueError, r"steps must be a scalar or 1-dimensional"),
    ([np.nan], ValueError, r"steps\[0\] must be a finite number"),
])
def test_dp_cd_grid_steps(problem, steps, exc, match):
    with pytest.raises(exc, match=match):
        dp.dp_cd_grid(problem, epsilon=1.0, delta=1e-5, steps=steps, clips=[1.0], passes=1,
                      random_state=0)


def test_coef_init_must_be_a_vector(problem):
    with pytest.raises(ValueError, match=r"coef_init must be 1-dimensional; got an array of "
                                         r"shape \(3, 1\)"):
        dp.dp_cd(problem, epsilon=1.0, delta=1e-5, passes=1, coef_init=np.zeros((3, 1)),
                 random_state=0)
    with pytest.raises(ValueError, match=r"coef_init must have length n_features=3"):
        dp.dp_cd(problem, epsilon=1.0, delta=1e-5, passes=1, coef_init=np.zeros(4),
                 random_state=0)


@pytest.mark.parametrize("X, match", [
    (np.ones((3, 2), dtype="m8[s]"), r"X must be an array of real numbers .* timedelta64"),
    (np.ones((3, 2), dtype="M8[s]"), r"X must be an array of real numbers .* datetime64"),
    (np.ma.array(np.ones((3, 2)), mask=[[1, 0], [0, 0], [0, 0]]),
     r"X must be a plain array, not a masked array"),
])
def test_silently_accepted_inputs_are_rejected(X, match):
    with pytest.raises(TypeError, match=match):
        dp.Problem(X, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=match.replace("X", "v")):
        dp.projections.project_l1_ball(X[0], 1.0)
    from dpsco_core.estimators import DPLasso
    with pytest.raises(TypeError, match=match):
        DPLasso(passes=1, random_state=0).fit(X, [1.0, 2.0, 3.0])


def _cli(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "dpsco_core", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_reproduce_help_lists_the_papers():
    proc = _cli("reproduce", "--help")
    assert proc.returncode == 0, proc.stderr
    for paper in ("dpcd", "l1", "srgd", "resque-parallel", "mlmc"):
        assert paper in proc.stdout


@pytest.mark.parametrize("args, match", [
    (("reproduce", "dpcd", "--threads", "0"),
     "argument --threads: n_threads must be an integer in [1, 65536]; got 0."),
    (("reproduce", "l1", "--threads", "-3"), "argument --threads"),
    (("reproduce", "srgd", "--out", "{file}/sub"), "argument --out: cannot create"),
    (("reproduce", "mlmc", "--out", "{file}"), "argument --out:"),
])
def test_cli_bad_options_one_line_exit_2(tmp_path, args, match):
    afile = tmp_path / "a_file"
    afile.write_text("")
    proc = _cli(*(a.format(file=afile) for a in args))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert match in last, proc.stderr
