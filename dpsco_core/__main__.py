"""Command line: ``python -m dpsco_core demo`` (and ``show-config``, ``reproduce``, ``--version``).

Installed as the console script ``dpsco-core`` too; the usage text names whichever was run.

The demo runs the mechanisms and the accountant on the real data shipped with the package and
prints every number with the guarantee it comes with. It uses fixed seeds so that its output is
reproducible; a real private release uses ``random_state=None``.
"""

import argparse
import math
import os
import sys
import time

import numpy as np


def _section(title):
    print()
    print(title)
    print("-" * len(title))


def demo(seed=0):
    from . import __version__, datasets
    from ._config import effective_n_threads, openmp_enabled
    from .mechanisms import GaussianMechanism, LaplaceMechanism, ReportNoisyMax
    from .privacy import (GaussianDpEvent, NeighboringRelation, PoissonSampledDpEvent,
                          RdpAccountant, calibrate_sampled_gaussian, dp_cd_noise_multiplier)

    rng = np.random.default_rng(seed)
    print(f"dpsco-core {__version__}: mechanisms and privacy accounting on real data")
    print(f"(OpenMP {'on' if openmp_enabled() else 'off'}, {effective_n_threads()} thread(s); "
          f"fixed seed {seed} for a reproducible demo: real releases use random_state=None)")

    X_cal, y_cal = datasets.load_california()
    n_cal = y_cal.size
    delta_cal = 1.0 / n_cal**2

    _section(f"1. Private mean house value, California housing (n = {n_cal:,})")
    bound = 5.0
    clipped = np.clip(y_cal, 0.0, bound)
    true_mean = clipped.mean()
    sensitivity = bound / n_cal
    print(f"values clipped to [0, {bound:g}] (units of $100,000); n is public, neighbours differ "
          f"in one record (replace-one),\nso the mean has sensitivity {bound:g}/n = "
          f"{sensitivity:.3e} in l1 and l2.")
    gauss = GaussianMechanism(sensitivity=sensitivity, epsilon=1.0, delta=delta_cal)
    laplace = LaplaceMechanism(sensitivity=sensitivity, epsilon=1.0)
    g_mean = gauss(true_mean, random_state=rng)
    l_mean = laplace(true_mean, random_state=rng)
    print(f"  true mean                      {true_mean:.6f}")
    print(f"  Gaussian, (1, 1/n^2 = {delta_cal:.2e})-DP  {g_mean:.6f}   "
          f"sigma = {gauss.noise_scale:.3e} (exact discrete Gaussian, zCDP calibration, noise "
          f"multiplier {gauss.noise_multiplier:.3f})")
    print(f"  Laplace, 1-DP                  {l_mean:.6f}   b = {laplace.noise_scale:.3e}")

    X_el, y_el = datasets.load_electricity()
    _section(f"2. Report-noisy-max on Electricity (n = {y_el.size:,})")
    day = X_el[:, 1].astype(int)
    counts = np.bincount(day[y_el > 0], minlength=8)[1:8].astype(float)
    rnm = ReportNoisyMax(sensitivity=1.0, epsilon=0.1, monotonic=True)
    pick = rnm(counts, random_state=rng)
    print("Which weekday (1-7) has the most price-UP half-hours? Counts change by at most 1 "
          "when one record\nis added or removed, all in the same direction (monotone): "
          f"Laplace noise of scale {rnm.noise_scale:g} gives 0.1-DP.")
    print(f"  counts by day  {counts.astype(int).tolist()}")
    print(f"  true argmax    day {int(np.argmax(counts)) + 1}")
    print(f"  private pick   day {pick + 1}   (0.1-DP, add/remove-one)")

    _section("3. Calibration: DP-SGD and DP-CD noise for a target (epsilon, delta)")
    n_el = y_el.size
    q = 256 / n_el
    start = time.perf_counter()
    z = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1.0 / n_el**2,
                                   sample_rate=q, epochs=50)
    elapsed = time.perf_counter() - start
    steps = math.ceil(50 / q)
    acc = RdpAccountant()
    acc.compose(PoissonSampledDpEvent(q, GaussianDpEvent(z)), steps)
    eps, order = acc.get_epsilon_and_order(1.0 / n_el**2)
    print(f"DP-SGD on Electricity, batch 256 (Poisson, q = {q:.5f}), 50 epochs = {steps:,} steps,"
          f" epsilon = 1, delta = 1/n^2:")
    print(f"  noise multiplier z = {z:.4f} (calibrated in {elapsed * 1e3:.1f} ms); the RDP "
          f"accountant gives back epsilon = {eps:.6f} (order {order:g})")
    releases = 50 * X_cal.shape[1]
    s_tight = dp_cd_noise_multiplier(epsilon=1.0, delta=delta_cal, releases=releases)
    s_theorem = dp_cd_noise_multiplier(epsilon=1.0, delta=delta_cal, releases=releases,
                                       method="theorem")
    print(f"DP-CD on California, 50 passes over p = 8 coordinates = {releases} releases, epsilon "
          "= 1, delta = 1/n^2:")
    print(f"  noise multiplier {s_tight:.3f} (tight RDP closed form) vs {s_theorem:.3f} "
          f"(Theorem 3.1): {s_theorem / s_tight:.3f}x less noise")

    _section("4. Composition: what this demo released about California")
    total = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    total.compose(gauss.event).compose(laplace.event)
    eps_rdp, _ = total.get_epsilon_and_order(delta_cal)
    print(f"  Gaussian mean + Laplace mean: basic composition gives (2, {delta_cal:.2e})-DP, the "
          f"RDP accountant ({eps_rdp:.4f}, {delta_cal:.2e})-DP.")
    print("  For two releases the exact calibration of each wins; over many releases the "
          "accountant does:")
    for k in (10, 100):
        many = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
        many.compose(gauss.event, count=k)
        eps_k, order_k = many.get_epsilon_and_order(delta_cal)
        print(f"  {k:>3} such Gaussian means: basic composition ({k}, {k * delta_cal:.1e})-DP, "
              f"RDP accountant ({eps_k:.3f}, {delta_cal:.2e})-DP (order {order_k:g})")
    _solvers_section(X_cal, y_cal, X_el, y_el)
    print()
    print("Next: python -m pytest (the test suite); python bench/run.py (benchmarks).")
    return 0


def _describe_report(report):
    relation = report.neighboring_relation.value.replace("_", "-")
    status = "unconditional" if report.unconditional else "CONDITIONAL"
    return (f"{status} ({report.epsilon:.4f}, {report.delta:.2e})-DP, {relation}, "
            f"{report.releases} {'+'.join(report.mechanisms)} releases, "
            f"{report.accountant.upper()} accountant ({report.conversion} conversion)")


def _solvers_section(X_cal, y_cal, X_el, y_el):
    import importlib.util

    from . import L1, L2, Problem
    from .solvers import dp_cd

    has_sgd = importlib.util.find_spec("dpsco_core.solvers.dp_sgd") is not None
    _section("5. Private solvers at epsilon = 1, delta = 1/n^2, both under zero-out")
    print("Hyperparameters were tuned beforehand on these data without privacy (the paper's "
          "protocol, not accounted);\nrelative error = (F(w) - F*) / F*, F* from the "
          "high-precision non-private solver.")
    n_cal, n_el = y_cal.size, y_el.size
    lam_max = 2.0 * float(np.max(np.abs(X_cal.T @ y_cal))) / n_cal
    problems = [
        ("California LASSO (raw), lambda = 0.1 lambda_max",
         Problem(X_cal, y_cal, loss="squared", penalty=L1(0.1 * lam_max)),
         dict(step=0.3, clip=1e5), dict(step=0.03, clip=1e5)),
        ("Electricity logistic (raw), lambda = 1/n",
         Problem(X_el, y_el, loss="logistic", penalty=L2(1.0 / n_el)),
         dict(step=2.15, clip=5.3), dict(step=1.0, clip=10.0)),
    ]
    for title, problem, cd_params, sgd_params in problems:
        n = problem.n_samples
        optimum = problem.solve().objective
        print(f"\n  {title}: F* = {optimum:.6f}")
        runs = [("DP-CD ", lambda: dp_cd(problem, epsilon=1.0, delta=1.0 / n**2, passes=20,
                                          average=False, neighboring_relation="zero_out",
                                          random_state=0, **cd_params))]
        if has_sgd:
            from .solvers import dp_sgd
            runs.append(("DP-SGD", lambda: dp_sgd(problem, epsilon=1.0, delta=1.0 / n**2,
                                                  passes=20, batch_size=256, random_state=0,
                                                  neighboring_relation="zero_out",
                                                  **sgd_params)))
        for name, run in runs:
            start = time.perf_counter()
            res = run()
            elapsed = time.perf_counter() - start
            rel = (problem.objective(res.coef) - optimum) / optimum
            print(f"    {name} 20 passes: relative error {rel:.4f} in {elapsed:.3f} s; "
                  f"{_describe_report(res.privacy)}")
    print("\n  Both run under zero-out (a record replaced by a null one: n is public, so both "
          "divide by n;\n  under add/remove-one pass public_n=). The paper's DP-CD uses "
          "replace-one, twice the sensitivity.\n  Both reports are CONDITIONAL: the steps come "
          "from smoothness constants read from the data\n  (as in the paper; a "
          "PrivacyLeakWarning says so). Public bounds on the data\n  (Problem(..., "
          "bounds=(lower, upper), row_norm=...)) or dp_cd(..., smoothness='private') remove "
          "the condition.")


# "python -m dpsco_core reproduce <name>" -> dpsco_core.experiments.<module>.main(argv)
_REPRODUCTIONS = {"dpcd": "dpcd", "l1": "l1", "srgd": "srgd", "resque-parallel": "resque",
                  "mlmc": "mlmc", "resque-private": "resque_private", "tuning": "tuning"}


CONSOLE_SCRIPT = "dpsco-core"


def _prog_name():
    """How the user started us: ``dpsco-core`` (console script) or ``python -m dpsco_core``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.splitext(name)[0] == CONSOLE_SCRIPT:
        return CONSOLE_SCRIPT
    return "python -m dpsco_core"


#: One line per paper for ``reproduce --help``.
_PAPERS = {
    "dpcd": "DP-CD (Mangold et al. 2022): private coordinate descent vs DP-SGD",
    "l1": "l1-geometry DP-SCO (Asi et al.): Frank-Wolfe and mirror descent",
    "srgd": "accelerated DP-SRGD (Choquette-Choo et al.): single-epoch tree noise",
    "resque-parallel": "ReSQue (Carmon et al. 2023): parallel ball-oracle optimization",
    "mlmc": "MLMC optimum estimator (Asi et al.): bias-reduced estimators",
    "resque-private": "ReSQue (Carmon et al. 2023): private SCO (Theorem 4) vs n^2 baselines",
    "tuning": "private hyperparameter selection (issue 19): defaults, selection, diffprivlib",
}


def _reproduce_help(prog):
    lines = [f"usage: {prog} reproduce PAPER [options]", "",
             "Reproduce a paper's experiments (a reduced grid by default, --full for the",
             f"paper's); `{prog} reproduce PAPER --help` lists PAPER's options.",
             "", "papers:"]
    lines += [f"  {name:<16} {_PAPERS.get(name, '')}" for name in sorted(_REPRODUCTIONS)]
    return "\n".join(lines)


def main(argv=None, *, prog=None):
    from . import __version__

    prog = prog or _prog_name()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["reproduce"] and (len(argv) == 1 or argv[1] in ("-h", "--help")):
        # the subcommand's own parser cannot print this: its options belong to each paper
        print(_reproduce_help(prog), file=sys.stdout if len(argv) > 1 else sys.stderr)
        return 0 if len(argv) > 1 else 2
    parser = argparse.ArgumentParser(prog=prog,
                                     description="dpsco-core command line")
    parser.add_argument("--version", action="version", version=f"dpsco-core {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="mechanisms and the accountant on real data")
    p_demo.add_argument("--seed", type=int, default=0, help="seed of the demo (default 0)")
    sub.add_parser("show-config", help="print the build configuration")
    p_repro = sub.add_parser("reproduce", help="reproduce a paper's experiments",
                             add_help=False)
    p_repro.add_argument("paper", help="which paper: " + ", ".join(sorted(_REPRODUCTIONS)))
    p_repro.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(seed=args.seed)
    if args.command == "reproduce":
        if args.paper not in _REPRODUCTIONS:
            parser.error(f"unknown paper {args.paper!r}; choose from {sorted(_REPRODUCTIONS)}")
        import importlib
        module = importlib.import_module(f"dpsco_core.experiments.{_REPRODUCTIONS[args.paper]}")
        return module.main(args.rest)
    from ._config import show_config
    show_config()
    return 0


if __name__ == "__main__":
    sys.exit(main())
