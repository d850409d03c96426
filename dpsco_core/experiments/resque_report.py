"""Tables, fitted slopes and figures of ``reproduce resque-parallel`` (see :mod:`.resque`).

Slopes are least-squares fits of log(depth) (or log(queries)) against log(1/ε) at fixed d, and
against log d at fixed ε, over the cells every seed reached; they are printed next to the
exponents of Table I of the paper (L = R = 1, polylogs hidden): query depth ε^(-2/3) d^(1/3) for
Theorems 1-2, ε^(-1) d^(1/4) for randomized smoothing (DBW12), ε^(-2) d^0 for (minibatch) SGD;
total queries ε^(-2) for all of them.
"""

import math

import numpy as np

__all__ = ["slope_rows", "markdown", "plots", "TABLE_I"]

#: method -> (ε exponent, d exponent) of the query depth in Table I; queries: ε^-2.
TABLE_I = {"resque": (2 / 3, 1 / 3), "resque_c1": (2 / 3, 1 / 3), "smoothing": (1.0, 0.25),
           "minibatch": (2.0, 0.0), "sgd": (2.0, 0.0)}
SHORT_LABELS = {"resque": "ReSQue (Thm 2, tuned c)", "resque_c1": "ReSQue, λ = L/r",
                "minibatch": "minibatch SGD",
                "smoothing": "rand. smoothing", "sgd": "SGD (batch 1)"}


def _fit(x, y):
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def slope_rows(sco):
    """Fitted exponents (module docstring), one row per (problem, method, fixed d or ε)."""
    rows = []
    ok = [r for r in sco if math.isfinite(r["depth"])]
    keys = sorted({(r["problem"], r["method"]) for r in ok})
    for problem, method in keys:
        mine = [r for r in ok if r["problem"] == problem and r["method"] == method]
        quantities = ["depth", "queries"] if method.startswith("resque") else ["depth"]
        for d in sorted({r["d"] for r in mine}):
            cells = [r for r in mine if r["d"] == d]
            if len(cells) < 3:
                continue
            for q in quantities:
                rows.append({"part": "slope", "problem": problem, "method": method,
                             "quantity": q, "against": "1/epsilon", "fixed": f"d={d}",
                             "measured": _fit([1 / r["epsilon"] for r in cells],
                                              [r[q] for r in cells]),
                             "table_I": 2.0 if q == "queries" else TABLE_I[method][0],
                             "n_points": len(cells)})
        for eps in sorted({r["epsilon"] for r in mine}, reverse=True):
            cells = [r for r in mine if r["epsilon"] == eps]
            if len(cells) < 2:
                continue
            rows.append({"part": "slope", "problem": problem, "method": method,
                         "quantity": "depth", "against": "d", "fixed": f"epsilon={eps:g}",
                         "measured": _fit([r["d"] for r in cells], [r["depth"] for r in cells]),
                         "table_I": TABLE_I[method][1], "n_points": len(cells)})
    return rows


def _fmt(v, digits=3):
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, str):
        return v
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "not reached"
    if isinstance(v, float) and v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.{digits}g}"


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return lines


def _cells(sco):
    """{(problem, d, eps): {method: row}} in the grid's order."""
    out = {}
    for r in sco:
        out.setdefault((r["problem"], r["d"], r["epsilon"]), {})[r["method"]] = r
    return out


def depth_ratios(sco, variant="resque"):
    """[(problem, d, eps, in_regime, minibatch depth / ReSQue depth)] where both reached, for
    the tuned ReSQue (``"resque"``, against minibatch at its queries) or λ = L/r
    (``"resque_c1"``, against minibatch at ITS queries)."""
    out = []
    for (p, d, eps), m in _cells(sco).items():
        if variant not in m:
            continue
        r = m[variant]
        mb = (m["minibatch"]["depth"] if variant == "resque" and "minibatch" in m
              else r.get("minibatch_depth", float("nan")))
        if math.isfinite(r["depth"]) and math.isfinite(mb):
            out.append((p, d, eps, r["in_regime"], mb / r["depth"]))
    return out


def markdown(est, sco, slopes, grid="default", seconds=float("nan")):
    """The report: estimator table, SCO table per problem, slopes, the target's verdict."""
    lines = [f"# ReSQue parallel SCO ({grid} grid, {seconds / 60:.1f} min)", "",
             f"## 1. Estimator (d = 20, N = {est[0]['n_samples']:,}, ρ = 0.1)", ""]
    lines += _table(["‖v‖/ρ", "bias: max z-score", "E‖ReSQue‖² (linear f, L = 1)", "± se",
                     "L² exp(‖v‖²/ρ²)", "ESS fraction", "exp(-‖v‖²/ρ²)"],
                    [[r["v_over_rho"], r["bias_max_z"], r["second_moment"],
                      r["second_moment_se"], r["predicted_second_moment"], r["ess_fraction"],
                      r["predicted_ess_fraction"]] for r in est])
    lines += ["", "## 2. Query depth to reach f(x) - f* <= ε (median of the seeds)", "",
              "Depth = sequential rounds of oracle queries. minibatch SGD and randomized "
              "smoothing get the same total queries as ReSQue; SGD's depth is its number of "
              "queries. λ factor: ReSQue's constant line search λ = c L/r (c = 1 keeps the prox "
              "step in the ball).", ""]
    cells = _cells(sco)
    nan = float("nan")
    for problem in dict.fromkeys(p for p, _, _ in cells):
        lines += [f"### {problem}", ""]
        body = []
        for (p, d, eps), m in cells.items():
            if p != problem or "resque" not in m:
                continue
            rq, c1 = m["resque"], m.get("resque_c1", {})
            mb, rs, sg = (m.get(k, {}) for k in ("minibatch", "smoothing", "sgd"))
            body.append([d, eps, rq["in_regime"], c1.get("depth", nan),
                         c1.get("minibatch_depth", nan) / c1.get("depth", nan),
                         rq["depth"], rq["param"], rq["queries"], rq["comp_depth"],
                         mb.get("depth", nan), mb.get("depth", nan) / rq["depth"],
                         rs.get("depth", "not run"), sg.get("depth", nan)])
        lines += _table(["d", "ε", "in [1/d, d^-1/4]", "ReSQue depth, c = 1",
                         "minibatch / ReSQue, c = 1", "ReSQue depth, best c", "c",
                         "queries", "comp. depth", "minibatch depth", "minibatch / ReSQue",
                         "smoothing depth", "SGD depth"], body)
        lines.append("")
    lines += ["## 3. Fitted exponents against Table I", ""]
    lines += _table(["problem", "method", "quantity", "against", "at", "measured", "Table I",
                     "points"],
                    [[r["problem"], r["method"], r["quantity"], r["against"], r["fixed"],
                      r["measured"], r["table_I"], r["n_points"]] for r in slopes])
    lines += ["", "## 4. Target: fewer rounds than minibatch SGD in the regime", ""]
    for variant, label in (("resque_c1", "λ = L/r (c = 1)"), ("resque", "best c")):
        inside = [x for x in depth_ratios(sco, variant) if x[3]]
        wins = [x for x in inside if x[4] > 1.0]
        lines.append(f"ReSQue with {label}: fewer rounds than minibatch SGD at the same total "
                     f"queries in {len(wins)} of {len(inside)} cells with ε in [1/d, d^-1/4]; "
                     "minibatch / ReSQue depth: " + ", ".join(
                         f"{p} d={d} ε={eps:g}: {r:.2f}" for p, d, eps, _, r in inside) + ".")
        lines.append("")
    return "\n".join(lines)


def plots(est, sco, slopes, out):
    """``estimator.png`` and ``depth.png`` (skipped without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("matplotlib is not installed: figures skipped (pip install matplotlib).")
        return
    q = np.array([r["v_over_rho"] for r in est])
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
    qq = np.linspace(0, q.max(), 100)
    a1.semilogy(qq, np.exp(qq ** 2), "k-", lw=1, label="L² exp(‖v‖²/ρ²)")
    a1.errorbar(q, [r["second_moment"] for r in est],
                yerr=[2 * r["second_moment_se"] for r in est], fmt="o", ms=4,
                label="Monte Carlo (±2 se)")
    a1.set_xlabel("‖x − x̄‖ / ρ")
    a1.set_title("second moment of ReSQue (linear f)", fontsize=9)
    a1.legend(fontsize=7)
    a2.semilogy(qq, np.exp(-qq ** 2), "k-", lw=1, label="exp(−‖v‖²/ρ²)")
    a2.plot(q, [r["ess_fraction"] for r in est], "o", ms=4, label="(Σw)²/(N Σw²)")
    a2.set_xlabel("‖x − x̄‖ / ρ")
    a2.set_title("effective sample size fraction", fontsize=9)
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "estimator.png", dpi=80)
    plt.close(fig)

    nem = [r for r in sco if r["problem"] == "nemirovski" and math.isfinite(r["depth"])]
    if not nem:
        return
    ds = sorted({r["d"] for r in nem})
    fig, axes = plt.subplots(1, len(ds), figsize=(3.4 * len(ds), 3.4), squeeze=False)
    colors = {"resque": "C0", "resque_c1": "C4", "minibatch": "C1", "smoothing": "C2",
              "sgd": "C3"}
    for ax, d in zip(axes[0], ds):
        for method, color in colors.items():
            pts = sorted((1 / r["epsilon"], r["depth"]) for r in nem
                         if r["d"] == d and r["method"] == method)
            if not pts:
                continue
            x, y = zip(*pts)
            ax.loglog(x, y, "o-", color=color, ms=4, label=SHORT_LABELS[method])
            fit = [s for s in slopes if s["problem"] == "nemirovski" and s["method"] == method
                   and s["fixed"] == f"d={d}" and s["quantity"] == "depth"]
            if fit:
                ax.annotate(f"{fit[0]['measured']:.2f}", (x[-1], y[-1]), color=color,
                            fontsize=7, xytext=(3, 0), textcoords="offset points")
        xl = ax.get_xlim()
        lo, hi = max(d ** 0.25, xl[0]), min(float(d), xl[1])
        if lo < hi:
            ax.axvspan(lo, hi, color="0.92", zorder=0)
        ax.set_xlim(xl[0], xl[1] * 1.3)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("1/ε   (grey: ε in [1/d, d^-1/4])", fontsize=8)
        ax.set_title(f"Nemirovski, d = {d}", fontsize=9)
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.suptitle("query depth to reach ε; numbers: fitted slopes\n(Table I: ReSQue 2/3, "
                 "smoothing 1, SGD 2)", fontsize=8)
    axes[0][0].set_ylabel("query depth (rounds)")
    fig.tight_layout()
    fig.savefig(out / "depth.png", dpi=80)
    plt.close(fig)
