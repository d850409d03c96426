"""Private hyperparameter selection (issue 19): defaults, private selection, non-private tuning.

``python -m dpsco_core reproduce tuning [--smoke | --full] [--out DIR] [--problems KEYS]
[--passes N]``

Part 1, solvers. On the problems of the DP-CD reproduction (:mod:`dpsco_core.experiments.dpcd`,
same data, lambda, epsilon and delta = 1/n^2, zero-out relation, last iterate), the relative
error (F(w) - F*) / F* of DP-CD and DP-SGD (Poisson, expected batch 256) with

(a) the defaults of :func:`dpsco_core.tuning.grids.default_hyperparameters` by the
    noise-level rule (clip ``Lambda_0 rho min(A / nu, 4)`` with ``rho`` the root-mean-square
    row norm and ``nu`` the public noise scale; DP-CD step 1, DP-SGD step 0.1), and (a0) by
    the worst-case rule (step 1, clip kappa times the gradient scale of the bounds), the
    default before session 11;
(b) private selection, :func:`dpsco_core.tuning.search.tune_solver` at its defaults and the
    problem's total epsilon **including the search** (K truncated negative binomial, eta = 2,
    E[K] = 80, the whole budget on the selection, the selected trial's model released; every
    trial trains on all the records and is scored by its noisy clipped training objective,
    30% of its zCDP rho);
(c) the best configuration of the same grid chosen on the exact objective (not private: the
    paper's protocol), its mean over the seeds.

The gradient scale uses per-feature bounds and the label bound equal to the data's largest
absolute values, and the noise-level rule the data's root-mean-square row norm (``sqrt(p)``
on the standardized problems), declared public here (the DP-CD reproduction likewise reads
its smoothness constants from the data, and DP-CD's sum of M_j is ``s_l rho^2``); the grids
span [1e-3, 1] times the gradient scale (:mod:`dpsco_core.tuning.grids`).

Part 2, estimators. Held-out score (R^2 on standardized California, accuracy on standardized
Electricity; 80/20 split, features standardized and clipped onto the public bounds [-5, 5])
of ``DPLasso`` / ``DPLogisticRegression`` at their defaults (given epsilon = 1 and the public
bounds: for California the label range [0, 5]; ``DPLasso``'s ``solver="auto"`` runs SSP there,
``DPLogisticRegression`` DP-CD with hyperparameters selected privately inside the budget; also
with ``solver="cd"``, and ``solver="sgd"`` with Poisson batches under zero-out and shuffled
batches under replace-one) against diffprivlib's
``LinearRegression`` / ``LogisticRegression`` at epsilon = 1 with the same public bounds, and
the non-private scikit-learn models. diffprivlib runs in its own environment
(``DPSCO_DIFFPRIVLIB_PYTHON``, default ``/work/venv-dpl/bin/python``) as a subprocess;
without it the table says "diffprivlib not available". The library does not depend on it.

Default run: the four California / Electricity problems at 50 passes, 3 seeds, estimators over
5 seeds (about 15 minutes on 2 cores). ``--full``: the five problems (Sparse LASSO too), 10
seeds, estimators over 10 seeds. ``--smoke``: one small problem, 2 passes, 1 seed.
``--problems k1,k2``: only those problems, with the mode's seeds (to re-run the rows a change
affects; the estimators run in full). ``--passes N``: the solver rows at N passes instead of
50 (each row records its passes; the table has a passes column). Sparse LASSO at 50 passes is
degenerate: the paper's Table 2 and ours put DP-CD and DP-SGD at the zero model's 0.7551
there, so the README's table adds ``--full --problems sparse_lasso --passes 5``, where our
DP-CD reproduction is best.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

from ._cli import parse_experiment_args
from ._progress import Phases

__all__ = ["main", "solver_rows", "estimator_rows", "markdown"]

SOLVERS = ("cd", "sgd")
NAMES = {"cd": "DP-CD", "sgd": "DP-SGD"}
DPL_PYTHON = os.environ.get("DPSCO_DIFFPRIVLIB_PYTHON", "/work/venv-dpl/bin/python")
PUBLIC_BOUND = 5.0
#: The problems of the DP-CD reproduction (``--problems`` picks some of them).
PROBLEM_KEYS = ("electricity_raw", "electricity_std", "california_raw", "california_std",
                "sparse_lasso")


def _public_scale(problem, solver):
    """Clip scale from bounds equal to the data's largest values (declared public)."""
    X, y = problem.X, np.asarray(problem.y, dtype=float)
    lam = float(np.max(np.abs(problem.loss.deriv(np.zeros_like(y), y))))
    if solver == "cd":
        return lam * float(np.linalg.norm(np.abs(X).max(axis=0)))
    return lam * float(np.sqrt(np.einsum("ij,ij->i", X, X)).max())


def _public_rms(problem):
    """Root-mean-square row norm sqrt(mean ||x_i||^2) of the data (declared public)."""
    X = problem.X
    sq = X.multiply(X).sum(axis=1) if hasattr(X, "multiply") else np.einsum("ij,ij->i", X, X)
    return math.sqrt(float(np.mean(sq)))


def _label_bound(problem):
    """max |y| (declared public; used by regression losses only)."""
    return float(np.max(np.abs(np.asarray(problem.y, dtype=float))))


def _loss_clip(problem):
    """The default score clip of ``tune_solver`` with the label bound max |y| declared public."""
    y = np.asarray(problem.y, dtype=float)
    from ..problems import _CLASSIFICATION_KINDS
    from ..tuning.score import regression_loss_clip
    from ..tuning.search import CLASSIFICATION_LOSS_CLIP

    if problem.loss.kind in _CLASSIFICATION_KINDS:
        return CLASSIFICATION_LOSS_CLIP * float(np.max(problem.loss.value(np.zeros_like(y), y)))
    return regression_loss_clip(problem.loss, float(np.max(np.abs(y))))


def _run(setting, solver, cand, passes, seed):
    from ..solvers.dp_cd import dp_cd
    from ..solvers.dp_sgd import dp_sgd

    p = setting.problem
    if solver == "cd":
        res = dp_cd(p, epsilon=setting.epsilon, delta=setting.delta, passes=passes,
                    step=cand.step, clip=cand.clip, average=False,
                    neighboring_relation="zero_out", random_state=seed, record_history=False)
    else:
        res = dp_sgd(p, epsilon=setting.epsilon, delta=setting.delta, passes=passes,
                     batch_size=min(256, p.n_samples), step=cand.step, clip=cand.clip,
                     neighboring_relation="zero_out", random_state=seed, record_history=False,
                     n_threads=1)
    return res.coef


def _relative(setting, coef):
    value = setting.problem.objective(coef)
    return (value - setting.optimum) / abs(setting.optimum) if math.isfinite(value) else math.inf


def solver_rows(settings, passes, seeds, progress=print):
    """One row per (problem, solver, method, seed): relative error and the selected values."""
    from ..tuning import grids
    from ..tuning.search import tune_solver

    rows = []
    for setting in settings:
        for solver in SOLVERS:
            scale = _public_scale(setting.problem, solver)
            grid = grids.candidate_grid(setting.problem, solver, scale=scale)
            worst_case = grids.default_hyperparameters(setting.problem, solver, scale=scale)
            # every run here is under zero-out (_run, tune_solver below)
            default = grids.default_hyperparameters(
                setting.problem, solver, rms_row_norm=_public_rms(setting.problem),
                epsilon=setting.epsilon, delta=setting.delta, passes=passes,
                label_bound=_label_bound(setting.problem), neighboring_relation="zero_out")
            rule_kw = dict(rms_row_norm=_public_rms(setting.problem), delta=setting.delta,
                           passes=passes, label_bound=_label_bound(setting.problem))
            # the centred grid at the run's epsilon, for the tuned column (c): it is searched
            # too, so (c) is the best of both grids
            centred = grids.noise_rule_grid(setting.problem, solver, epsilon=setting.epsilon,
                                            neighboring_relation="zero_out", **rule_kw)
            progress(f"{setting.key} {NAMES[solver]}: defaults, private selection, "
                     f"{len(grid)}-point and {len(centred)}-point grids x {len(seeds)} seeds")
            for seed in seeds:
                for method, cand in (("defaults", default), ("worst_case", worst_case)):
                    rows.append(dict(problem=setting.key, solver=NAMES[solver], method=method,
                                     passes=passes, seed=seed, step=cand.step, clip=cand.clip,
                                     error=_relative(setting, _run(setting, solver, cand,
                                                                   passes, 1000 + seed))))
                # (b) the bounds' grid, (b') the grid centred on the rule: the same seeds
                for method, grid_kw in (("private", dict(candidates=grid)),
                                        ("private_centred",
                                         dict(rms_row_norm=rule_kw["rms_row_norm"],
                                              label_bound=rule_kw["label_bound"]))):
                    res = tune_solver(setting.problem, epsilon=setting.epsilon,
                                      delta=setting.delta, solver=solver, passes=passes,
                                      loss_clip=_loss_clip(setting.problem),
                                      neighboring_relation="zero_out", average=False,
                                      random_state=2000 + seed, **grid_kw)
                    assert res.privacy.epsilon <= setting.epsilon
                    rows.append(dict(problem=setting.key, solver=NAMES[solver],
                                     method=method, passes=passes, seed=seed,
                                     step=res.candidate.step, clip=res.candidate.clip,
                                     error=_relative(setting, res.coef),
                                     report_epsilon=res.privacy.epsilon))
            tuned_grid = list(grid) + [c for c in centred if c not in grid]
            errors = np.array([[_relative(setting, _run(setting, solver, c, passes,
                                                         3000 + seed)) for seed in seeds]
                               for c in tuned_grid])
            with np.errstate(invalid="ignore"):
                k = int(np.nanargmin(np.where(np.isfinite(errors), errors, np.inf).mean(1)))
            for seed, err in zip(seeds, errors[k]):
                rows.append(dict(problem=setting.key, solver=NAMES[solver], method="tuned",
                                 passes=passes, seed=seed, step=tuned_grid[k].step,
                                 clip=tuned_grid[k].clip, error=err,
                                 grid="centred" if k >= len(grid) else "bounds"))
    return rows


# -- estimators ------------------------------------------------------------------------------

def _estimator_data():
    from .. import datasets

    Xc, yc = datasets.load_california()
    Xe, ye = datasets.load_electricity()
    return {"california (R^2)": (Xc, yc, "regression"),
            "electricity (accuracy)": (Xe, ye, "classification")}


def _split(X, y, seed):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    n_test = len(y) // 5
    test, train = perm[:n_test], perm[n_test:]
    # Standardization with the training split's statistics (not charged, as in the DP-CD
    # reproduction's standardized problems), then clipped onto the public bounds.
    mu, sd = X[train].mean(0), X[train].std(0)
    sd[sd == 0] = 1.0
    Z = np.clip((X - mu) / sd, -PUBLIC_BOUND, PUBLIC_BOUND)
    return Z[train], y[train], Z[test], y[test]


_DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from diffprivlib.models import LinearRegression, LogisticRegression
spec = json.load(open(sys.argv[1]))
out = []
for job in spec["jobs"]:
    d = np.load(job["path"])
    Xtr, ytr, Xte, yte = d["Xtr"], d["ytr"], d["Xte"], d["yte"]
    B, p = spec["bound"], Xtr.shape[1]
    if job["kind"] == "regression":
        m = LinearRegression(epsilon=spec["epsilon"], bounds_X=(-B, B), bounds_y=(0.0, 5.0),
                             random_state=job["seed"])
    else:
        m = LogisticRegression(epsilon=spec["epsilon"], data_norm=B * p ** 0.5,
                               random_state=job["seed"])
    m.fit(Xtr, ytr)
    out.append(float(m.score(Xte, yte)))
json.dump(out, open(sys.argv[2], "w"))
"""


def _diffprivlib_scores(jobs, epsilon):
    """diffprivlib's held-out scores in its own environment, or None if it cannot run."""
    if not os.path.exists(DPL_PYTHON):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        script, spec, out = (os.path.join(tmp, f) for f in ("dpl.py", "spec.json", "out.json"))
        with open(script, "w") as fh:
            fh.write(_DPL_SCRIPT)
        with open(spec, "w") as fh:
            json.dump({"epsilon": epsilon, "bound": PUBLIC_BOUND, "jobs": jobs}, fh)
        try:
            subprocess.run([DPL_PYTHON, script, spec, out], check=True, capture_output=True,
                           timeout=1800)
            with open(out) as fh:
                return json.load(fh)
        except (OSError, subprocess.SubprocessError):
            return None


def estimator_rows(seeds, passes=20, progress=print, data=None):
    """Held-out scores of our estimators, diffprivlib's and scikit-learn's (non-private)."""
    from sklearn.base import clone
    from sklearn.linear_model import LinearRegression, LogisticRegression

    from ..estimators import DPLasso, DPLogisticRegression

    rows, jobs = [], []
    data = _estimator_data() if data is None else data
    with tempfile.TemporaryDirectory() as tmp:
        for name, (X, y, kind) in data.items():
            progress(f"estimators on {name}: {len(seeds)} seeds")
            for seed in seeds:
                Xtr, ytr, Xte, yte = _split(X, y, seed)
                if kind == "regression":
                    # The label range is public knowledge of the target (0 to 5); the
                    # estimator centres the labels on its midpoint.
                    ours = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-PUBLIC_BOUND, PUBLIC_BOUND),
                                   label_bound=(0.0, 5.0), passes=passes, random_state=seed)
                    ref = LinearRegression()
                else:
                    ours = DPLogisticRegression(epsilon=1.0, passes=passes,
                                                bounds=(-PUBLIC_BOUND, PUBLIC_BOUND),
                                                random_state=seed)
                    ref = LogisticRegression(max_iter=1000)
                ours.fit(Xtr, ytr)
                assert ours.privacy_.epsilon <= 1.0
                score = float(ours.score(Xte, yte))
                rows.append(dict(data=name, model="dpsco-core", seed=seed, score=score,
                                 solver=ours.solver_))
                # The private selection (rms_row_norm=None: the default before session 15)
                # with DP-CD, and with DP-SGD on Poisson batches (zero-out, DP-SGD's amplified
                # guarantee) and shuffled batches (replace-one, DP-CD's relation: sensitivity
                # 2 clip, no amplification); SSP (solver="auto"'s choice without rho).
                for label, kw in [("dpsco-core (cd)", dict(solver="cd")),
                                  ("dpsco-core (sgd)", dict(solver="sgd", sampling="poisson")),
                                  ("dpsco-core (sgd, shuffle)",
                                   dict(solver="sgd", sampling="shuffle")),
                                  ("dpsco-core (ssp)", dict(solver="ssp"))]:
                    # feature_scaling=None: the features are standardized already, and these
                    # columns compare the solvers as before session 20 (the defaults column
                    # shows what the private scales add)
                    other = clone(ours).set_params(rms_row_norm=None, feature_scaling=None,
                                                   **kw).fit(Xtr, ytr)
                    assert other.privacy_.epsilon <= 1.0
                    rows.append(dict(data=name, model=label, seed=seed,
                                     score=float(other.score(Xte, yte))))
                # The noise-level rule instead of a selection, with rho released privately
                # (rms_row_norm="private", the default's choice here, session 15) and declared:
                # the features are standardized, so sqrt(p) is their public root-mean-square
                # row norm (clipping onto the bounds only lowers it).
                for label, solver, rho in [
                        ("dpsco-core (sgd, private rho)", "sgd", "private"),
                        ("dpsco-core (cd, rms)", "cd", math.sqrt(Xtr.shape[1])),
                        ("dpsco-core (sgd, rms)", "sgd", math.sqrt(Xtr.shape[1]))]:
                    rule = clone(ours).set_params(solver=solver, sampling="poisson",
                                                  rms_row_norm=rho, feature_scaling=None)
                    rule.fit(Xtr, ytr)
                    assert rule.privacy_.epsilon <= 1.0 and rule.selection_ is None
                    rows.append(dict(data=name, model=label, seed=seed,
                                     score=float(rule.score(Xte, yte))))
                rows.append(dict(data=name, model="non-private", seed=seed,
                                 score=float(ref.fit(Xtr, ytr).score(Xte, yte))))
                path = os.path.join(tmp, f"{len(jobs)}.npz")
                np.savez(path, Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte)
                jobs.append(dict(path=path, kind=kind, seed=seed, data=name))
        progress("diffprivlib (subprocess)")
        scores = _diffprivlib_scores(jobs, 1.0)
    if scores is not None:
        rows += [dict(data=j["data"], model="diffprivlib", seed=j["seed"], score=s)
                 for j, s in zip(jobs, scores)]
    return rows, scores is not None


# -- output ------------------------------------------------------------------------------------

def _stats(values):
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    return float(np.mean(v)), float(np.std(v))


def _key(row, passes):
    """(problem, solver, passes) of a solver row; rows of older JSON files have no passes."""
    return row["problem"], row["solver"], int(row.get("passes", passes))


def markdown(rows, est_rows, dpl_ok, passes, n_seeds):
    lines = [f"## Relative error (mean ± std over {n_seeds} seeds; zero-out; "
             "epsilon = 1, 10 for Sparse LASSO, including the search for private selection)",
             "", "| problem | solver | passes | (a) defaults (noise-level rule) | (a0) worst-case "
             "rule | (b) private selection, bounds' grid | (b') private selection, grid "
             "centred on the rule | (c) tuned, not private | (a) / (c) | (b) / (c) | "
             "(b') / (c) | (b) < (a); (b') < (a) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted({_key(r, passes) for r in rows}):
        cell = {}
        for method in ("defaults", "worst_case", "private", "private_centred", "tuned"):
            errors = [r["error"] for r in rows if _key(r, passes) == key
                      and r["method"] == method]
            cell[method] = _stats(errors) if errors else None   # older JSON: no worst_case

        def ratio(method):
            tuned = cell["tuned"][0]
            if cell[method] is None:      # older JSON: no centred grid
                return "-"
            return f"{cell[method][0] / tuned:.1f}x" if tuned > 0 else "inf"

        def beats(method):
            if cell[method] is None:
                return "-"
            return "yes" if cell[method][0] < cell["defaults"][0] else "no"

        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(
            "-" if c is None else f"{c[0]:.4f} ± {c[1]:.1e}" for c in cell.values()) +
            f" | {ratio('defaults')} | {ratio('private')} | {ratio('private_centred')} | "
            f"{beats('private')}; {beats('private_centred')} |")
    models = {"dpsco-core": "dpsco-core defaults (solver=\"auto\", rms_row_norm=\"auto\": "
                            "the solver it ran)",
              "dpsco-core (sgd, private rho)": "solver=\"sgd\", rms_row_norm=\"private\"",
              "dpsco-core (cd, rms)": "solver=\"cd\", rms_row_norm=sqrt(p) (declared)",
              "dpsco-core (sgd, rms)": "solver=\"sgd\", rms_row_norm=sqrt(p)",
              "dpsco-core (ssp)": "solver=\"ssp\"",
              "dpsco-core (cd)": "solver=\"cd\", rms_row_norm=None (private selection, "
                                 "replace-one)",
              "dpsco-core (sgd)": "solver=\"sgd\", rms_row_norm=None (Poisson, zero-out)",
              "dpsco-core (sgd, shuffle)": "solver=\"sgd\", sampling=\"shuffle\", "
                                           "rms_row_norm=None (replace-one)"}
    short = "defaults; sgd private rho; cd rms; sgd rms; ssp; cd; sgd; sgd shuffle"
    lines += ["", "## Estimators: held-out score at epsilon = 1 (mean ± std over seeds)", "",
              "| data | " + " | ".join(models.values()) + " | diffprivlib | non-private | "
              f"ours / non-private ({short}) |",
              "|---|" + "---|" * (len(models) + 3)]
    for data in sorted({r["data"] for r in est_rows}):
        cell = {m: _stats([r["score"] for r in est_rows if r["data"] == data
                           and r["model"] == m])
                for m in tuple(models) + ("non-private",)}
        # older JSON files have no rms (or ssp, private rho) rows: their cells print as "-"
        cell = {m: None if np.isnan(c[0]) else c for m, c in cell.items()}
        ran = sorted({r.get("solver", "cd") for r in est_rows if r["data"] == data
                      and r["model"] == "dpsco-core"})
        if dpl_ok:
            dpl = _stats([r["score"] for r in est_rows if r["data"] == data
                          and r["model"] == "diffprivlib"])
            dpl_text = f"{dpl[0]:.4f} ± {dpl[1]:.1e}"
        else:
            dpl_text = "diffprivlib not available"
        ref = cell["non-private"]
        ours = " | ".join("-" if cell[m] is None else f"{cell[m][0]:.4f} ± {cell[m][1]:.1e}" + (
            f" ({', '.join(ran)})" if m == "dpsco-core" else "") for m in models)
        pct = "; ".join("-" if cell[m] is None else f"{100 * cell[m][0] / ref[0]:.1f}%"
                        for m in models)
        lines.append(f"| {data} | {ours} | {dpl_text} | {ref[0]:.4f} ± {ref[1]:.1e} | {pct} |")
    return "\n".join(lines) + "\n"


def _plot(rows, path, passes):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    keys = sorted({_key(r, passes) for r in rows})
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(keys)), 4))
    labels = {"worst_case": "(a0) worst-case rule", "defaults": "(a) noise-level rule",
              "private": "(b) private selection, bounds' grid",
              "private_centred": "(b') private selection, centred grid",
              "tuned": "(c) tuned, not private"}
    colours = {"worst_case": "tab:red", "defaults": "tab:grey", "private": "tab:blue",
               "private_centred": "tab:cyan", "tuned": "tab:green"}
    methods = [m for m in labels if any(r["method"] == m for r in rows)]
    width = 0.8 / len(methods)
    for j, method in enumerate(methods):
        means, stds = zip(*[_stats([r["error"] for r in rows if _key(r, passes) == k
                                    and r["method"] == method]) for k in keys])
        ax.bar(np.arange(len(keys)) + (j - (len(methods) - 1) / 2) * width,
               np.maximum(means, 1e-6), width, yerr=stds, color=colours[method],
               label=labels[method])
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(keys)))
    ax.set_xticklabels([f"{p}\n{s}, {t} passes" for p, s, t in keys], fontsize=7)
    ax.set_ylabel("relative error (F(w) - F*) / F*")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _smoke_settings():
    """Standardized California on 2,000 records (the smoke test's problem)."""
    from .. import datasets
    from ..penalties import L1
    from ..problems import Problem
    from .dpcd import Setting, _lasso_lambda_max

    X, y = datasets.load_california()
    X, y = X[:2000], y[:2000]
    Xs, _ = datasets.standardize(X)
    ys = y - y.mean()
    lam = 0.1 * _lasso_lambda_max(Xs, ys)
    setting = Setting("california_std_2000", "California (balanced), 2,000 records",
                      Problem(Xs, ys, loss="squared", penalty=L1(lam)), 1.0, False,
                      f"lambda = {lam:.4g}")
    setting.optimum = setting.problem.solve().objective
    return [setting]


def main(argv=None):
    from . import dpcd

    parser = argparse.ArgumentParser(prog="python -m dpsco_core reproduce tuning",
                                     description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true",
                      help="the five problems, 10 seeds (estimators 10 seeds)")
    mode.add_argument("--smoke", action="store_true",
                      help="one problem, 2 passes, 1 seed, small estimator data (for tests)")
    parser.add_argument("--out", default="tuning_results", help="output folder")
    parser.add_argument("--problems", default=None,
                        help="comma-separated problem keys to run instead of the mode's "
                             f"(of {', '.join(PROBLEM_KEYS)}; not with --smoke)")
    parser.add_argument("--passes", type=int, default=None,
                        help="passes of the solver rows (default 50; 2 with --smoke)")
    parser.add_argument("--reuse-solver-rows", default=None, metavar="TUNING_JSON",
                        help="take the solver rows (part 1) from this earlier tuning.json "
                             "instead of running them, and run the estimators only (for a "
                             "change that cannot affect part 1; the table says so)")
    args = parse_experiment_args(parser, argv)
    if args.problems is not None:
        chosen = [k for k in args.problems.split(",") if k]
        unknown = sorted(set(chosen) - set(PROBLEM_KEYS))
        if args.smoke or not chosen or unknown:
            parser.error(f"argument --problems: comma-separated keys of "
                         f"{', '.join(PROBLEM_KEYS)}, not with --smoke; got {args.problems!r}.")
    start = time.perf_counter()
    warnings.simplefilter("ignore")          # the reproduction's data-read constants
    if args.smoke:
        keys, passes, seeds, est_seeds = ["california_std"], 2, [0], [0]
    elif args.full:
        keys, passes = None, 50
        seeds, est_seeds = list(range(10)), list(range(10))
    else:
        keys, passes = ["electricity_raw", "electricity_std", "california_raw",
                        "california_std"], 50
        seeds, est_seeds = [0, 1, 2], list(range(5))
    if args.problems is not None:
        keys = chosen
    if args.passes is not None:
        if args.passes < 1:
            parser.error(f"argument --passes: a positive integer; got {args.passes}.")
        passes = args.passes
    phases = Phases(4)
    phases.start("problems (lambda, optimum)")
    if args.reuse_solver_rows is not None:
        with open(args.reuse_solver_rows) as fh:
            rows = json.load(fh)["solvers"]
        seeds = sorted({r["seed"] for r in rows})
        phases.start(f"solvers: reused from {args.reuse_solver_rows}")
    else:
        settings = _smoke_settings() if args.smoke else dpcd.build_settings(keys)
        phases.start("solvers: defaults, private selection, non-private tuning")
        rows = solver_rows(settings, passes, seeds,
                           progress=lambda s: print("  " + s, flush=True))
    phases.start("estimators vs diffprivlib")
    data = None
    if args.smoke:
        rng = np.random.default_rng(0)
        full = _estimator_data()
        data = {k: (X[idx], y[idx], kind) for k, (X, y, kind) in full.items()
                for idx in [rng.choice(len(y), 2000, replace=False)]}
    est_rows, dpl_ok = estimator_rows(est_seeds, passes=5 if args.smoke else 20,
                                      progress=lambda s: print("  " + s, flush=True),
                                      data=data)
    if not dpl_ok:
        print("diffprivlib not available")
    phases.start("table and plot")
    os.makedirs(args.out, exist_ok=True)
    text = markdown(rows, est_rows, dpl_ok, passes, len(seeds))
    if args.reuse_solver_rows is not None:
        text = (f"Solver rows (part 1) reused from `{args.reuse_solver_rows}`; estimators "
                "(part 2) run now.\n\n" + text)
    with open(os.path.join(args.out, "tuning.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(args.out, "tuning.json"), "w") as fh:
        json.dump({"solvers": rows, "estimators": est_rows}, fh, default=float, indent=1)
    _plot(rows, os.path.join(args.out, "tuning.png"), passes)
    print(text)
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
