#!/usr/bin/env python
"""Mutation probe of the privacy-critical lines (issue 15, section 7).

Each mutant is a plausible privacy bug: a sensitivity off by a factor of two, a wrong release
count, noise drawn smaller than accounted, nodes of the tree sharing noise, the floating-point
sampler back as the default. The probe applies the mutants one at a time to a temporary copy of
the source tree (never to the working tree; the compiled kernels are copied along), runs a
fixed selection of privacy tests against the copy and reports, for each mutant, whether the
tests killed it and which test failed first.

Exit status: 0 if every mutant is killed. 1 if one survives, if a mutant's original snippet is
not found exactly once (so that the probe cannot rot silently when the code moves: update the
snippet), or if the unmutated copy does not pass the selection.

Usage::

    python tools/mutation_probe.py                 # all mutants
    python tools/mutation_probe.py -k tree -k ttz  # mutants whose name contains a word
    python tools/mutation_probe.py --list
    python tools/mutation_probe.py -j 2            # two mutants at a time (one copy each)

Plain Python, no network; mutmut is not needed (the mutants are textual and hand-picked on
noise-scale, sensitivity, release-count and seed lines).
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: The tests every mutant runs against (fixed, so that "killed" means "by the suite"). The SSP
#: file is first: its tests take ~0.4 s, and under -x its mutants then stop there instead of
#: after the ~14 s of the others.
SELECTION = (
    "tests/privacy/test_ssp_noise_first_principles.py",
    "tests/privacy/test_noise_first_principles.py",
    "tests/privacy/test_noise_first_principles_modes.py",
    "tests/mechanisms/test_mechanisms.py",
    "tests/mechanisms/test_grid_quantile.py",
    "tests/test_estimators_private_rms.py",
    # the private feature scales (session 20): worst neighbours, noise drawn, report, and the
    # estimators' composition, stream and refusal
    "tests/test_feature_scales.py",
    "tests/test_estimators_feature_scaling.py",
    # ReSQue's private part (session 19): the noise schedule, Lemma 7's charge, the worst-case
    # plan recomputed, the calls made against the plan, the report against the target
    "tests/resque/test_private_erm.py::test_algorithm3_schedule",
    "tests/resque/test_private_erm.py::test_call_charge_matches_lemma7_closed_form",
    "tests/resque/test_private_sco.py::test_report_recomputed_from_the_worst_case_charge",
    "tests/resque/test_private_sco.py::test_charge_covers_every_oracle_call_made",
    "tests/resque/test_private_sco.py::test_report_never_above_the_target",
)


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    original: str
    replacement: str
    description: str


MUTANTS = (
    # -- the five of the issue --------------------------------------------------------------
    Mutant("dp_cd-releases-K", "dpsco_core/solvers/dp_cd.py",
           "    event = _run_event(share, epsilon, p, cd_event)\n"
           "    spend(budget, event, neighboring_relation=relation, delta=delta)\n",
           "    s, cd_event = _calibrate(epsilon * (1.0 - share), delta, n_inner, calibration)\n"
           "    event = _run_event(share, epsilon, p, cd_event)\n"
           "    spend(budget, event, neighboring_relation=relation, delta=delta)\n",
           "dp_cd calibrates for K releases instead of T K (average=False makes T > 1)"),
    Mutant("ttz-sensitivity-RL/n", "dpsco_core/solvers/frank_wolfe.py",
           "    sens = 2.0 * dom.vertex_norm * lipschitz / n\n",
           "    sens = dom.vertex_norm * lipschitz / n\n",
           "TTZ Frank-Wolfe score sensitivity R L / n instead of 2 R L / n"),
    Mutant("mirror-kernel-noise-sigma", "dpsco_core/solvers/mirror_descent.py",
           "steps, q, expected_batch, sigma * clip,",
           "steps, q, expected_batch, sigma,",
           "mirror descent kernel draws noise sigma instead of sigma C"),
    Mutant("smoothness-laplace-halved", "dpsco_core/solvers/smoothness.py",
           "rng.laplace(0.0, 1.0, self._means.size) * self._scale",
           "rng.laplace(0.0, 1.0, self._means.size) * 0.5 * self._scale",
           "private smoothness constants: the Laplace draw halved"),
    Mutant("tree-level-shares-seed", "dpsco_core/tree.py",
           "spawn_key=tuple(seed.spawn_key) + (k, j, b)",
           "spawn_key=tuple(seed.spawn_key) + (k, 0, b)",
           "tree aggregation: the nodes of one level share a seed"),
    # -- one (or more) per solver and mechanism -----------------------------------------------
    Mutant("dp_cd_grid-releases-K", "dpsco_core/solvers/dp_cd.py",
           "    event = _run_event(share, epsilon, p, cd_event)\n"
           "    spend(budget, SelfComposedDpEvent(event, n_runs)",
           "    s, cd_event = _calibrate(epsilon * (1.0 - share), delta, n_inner, calibration)\n"
           "    event = _run_event(share, epsilon, p, cd_event)\n"
           "    spend(budget, SelfComposedDpEvent(event, n_runs)",
           "dp_cd_grid calibrates for K releases instead of T K"),
    Mutant("dp_sgd-replace-one-sensitivity-C", "dpsco_core/solvers/dp_sgd.py",
           "noise_scale = check_noise_scale(s * sensitivity_factor(relation) * clip, epsilon)",
           "noise_scale = check_noise_scale(s * clip, epsilon)",
           "dp_sgd: sensitivity C instead of 2 C under replace-one (shuffle)"),
    Mutant("dp_sgd-poisson-half-the-steps", "dpsco_core/solvers/dp_sgd.py",
           "sample_rate=q, steps=steps, conversion=conversion)",
           "sample_rate=q, steps=max(1, steps // 2), conversion=conversion)",
           "Poisson dp_sgd calibrated for half of the steps it runs"),
    Mutant("dp_srgd-no-sqrt-levels", "dpsco_core/solvers/dp_srgd.py",
           "return gdp_mu(epsilon, delta), s, check_noise_scale(s * sensitivity, epsilon), ",
           "return gdp_mu(epsilon, delta), s, check_noise_scale(s / math.sqrt(T.bit_length()) "
           "* sensitivity, epsilon), ",
           "dp_srgd: node noise ignores the bit_length(T) nodes that hold a leaf"),
    Mutant("srgd-sensitivity-C/B", "dpsco_core/solvers/dp_srgd.py",
           "sensitivity = sensitivity_factor(relation) * clip / B",
           "sensitivity = clip / B",
           "dp_srgd and the single-epoch baselines: C / B instead of 2 C / B under replace-one"),
    Mutant("vr_frank_wolfe-child-sensitivity-halved", "dpsco_core/solvers/frank_wolfe.py",
           "delta[j] = 2.0 * vertex_norm * G * 2 ** j / b",
           "delta[j] = vertex_norm * G * 2 ** j / b",
           "vr_frank_wolfe: right-child score sensitivity halved"),
    Mutant("localized-md-half-the-steps", "dpsco_core/solvers/mirror_descent.py",
           'ph["noise_multiplier"] = _calibrate(ph["epsilon"], delta, ph["sample_rate"], ph["steps"],',
           'ph["noise_multiplier"] = _calibrate(ph["epsilon"], delta, ph["sample_rate"], '
           'max(1, ph["steps"] // 2),',
           "localized mirror descent: a phase calibrated for half of its steps"),
    Mutant("mlmc-sensitivity-halved", "dpsco_core/mlmc/dp_sco.py",
           "sensitivity = 2.0 * r_i * k_max / m",
           "sensitivity = r_i * k_max / m",
           "mlmc_dp_sco: phase sensitivity r_i k_max / m instead of 2 r_i k_max / m"),
    # -- add/remove-one, the strongly convex reduction, projected DP-SGD, FW with delta ---------
    Mutant("aro-sensitivity-halved", "dpsco_core/solvers/_common.py",
           "    return 2.0 if relation is NeighboringRelation.REPLACE_ONE else 1.0\n",
           "    return 2.0 if relation is NeighboringRelation.REPLACE_ONE else (\n"
           "        0.5 if relation is NeighboringRelation.ADD_OR_REMOVE_ONE else 1.0)\n",
           "add/remove-one: clipped-sum sensitivity C / 2 instead of C (dp_cd, dp_sgd)"),
    Mutant("dp_cd-aro-private-normaliser", "dpsco_core/solvers/dp_cd.py",
           "noise_scales = check_noise_scale(_noise_scales(s, relation, clips, m), epsilon)",
           "noise_scales = check_noise_scale(_noise_scales(s, relation, clips, n), epsilon)",
           "dp_cd: noise calibrated to C_j / n (the private size) under add/remove-one"),
    Mutant("dp_cd_grid-aro-private-normaliser", "dpsco_core/solvers/dp_cd.py",
           "_noise_scales(s, relation, run_clips, m)",
           "_noise_scales(s, relation, run_clips, n)",
           "dp_cd_grid: noise calibrated to C_j / n (the private size) under add/remove-one"),
    Mutant("dp_sgd-aro-rate-from-private-n", "dpsco_core/solvers/dp_sgd.py",
           "    q, norm, steps, steps_per_pass = dp_sgd_schedule(\n        m, passes,",
           "    q, norm, steps, steps_per_pass = dp_sgd_schedule(\n        n, passes,",
           "Poisson dp_sgd: rate and steps from the private n under add/remove-one"),
    Mutant("mirror-aro-schedule-from-private-n", "dpsco_core/solvers/mirror_descent.py",
           "    n = normaliser(relation, problem.n_samples, public_n)\n    d = problem.n_features\n",
           "    n = normaliser(relation, problem.n_samples, public_n)\n    n = problem.n_samples\n"
           "    d = problem.n_features\n",
           "noisy_mirror_descent: rate, batch and steps from the private n (add/remove-one)"),
    Mutant("localized-md-aro-schedule-from-private-n", "dpsco_core/solvers/mirror_descent.py",
           "n = normaliser(relation, problem.n_samples, public_n)   # public: schedule",
           "n = normaliser(relation, problem.n_samples, public_n); n = problem.n_samples  # schedule",
           "localized_mirror_descent: phase schedule from the private n (add/remove-one)"),
    Mutant("strongly-convex-reduction-round-size-private", "dpsco_core/solvers/mirror_descent.py",
           'solver_kwargs["public_n"] = max(2, int(round(probs[i] * n)))',
           'solver_kwargs["public_n"] = max(2, int(rows.size))',
           "strongly_convex_reduction: a round's count is its chunk's private size"),
    Mutant("projected-l1-noise-sigma", "dpsco_core/solvers/frank_wolfe.py",
           "g = rng.normal(0.0, sigma * clip, d)",
           "g = rng.normal(0.0, sigma, d)",
           "projected_dp_sgd_l1 draws noise sigma instead of sigma C"),
    Mutant("projected-l1-aro-rate-from-private-n", "dpsco_core/solvers/frank_wolfe.py",
           "    q = B / m\n",
           "    q = B / n\n",
           "projected_dp_sgd_l1: sampling rate B / n (the private size) under add/remove-one"),
    Mutant("ttz-approx-half-the-releases", "dpsco_core/solvers/frank_wolfe.py",
           "if _rdp_epsilon_selfcomposed(mid, T, delta) <= epsilon:",
           "if _rdp_epsilon_selfcomposed(mid, max(1, T // 2), delta) <= epsilon:",
           "ttz_frank_wolfe with delta: eps_it calibrated for T / 2 iterations"),
    Mutant("vr_frank_wolfe-approx-leaf-epsilon-halved", "dpsco_core/solvers/frank_wolfe.py",
           "    eps_leaf = 2.0 * sens / lam\n",
           "    eps_leaf = sens / lam\n",
           "vr_frank_wolfe with delta: a leaf counted Delta / lambda-DP (monotone factor 1)"),
    Mutant("vr_frank_wolfe-approx-delta-without-leaves", "dpsco_core/solvers/frank_wolfe.py",
           "total = delta_s + (math.exp(eps_f) + 1.0) * (1.0 + math.exp(-eps0) / 2.0) * p * d0",
           "total = delta_s",
           "vr_frank_wolfe with delta: the shuffled level's delta without its leaves' delta_0"),
    Mutant("vr_frank_wolfe-approx-delta-unsplit", "dpsco_core/solvers/frank_wolfe.py",
           "    delta_s = delta / 2.0\n",
           "    delta_s = delta\n",
           "vr_frank_wolfe with delta: the shuffling's delta_s is all of delta (no share left "
           "for the leaves)"),
    Mutant("dp_cd-gdp-half-the-releases", "dpsco_core/solvers/dp_cd.py",
           "event_of=lambda m: SelfComposedDpEvent(GaussianDpEvent(m), releases),\n"
           "            sqrt_releases=math.sqrt(releases))",
           "event_of=lambda m: SelfComposedDpEvent(GaussianDpEvent(m), max(1, releases // 2)),"
           "\n            sqrt_releases=math.sqrt(max(1, releases // 2)))",
           "dp_cd calibration='gdp': the multiplier of half the releases"),
    Mutant("gaussian-float-default", "dpsco_core/mechanisms.py",
           "calibration=None, secure=True):",
           "calibration=None, secure=False):",
           "GaussianMechanism: floating-point sampler back as the default"),
    Mutant("laplace-float-default", "dpsco_core/mechanisms.py",
           "def __init__(self, *, sensitivity, epsilon, secure=True):",
           "def __init__(self, *, sensitivity, epsilon, secure=False):",
           "LaplaceMechanism: floating-point sampler back as the default"),
    Mutant("gaussian-exact-scale-halved", "dpsco_core/_secure.py",
           "sigma = Fraction(noise_multiplier) * inflated(sensitivity) / Fraction(2) ** k",
           "sigma = Fraction(noise_multiplier) * inflated(sensitivity) / 2 / Fraction(2) ** k",
           "exact discrete Gaussian drawn with half the accounted scale"),
    Mutant("laplace-exact-scale-halved", "dpsco_core/_secure.py",
           "t = ceil_fraction(inflated(sensitivity) / (Fraction(epsilon) * Fraction(2) ** k),",
           "t = ceil_fraction(inflated(sensitivity) / (2 * Fraction(epsilon) * Fraction(2) ** k),",
           "exact discrete Laplace drawn with half the accounted scale"),
    Mutant("gaussian-float-calibration-halved", "dpsco_core/mechanisms.py",
           "                self.noise_multiplier = calibrate_analytic_gaussian(\n"
           "                    target_epsilon=epsilon, target_delta=delta)",
           "                self.noise_multiplier = 0.5 * calibrate_analytic_gaussian(\n"
           "                    target_epsilon=epsilon, target_delta=delta)",
           "GaussianMechanism(secure=False): half the analytic noise multiplier"),
    Mutant("laplace-float-scale-halved", "dpsco_core/mechanisms.py",
           'self.noise_scale = _check_noise_scale(self.sensitivity / self.epsilon,',
           'self.noise_scale = _check_noise_scale(0.5 * self.sensitivity / self.epsilon,',
           "LaplaceMechanism(secure=False): scale Delta / (2 epsilon)"),
    # -- sufficient statistics perturbation: dp_ssp, dp_ssp_logistic (issue 19) ---------------
    Mutant("ssp-gram-replace-one-C^2", "dpsco_core/solvers/ssp.py",
           "        return math.sqrt(2.0) * C * C, 2.0 * C * Y\n",
           "        return C * C, 2.0 * C * Y\n",
           "SSP: Gram sensitivity C^2 instead of sqrt(2) C^2 under replace-one"),
    Mutant("ssp-xty-replace-one-CY", "dpsco_core/solvers/ssp.py",
           "        return math.sqrt(2.0) * C * C, 2.0 * C * Y\n",
           "        return math.sqrt(2.0) * C * C, C * Y\n",
           "SSP: X^T y sensitivity C Y instead of 2 C Y under replace-one"),
    Mutant("ssp-gram-noise-halved", "dpsco_core/solvers/ssp.py",
           "upper = _noisy_upper(np.ascontiguousarray(G[iu]), sigma_G, gram_seq)",
           "upper = _noisy_upper(np.ascontiguousarray(G[iu]), 0.5 * sigma_G, gram_seq)",
           "SSP: the symmetric Gram noise drawn with half the accounted scale"),
    Mutant("ssp-quantile-unaccounted", "dpsco_core/solvers/ssp.py",
           "           if epsilon_q > 0.0 else gauss)",
           "           if epsilon_q < 0.0 else gauss)",
           "SSP: the private clip's exponential mechanism left out of the calibrated event"),
    Mutant("ssp-newton-weight-bound-1/8", "dpsco_core/solvers/ssp.py",
           "    return gram / 4.0, factor * C\n",
           "    return gram / 8.0, factor * C\n",
           "dp_ssp_logistic: Newton Gram sensitivity for weights <= 1/8 instead of 1/4"),
    Mutant("ssp-newton-gradient-C", "dpsco_core/solvers/ssp.py",
           "    return gram / 4.0, factor * C\n",
           "    return gram / 4.0, C\n",
           "dp_ssp_logistic: Newton gradient sensitivity C instead of 2 C under replace-one"),
    # -- the estimators' private rho (issue 19, session 15) --------------------------------
    Mutant("grid-quantile-sensitivity-1/2", "dpsco_core/mechanisms.py",
           "index = exponential_mechanism(scores, sensitivity=1.0, epsilon=epsilon,",
           "index = exponential_mechanism(scores, sensitivity=0.5, epsilon=epsilon,",
           "grid_quantile: the counts' sensitivity 1/2 instead of 1 (twice the claimed epsilon)"),
    Mutant("rms-quantile-left-out-of-the-report", "dpsco_core/estimators.py",
           "                 (() if plan.quantile is None else (plan.quantile,)))\n",
           "                 ())\n",
           "estimators: the private rho's quantile missing from the composed privacy report"),
    Mutant("rms-quantile-left-out-of-the-share", "dpsco_core/estimators.py",
           "    fixed = ((prior,) if prior is not None else ()) + _quantile_events(quantile_epsilon)\n",
           "    fixed = ((prior,) if prior is not None else ())\n",
           "estimators: the fits' epsilon calibrated without the private rho's quantile"),
    # -- private feature scales (session 20) -------------------------------------------------
    Mutant("feature-scales-left-out-of-the-share", "dpsco_core/estimators.py",
           "    fixed = ((prior,) if prior is not None else ()) + _quantile_events(quantile_epsilon)\n",
           "    fixed = _quantile_events(quantile_epsilon)\n",
           "estimators: the fits' epsilon calibrated without the feature scales' release"),
    Mutant("feature-scales-left-out-of-the-report", "dpsco_core/estimators.py",
           "        fixed = (((plan.scaling,) if plan.scaling is not None else ()) +\n",
           "        fixed = (() +\n",
           "estimators: the feature scales' release missing from the composed privacy report"),
    Mutant("feature-scales-sensitivity-per-coordinate", "dpsco_core/feature_scales.py",
           "    return math.sqrt(p_live) / n\n",
           "    return 1.0 / n\n",
           "feature scales: sensitivity 1/n per coordinate instead of the l2 sqrt(p)/n"),
    Mutant("feature-scales-noise-halved", "dpsco_core/feature_scales.py",
           "        mechanism = GaussianMechanism(sensitivity=_sensitivity(p_live, n), noise_multiplier=z)\n",
           "        mechanism = GaussianMechanism(sensitivity=_sensitivity(p_live, n), noise_multiplier=z / 2)\n",
           "feature scales: noise drawn at half the accounted multiplier"),
    Mutant("feature-scales-whole-budget", "dpsco_core/estimators.py",
           "        rho = FEATURE_SCALING_SHARE * _zcdp_rho(float(self.epsilon), delta)\n",
           "        rho = _zcdp_rho(float(self.epsilon), delta)\n",
           "estimators: the feature scales calibrated at the whole zCDP budget, not its share"),
    Mutant("feature-scales-seed-shared", "dpsco_core/estimators.py",
           "        seed = child_seed_sequences(root, 1, offset=_SCALING_STREAM)[0]\n",
           "        seed = root\n",
           "estimators: the scales' noise drawn from the fit's own stream (correlated noise)"),
    # -- ReSQue's private part (session 19) -----------------------------------------------
    Mutant("resque-sigma-times-beta", "dpsco_core/resque/private_erm.py",
           '"sigmas": [lipschitz * e / beta for e in etas]',
           '"sigmas": [lipschitz * e * beta for e in etas]',
           "Algorithm 3: noise L eta beta instead of L eta / beta (the audit's broken twin)"),
    Mutant("resque-line-search-runs-once", "dpsco_core/resque/private_sco.py",
           "ls = _alg5_charge(beta, T1, n, dc, ratio, mode, L, lam, r, d).times(n_ls_calls * k7)",
           "ls = _alg5_charge(beta, T1, n, dc, ratio, mode, L, lam, r, d).times(n_ls_calls)",
           "Theorem 3's plan: each line-search call charged for one of its k7 Algorithm 5 runs"),
    Mutant("resque-alg6-level-pair-half", "dpsco_core/resque/private_sco.py",
           "        sp = sp + _alg5_charge(2.0 ** (-(j - 1) / 2.0) * beta, 2 ** (j - 1) * T3, n, dc, ratio,\n"
           "                               mode, L, lam, r, d)\n",
           "",
           "Theorem 3's plan: Algorithm 6's level j - 1 run of each worst level not charged"),
    Mutant("resque-lemma7-inclusion-squared", "dpsco_core/resque/_private_accounting.py",
           "    s = with_replacement_inclusion_probability(n_samples, n_steps)\n",
           "    s = with_replacement_inclusion_probability(n_samples, n_steps) ** 2\n",
           "Lemma 7: amplification by s^2 instead of the inclusion probability s"),
    Mutant("resque-calibrated-without-slack", "dpsco_core/resque/private_sco.py",
           "        return ch.alpha_max > 1.0 and _report(ch, dlt, mode, None).epsilon <= eps\n",
           "        return ch.alpha_max > 1.0 and ch.to_dp(dlt)[0] <= eps\n",
           "resque_private_erm: beta calibrated on Corollary 1 at delta' = delta, the slack ignored"),
)


def copy_tree(dest):
    """The package, its tests, the pytest configuration and the compiled kernels."""
    for name in ("dpsco_core", "tests"):
        shutil.copytree(REPO / name, dest / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "build"))
    for name in ("pyproject.toml", "setup.py"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, dest / name)
    if not list((dest / "dpsco_core" / "_kernels").glob("*.so")):
        raise SystemExit("no compiled kernels in dpsco_core/_kernels: build them first "
                         "(python setup.py build_ext --inplace).")


def run_selection(root, selection, timeout):
    """(returncode, first failing test or the last line of output, seconds)."""
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-rf",
             *selection], cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout} s", time.perf_counter() - start
    elapsed = time.perf_counter() - start
    failed = [line.split(" ", 1)[1].split(" - ")[0] for line in proc.stdout.splitlines()
              if line.startswith("FAILED ")]
    lines = proc.stdout.strip().splitlines() or [proc.stderr.strip()]
    return proc.returncode, failed[0] if failed else lines[-1], elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", action="append", default=[],
                        help="run only the mutants whose name contains this word")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per test run (default 600)")
    parser.add_argument("-j", "--jobs", type=int, default=1,
                        help="mutants tested at once, each in its own copy (default 1)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    mutants = [m for m in MUTANTS if not args.k or any(k in m.name for k in args.k)]
    if args.list:
        for m in mutants:
            print(f"{m.name:42s} {m.path}: {m.description}")
        return 0

    problems = []
    for m in mutants:        # every snippet must still be in the tree, exactly once
        count = (REPO / m.path).read_text().count(m.original)
        if count != 1:
            problems.append(f"{m.name}: original snippet found {count} times in {m.path} "
                            "(update the mutant)")
    if problems:
        print("\n".join(problems))
        return 1

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpsco-mutants-") as tmp:
        roots = [Path(tmp) / f"copy{i}" for i in range(min(args.jobs, max(1, len(mutants))))]
        for root in roots:
            root.mkdir()
            copy_tree(root)
        root = roots[0]
        # The copy, not an installed (or editable) dpsco_core, must be what the tests import.
        where = subprocess.run(
            [sys.executable, "-c", "import dpsco_core; print(dpsco_core.__file__)"], cwd=root,
            env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True)
        if not where.stdout.strip().startswith(str(root)):
            print(f"the copy is not what Python imports: {where.stdout or where.stderr}")
            return 1
        code, detail, secs = run_selection(root, SELECTION, args.timeout)
        print(f"{'unmutated':42s} {'pass' if code == 0 else 'FAIL':8s} {secs:6.1f} s  {detail}")
        if code != 0:
            print("the unmutated copy must pass the selection; fix the tests first.")
            return 1
        free = list(roots)          # each worker thread mutates a copy no other one uses

        def probe(m):
            root = free.pop()
            target = root / m.path
            source = target.read_text()
            target.write_text(source.replace(m.original, m.replacement))
            try:
                code, detail, secs = run_selection(root, SELECTION, args.timeout)
            finally:
                target.write_text(source)
                free.append(root)
            status = {0: "SURVIVED", 1: "killed"}.get(code, "ERROR")
            print(f"{m.name:42s} {status:8s} {secs:6.1f} s  {detail}", flush=True)
            return m, status

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(roots)) as pool:
            results = list(pool.map(probe, mutants))
    killed = sum(status == "killed" for _, status in results)
    print(f"\n{killed} of {len(results)} mutants killed in {time.perf_counter() - start:.0f} s "
          f"(selection: {' '.join(SELECTION)}).")
    bad = [m.name for m, status in results if status != "killed"]
    if bad:
        print("not killed (survived, or the test run errored): " + ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
