# Issue 19, session 16 (diagnosis.md, section 17): the private rho's exponential mechanism
# with other base measures or targets, against the uniform base (the default), held-out score
# over SEEDS splits; "declared" is the training split's true rms row norm. Variants:
#   u      uniform base (the default);
#   1.5    log-normal base centred at the grid's geometric middle R/8, sd 1.5 octaves;
#   p1     power base (g / R)^1 (mass towards R: a low rho costs DP-CD more than a high one);
#   s1     the target rank shifted up by 2 log(G) / epsilon_q (capped at n).
# Data: std (the tasks' standardized features, bounds +-5), minmax (mapped onto [0, 1],
# mean 0.5, spread 0.1; bounds (0, 1)), rownorm (rows normalized; row_norm=1).
#   PYTHONPATH=. python docs/tuning/private_rms_base_measure.py \
#       diabetes,iris,wine,breast 0.25,1 u,1.5,p1,s1 10 rownorm
import math, sys, types, warnings
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
import dpsco_core.mechanisms as mech
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from _estimator_tasks import held_out_tasks
T = held_out_tasks()
orig = mech.grid_quantile
SD = [None]
def patched(values, grid, *, q, n_public, epsilon, random_state=None, budget=None, neighboring_relation=None):
    if SD[0] is None:
        return orig(values, grid, q=q, n_public=n_public, epsilon=epsilon, random_state=random_state,
                    budget=budget, neighboring_relation=neighboring_relation)
    from dpsco_core._random import check_random_state
    grid = np.asarray(grid, float)
    u = -np.abs(mech._grid_counts(np.asarray(values, float), grid) - q * n_public)
    mid = math.sqrt(grid[0] * grid[-1])
    kind = SD[0]
    if isinstance(kind, str) and kind.startswith("p"):      # power prior (g / R)^kappa
        lw = epsilon * u / 2 + float(kind[1:]) * np.log(grid / grid[-1])
    elif isinstance(kind, str) and kind.startswith("s"):    # target shifted up by c * 2 log(G) / eps
        c = float(kind[1:])
        target = min(float(n_public), q * n_public + c * 2 * math.log(len(grid)) / epsilon)
        u = -np.abs(mech._grid_counts(np.asarray(values, float), grid) - target)
        lw = epsilon * u / 2
    else:
        lw = epsilon * u / 2 - 0.5 * (np.log2(grid / mid) / SD[0]) ** 2
    w = np.exp(lw - lw.max()); w /= w.sum()
    ss = check_random_state(random_state)
    rng = np.random.default_rng(ss)
    return float(grid[rng.choice(len(grid), p=w)])
mech.grid_quantile = patched
names = sys.argv[1].split(",")
epss = [float(e) for e in sys.argv[2].split(",")]
sds = [None if s == "u" else (s if s[0] in "ps" else float(s)) for s in sys.argv[3].split(",")]
seeds = int(sys.argv[4]) if len(sys.argv) > 4 else 10
variant = sys.argv[5] if len(sys.argv) > 5 else "std"
for name in names:
    X, y, kind, lb, split = T[name]
    pub = dict(bounds=(-5, 5))
    def transform(Z):
        # after the split's standardization and clipping onto [-5, 5] (session 16: before it,
        # the split undid the transform)
        if variant == "minmax":
            return (Z + 5.0) / 10.0
        if variant == "rownorm":
            return Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)
        return Z
    if variant == "minmax":
        pub = dict(bounds=(0, 1))
    elif variant == "rownorm":
        pub = dict(row_norm=1.0)
    for eps in epss:
        for solver in ("cd", "sgd"):
            cells = []
            for sd in sds + ["declared"]:
                SD[0] = None if sd == "declared" else sd
                sc = []
                for seed in range(seeds):
                    Xtr, ytr, Xte, yte = split(X, y, seed)
                    Xtr, Xte = transform(Xtr), transform(Xte)
                    rho = float(np.sqrt(np.mean(np.sum(Xtr**2, 1)))) if sd == "declared" else "private"
                    kw = dict(epsilon=eps, random_state=seed, solver=solver, rms_row_norm=rho, **pub)
                    m = (DPLasso(alpha=1e-4, label_bound=lb, **kw) if kind == "r"
                         else DPLogisticRegression(classes=np.unique(y), **kw))
                    sc.append(m.fit(Xtr, ytr).score(Xte, yte))
                cells.append(f"{'uniform' if sd is None else sd} {np.mean(sc):.3f}±{np.std(sc)/math.sqrt(seeds):.3f}")
            print(f"{name} eps {eps} {solver}: " + "  ".join(cells), flush=True)
