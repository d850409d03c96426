"""``reproduce resque-parallel`` on its seconds-long smoke grid: every output file is written and
well-formed; the problems' optima and the baselines' search are right."""

import csv
import math

import numpy as np
import pytest

from dpsco_core.experiments import resque, resque_baselines, resque_problems


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("resque")
    assert resque.main(["--smoke", "--quiet", "--out", str(out)]) == 0
    return out


def test_csv_rows(outputs):
    with open(outputs / "resque.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    parts = {r["part"] for r in rows}
    assert parts == {"estimator", "sco", "slope", "prox"}
    est = [r for r in rows if r["part"] == "estimator"]
    assert [float(r["v_over_rho"]) for r in est] == [0.0, 0.25, 0.5, 1.0, 1.5, 2.0]
    for r in est:
        q = float(r["v_over_rho"])
        assert float(r["predicted_second_moment"]) == pytest.approx(math.exp(q * q))
        assert 0.0 < float(r["ess_fraction"]) <= 1.0
        # Paper 000 (note 000, Lemma 1): ReSQue is unbiased (max z-score over the d = 20
        # coordinates below 4.5) and, for linear f, E||ReSQue||^2 = L^2 exp(||v||^2 / rho^2):
        # within 4 standard errors up to ||v|| = rho (beyond, the weights' tail makes the
        # sample second moment unreliable at N = 20,000).
        assert float(r["bias_max_z"]) < 4.5, r
        if 0.0 < q <= 1.0:
            assert abs(float(r["second_moment"]) - float(r["predicted_second_moment"])) <= \
                4 * float(r["second_moment_se"]), r
    assert float(est[0]["second_moment"]) == 1.0 and float(est[0]["ess_fraction"]) == 1.0
    sco = [r for r in rows if r["part"] == "sco"]
    methods = {(r["problem"], r["d"], r["epsilon"]): set() for r in sco}
    for r in sco:
        methods[r["problem"], r["d"], r["epsilon"]].add(r["method"])
        if r["method"].startswith("resque"):
            depth, queries = float(r["depth"]), float(r["queries"])
            assert 1 <= depth <= queries and float(r["error"]) <= float(r["epsilon"])
    assert all(m == {"resque", "resque_c1", "minibatch", "sgd", "smoothing"}
               for m in methods.values())
    slopes = [r for r in rows if r["part"] == "slope"]
    assert {r["method"] for r in slopes} >= {"resque", "minibatch"}
    assert all(math.isfinite(float(r["measured"])) for r in slopes)
    # Depth grows as epsilon shrinks for every method, and (Table I) ReSQue's depth grows
    # more slowly in 1/epsilon than minibatch SGD's (exponents 2/3 and 2; smoke grid: 1.13
    # and 1.24).
    depth = {r["method"]: float(r["measured"]) for r in slopes
             if r["quantity"] == "depth" and r["against"] == "1/epsilon"}
    assert all(v > 0 for v in depth.values()), depth
    assert depth["resque"] < depth["minibatch"], depth


def test_prox_rows(outputs):
    """Part 5: both proximal oracles reach ε on the smoke cell; Proposition 2's measured
    queries per iteration are of the order of its exact expectation (12 iterations: no tighter
    check) and far below the stand-in's at the paper's accuracy."""
    with open(outputs / "resque.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["part"] == "prox"]
    assert {r["variant"] for r in rows} == {"stand-in", "Prop. 2"}
    for r in rows:
        assert float(r["error"]) <= float(r["epsilon"])
        assert 1 <= float(r["depth"]) <= float(r["n_iter"]) <= float(r["queries"])
    mlmc = next(r for r in rows if r["variant"] == "Prop. 2")
    ratio = float(mlmc["queries_per_iter"]) / float(mlmc["prop2_expected_prox_queries"])
    assert 0.25 <= ratio <= 4.0, ratio
    assert float(mlmc["queries_per_iter"]) < float(mlmc["stand_in_paper_queries"]) / 100


def test_markdown_and_figures(outputs):
    text = (outputs / "resque.md").read_text()
    for heading in ("## 1. Estimator", "## 2. Query depth", "## 3. Fitted exponents",
                    "## 4. Target", "## 5. Stochastic proximal oracle"):
        assert heading in text
    tables = [line for line in text.splitlines() if line.startswith("|")]
    # every table row has as many cells as its header
    widths = [line.count("|") for line in tables]
    header_widths = {w for line, w in zip(tables, widths) if line.startswith("|---")}
    assert set(widths) <= header_widths
    for name in ("estimator.png", "depth.png"):
        data = (outputs / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and 5_000 < len(data) < 100_000


def test_problems_know_their_optimum():
    for name, make in resque_problems.PROBLEMS.items():
        p = make(8, random_state=1)
        rs = np.random.default_rng(0)
        X = rs.standard_normal((500, 8))
        X *= (rs.random((500, 1)) ** (1 / 8)) / np.linalg.norm(X, axis=1, keepdims=True)
        assert min(p.excess(x) for x in X) >= -1e-12, name
        assert p.excess(np.zeros(8)) > 0.05, name
        # mean_grad is the mean of grad_batch in distribution (2000 draws, 5 se)
        x = X[0]
        G = p.grad_batch(np.tile(x, (20_000, 1)), 3)
        m = np.mean([p.mean_grad(x, 100, rs) for _ in range(2000)], axis=0)
        se = G.std(axis=0) / math.sqrt(2000 * 100) + G.std(axis=0) / math.sqrt(20_000)
        assert np.all(np.abs(m - G.mean(axis=0)) <= 5 * se + 1e-12), name


def test_min_rounds_scan_and_bisect_agree():
    """On a run whose success is monotone in D, both searches return the same D."""
    p = resque_problems.nemirovski(4, random_state=0)

    def run(D, b, c, seed):
        return np.zeros(4) if D >= 23 else np.full(4, 10.0)

    eps = p.excess(np.zeros(4))
    scan = resque_baselines.min_rounds(run, p, eps, 1000, (1.0,), 500, 0)
    bis = resque_baselines.min_rounds(run, p, eps, 1000, (1.0,), 500, 0, search="bisect")
    assert scan[0] == bis[0] == 23
    assert resque_baselines.round_grid(10) == [2, 3, 4, 6, 8]
    with pytest.raises(ValueError, match="search"):
        resque_baselines.min_rounds(run, p, eps, 1000, (1.0,), 500, 0, search="golden")
