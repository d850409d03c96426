"""Every short threaded kernel with 1, 2 and the default number of threads while another
process keeps a core busy (issue 18: "no kernel is slower with 2 threads than with 1 on a
machine where another process keeps a core busy").

A ``python -c "while True: pass"`` subprocess runs for the whole measurement. Each case is a
public call (or, for the loss, its kernel) of a few ms; the three thread settings run
interleaved, in a new random order each round (a fixed order showed a bias: the setting run
right after a 2-thread call was the fast one), so that a change of the machine's load hits
all three alike. Printed: wall-clock medians and the ratios ``2 / 1`` (an explicit
``n_threads=2``, used as given) and ``default / 1`` (``n_threads=None``: serial below the
work threshold, and at most the CPUs other running threads leave idle), of the medians and of
the minimums (the minimum is what a loaded machine distorts least). Results are bitwise
the same for every setting (tests/test_work_threshold.py); this measures speed only.

Run: ``PYTHONPATH=<tree> python bench/bench_busy_threads.py [rounds] [--no-competitor]``
(default 15 rounds; ``--no-competitor`` for the idle baseline). Say the machine's load
(printed before and after) with the numbers.
"""
import os
import subprocess
import sys
import time
import warnings

import numpy as np

import dpsco_core as dp
from dpsco_core._config import effective_n_threads
from dpsco_core._kernels import _loss
from dpsco_core.reference import loss as loss_twin

SETTINGS = (1, 2, None)


def _cases():
    rng = np.random.default_rng(0)
    cases = {}

    m = 1_000_000
    z, y = rng.standard_normal(m) * 3.0, rng.choice([-1.0, 1.0], m)
    v, dv = np.empty(m), np.empty(m)
    cases["_loss: squared value+deriv, 1e6 margins"] = lambda t: _loss.loss_values_derivs(
        z, y, loss_twin.LOSS_SQUARED, 1.0, v, dv, effective_n_threads(t, work=m))

    u = rng.standard_normal(1 << 21)
    l1 = dp.L1(0.5)
    cases["_prox: L1 prox, 2^21 coordinates"] = lambda t: l1.prox(u, 0.3, n_threads=t)

    g = rng.standard_normal(300_000)
    cases["_noise: Gaussian mechanism, 3e5 values"] = lambda t: dp.mechanisms.gaussian_mechanism(
        g, sensitivity=1.0, epsilon=1.0, delta=1e-6, secure=False, random_state=0, n_threads=t)
    s = rng.standard_normal(1_000_000)
    cases["_noisy_max: Gumbel noisy max, 1e6 scores"] = lambda t: dp.mechanisms.report_noisy_max(
        s, sensitivity=1.0, epsilon=1.0, noise="gumbel", secure=False, random_state=0,
        n_threads=t)

    from dpsco_core.tree import TreeAggregation
    leaf = rng.standard_normal(100_000)

    def tree(t):
        agg = TreeAggregation(100_000, 8, noise_scale=1.0, random_state=0, n_threads=t)
        for _ in range(8):
            agg.next(leaf)
    cases["_tree: 8 tree-noise steps, p = 1e5"] = tree

    from dpsco_core.mlmc import GLMOracle, mlmc_draws
    Xm = rng.standard_normal((2000, 100)) / 10.0
    oracle = GLMOracle(dp.Problem(Xm, np.sign(Xm @ rng.standard_normal(100)), loss="logistic"))
    c = np.zeros(100)
    cases["_mlmc: 2,000 copies, d = 100, j_max = 8"] = lambda t: mlmc_draws(
        oracle, 1.0, c, j_max=8, n_copies=2000, levels="paper", random_state=1, n_threads=t)

    Xs = rng.standard_normal((20_000, 50)) / np.sqrt(50)
    srgd_problem = dp.Problem(Xs, Xs @ rng.standard_normal(50), loss="half_squared")
    cases["_batch: dp_srgd, n = 2e4, p = 50, B = 2000 (10 rounds)"] = lambda t: dp.solvers.dp_srgd(
        srgd_problem, epsilon=1.0, delta=1e-6, beta=1.0, batch_size=2000, radius=5.0,
        random_state=0, n_threads=t, record_history=False)

    from dpsco_core.datasets import make_rademacher_lasso
    Xf, yf, _ = make_rademacher_lasso(5_000, 200, 5, radius=1.0, noise=0.5, random_state=1)
    fw_problem = dp.Problem(Xf, yf, loss="half_squared")
    cases["_frank_wolfe: ttz_frank_wolfe, 5,000 x 200, 5 steps"] = (
        lambda t: dp.solvers.ttz_frank_wolfe(fw_problem, epsilon=1.0, delta=1e-5, lipschitz=3.0,
                                             n_iter=5, random_state=0, n_threads=t))

    from dpsco_core.resque import draw_resque_samples, resque_estimate
    zeta = draw_resque_samples(20_000, 50, random_state=1)
    G = rng.standard_normal((20_000, 50))
    xr = 0.01 * rng.standard_normal((2, 50))
    cases["_resque: estimate, N = 20,000, d = p = 50, m = 2"] = lambda t: resque_estimate(
        xr, np.zeros(50), 1.0, zeta, G, n_threads=t)
    cases["_resque: draw samples, 20,000 x 50"] = lambda t: draw_resque_samples(
        20_000, 50, random_state=1, n_threads=t)

    from dpsco_core.parallel import BlockExecutor
    Xb = rng.standard_normal((200_000, 20))
    executors = {t: BlockExecutor(block_rows=65_536, n_threads=t) for t in SETTINGS}
    blocked = {t: executors[t].problem(Xb, Xb @ np.ones(20), loss="squared") for t in SETTINGS}
    rows = np.sort(rng.choice(200_000, 20_000, replace=False)).astype(np.int64)
    out = np.empty(20)
    cases["blocked: BlockExecutor diff_sum, 20,000 of 2e5 rows, p = 20"] = (
        lambda t: executors[t].diff_sum(blocked[t], rows, np.ones(20), np.zeros(20), 2.0, 1.0,
                                        0.5, out))

    Xc = rng.standard_normal((2000, 10))
    cd_problem = dp.Problem(Xc, Xc @ rng.standard_normal(10), loss="squared",
                            penalty=dp.L1(0.01))
    cases["_cd: dp_cd_grid, 2,000 x 10, 4 x 4 x 2 configurations"] = lambda t: dp.dp_cd_grid(
        cd_problem, epsilon=1.0, delta=1e-6, passes=2, steps=[0.1, 0.3, 1.0, 3.0],
        clips=[0.3, 1.0, 3.0, 10.0], n_seeds=2, random_state=5, n_threads=t)
    return cases


def main(argv):
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 15
    competitor = "--no-competitor" not in argv
    warnings.simplefilter("ignore")
    cases = _cases()
    order = np.random.default_rng(0)     # each round runs the settings in a new order
    proc = (subprocess.Popen([sys.executable, "-c", "while True: pass"]) if competitor
            else None)
    try:
        time.sleep(0.5)
        print(f"load before {open('/proc/loadavg').read().split()[:4]}; competing process: "
              f"{'yes' if competitor else 'no'}; default n_threads=None -> "
              f"{effective_n_threads(None)} (idle), "
              f"{effective_n_threads(None, work=10**9)} (with a work size, now)")
        print(f"{'case (medians; ratios of medians, then of minimums)':62s} {'1 thr ms':>8s} "
              f"{'2 thr ms':>8s} {'dflt ms':>8s} {'2/1':>5s} {'dflt/1':>6s} {'min 2/1':>7s} "
              f"{'dflt/1':>6s}")
        for name, fn in cases.items():
            for t in SETTINGS:      # warm-up (memos, page faults, the OpenMP pool)
                fn(t)
            times = {t: [] for t in SETTINGS}
            for _ in range(rounds):
                for k in order.permutation(len(SETTINGS)):
                    t = SETTINGS[k]
                    start = time.perf_counter()
                    fn(t)
                    times[t].append(time.perf_counter() - start)
            med = {t: float(np.median(times[t])) * 1e3 for t in SETTINGS}
            low = {t: min(times[t]) for t in SETTINGS}
            print(f"{name:62s} {med[1]:8.2f} {med[2]:8.2f} {med[None]:8.2f} "
                  f"{med[2] / med[1]:5.2f} {med[None] / med[1]:6.2f} {low[2] / low[1]:7.2f} "
                  f"{low[None] / low[1]:6.2f}", flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"load after {open('/proc/loadavg').read().split()[:4]}; OMP_WAIT_POLICY "
          f"{os.environ.get('OMP_WAIT_POLICY', '(unset: dpsco-core asks for passive)')}")


if __name__ == "__main__":
    main(sys.argv[1:])
