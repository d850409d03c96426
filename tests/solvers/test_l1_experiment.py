"""The l1 reproduction's plumbing on a tiny grid (the science runs in ``reproduce l1``)."""

import numpy as np

from dpsco_core.experiments import l1


def test_run_grid_and_report_tiny():
    points = [("d", 3000, 10, 1.0), ("d", 3000, 40, 1.0)]
    rows = l1.run_grid(points, [0], alg2=True, progress=lambda s: None)
    assert {r["method"] for r in rows} == {"zero", "alg3", "alg3_pure", "dp_sgd_proj", "alg2"}
    assert all(np.isfinite(r["excess"]) for r in rows)
    text = l1.report(rows, points)
    assert "fitted slope vs d" in text and "crossover" in text and "grows" in text


def test_fit_slope():
    assert abs(l1.fit_slope([1, 10, 100], [2, 20, 200]) - 1.0) < 1e-12
