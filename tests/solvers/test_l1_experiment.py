"""The l1 reproduction's plumbing on a tiny grid (the science runs in ``reproduce l1``)."""

import numpy as np

from dpsco_core.experiments import l1


def test_run_sweeps_and_report_tiny(tmp_path):
    points = [("d", 2000, 10, 1.0), ("d", 2000, 70, 1.0),
              ("crossover", 800, 10, 1.0), ("crossover", 800, 40, 1.0)]
    methods = {"d": ("alg3", "dp_sgd_proj"), "crossover": ("alg2", "alg3")}
    second = {"alg3": ("phase_offset", (0,)), "dp_sgd_proj": ("step_factor", (1.0, 8.0)),
              "alg2": ("reg_constant", (1.0,))}
    rows, chosen = l1.run_sweeps(points, methods, [0, 1], [7], clip_factors=(0.5,),
                                 second=second)
    assert {r["method"] for r in rows} == {"zero", "alg3", "dp_sgd_proj", "alg2"}
    assert len(rows) == 4 * 2 * 3 and all(np.isfinite(r["excess"]) for r in rows)
    assert chosen[("d", 2000, 10, 1.0, "dp_sgd_proj")]["step_factor"] in (1.0, 8.0)
    text = l1.report(rows, chosen, points)
    assert "fitted slope vs d" in text and "crossover" in text and "grows" in text
    assert len(l1._plots(rows, points, str(tmp_path))) == 2


def test_alg3_phases_follow_the_schedule():
    from dpsco_core.solvers.frank_wolfe import vr_frank_wolfe_schedule
    for n in (1000, 100_000, 1_000_000):
        T = vr_frank_wolfe_schedule(n, 1000, epsilon=1.0, delta=n ** -1.1,
                                    lipschitz=0.5 * l1.LIPSCHITZ)[1]
        assert l1.alg3_phases(n, 1000, 1.0, 0.5, 0) == T
        assert l1.alg3_phases(n, 1000, 1.0, 0.5, -1) == max(1, T - 1)
        up = l1.alg3_phases(n, 1000, 1.0, 0.5, 1)
        assert up in (T, T + 1)               # lowered only when T + 1 does not fit in n
        vr_frank_wolfe_schedule(n, 1000, epsilon=1.0, delta=n ** -1.1,
                                lipschitz=0.5 * l1.LIPSCHITZ, n_phases=up)
    assert l1.alg3_phases(100, 10, 1.0, 0.5, 5) < 6


def test_fit_slope_and_crossover():
    assert abs(l1.fit_slope([1, 10, 100], [2, 20, 200]) - 1.0) < 1e-12
    # first method below the second until between d = 10 and 100, equal logs at sqrt(1000)
    assert abs(l1.crossover([1, 10, 100], [1, 1, 100], [2, 10, 10]) - 10 ** 1.5) < 1e-9
    assert l1.crossover([1, 10], [1, 1], [2, 2]) is None
