"""A returned result holds only what its privacy report covers (issue 15, section 3): stats.

Every solver runs on a dataset D and its worst neighbour D' (an extreme outlier record added,
replacing record 0, or record 0 zeroed: ``dpsco_core.audit.neighbour_cases.worst_neighbour``)
with the same seed, so that the noise is the same and the two runs differ only through the
data. With public constants and ``record_history=False``, a statistic may differ between the
two runs only if it is a function of the privatized releases (:data:`RELEASED`); a
data-derived diagnostic appears only on request (``record_history=True`` / ``evaluate=True``)
and is then listed in ``privacy.non_private_outputs`` (``dpsco_core.result.NON_PRIVATE_STATS``).
"""

import math
import warnings

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.audit.neighbour_cases import worst_neighbour
from dpsco_core.result import NON_PRIVATE_STATS

#: Stats that are functions of the privatized releases (post-processing, covered by the
#: report), and the wall time, which the caller observes by timing the call anyway.
RELEASED = {"time", "x_last", "z_last", "x_average", "iterates"}
ARO = "add_or_remove_one"
N, P = 64, 4


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (N, P)) / math.sqrt(P)
    y = X @ np.full(P, 0.3) + 0.05 * rng.standard_normal(N)
    return X, y


def _pair(relation, loss="squared"):
    X, y = _data()
    X1, y1 = worst_neighbour(X, y, relation, np.full(P, 50.0), -50.0)
    return dp.Problem(X, y, loss=loss), dp.Problem(X1, y1, loss=loss)


def _dp_cd(prob, relation, history, **kw):
    return dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, smoothness=np.ones(P),
                    neighboring_relation=relation, public_n=N if relation == ARO else None,
                    random_state=1, record_history=history, **kw)


def _dp_sgd(prob, relation, history, sampling="poisson"):
    return dp.dp_sgd(prob, epsilon=1.0, delta=1e-5, passes=2, batch_size=8, sampling=sampling,
                     smoothness=1.0, neighboring_relation=relation,
                     public_n=N if relation == ARO else None, random_state=1,
                     record_history=history)


def _single_epoch(name):
    def run(prob, relation, history):
        return getattr(dp.solvers, name)(prob, epsilon=1.0, delta=1e-5, beta=1.0, batch_size=8,
                                         clip=1.0, radius=5.0, neighboring_relation=relation,
                                         random_state=1, record_history=history)
    return run


def _mirror(name):
    def run(prob, relation, history):
        kw = dict(epsilon=1.0, delta=1e-5, geometry=2.0, radius=5.0, clip=1.0,
                  neighboring_relation=relation, random_state=1)
        if relation == ARO:
            kw["public_n"] = N
        if name == "noisy_mirror_descent":
            return dp.solvers.noisy_mirror_descent(prob, batch_size=8, steps=5, **kw)
        if name == "localized_mirror_descent":
            return dp.solvers.localized_mirror_descent(prob, n_min=8, max_steps=5, **kw)
        return dp.solvers.strongly_convex_reduction(prob, max_steps=5, n_min=4, **kw)
    return run


def _projected(prob, relation, history):
    return dp.solvers.projected_dp_sgd_l1(prob, epsilon=1.0, delta=1e-5, batch_size=8,
                                          neighboring_relation=relation,
                                          public_n=N if relation == ARO else None,
                                          random_state=1)


def _vr_fw(prob, relation, history):
    return dp.solvers.vr_frank_wolfe(prob, epsilon=1.0, batch=16, n_phases=1, random_state=1,
                                     record_history=history)


def _ttz(prob, relation, history):
    return dp.solvers.ttz_frank_wolfe(prob, epsilon=1.0, n_iter=3, random_state=1)


def _mlmc(prob, relation, history):
    return dp.mlmc.mlmc_dp_sco(prob, epsilon=1.0, delta=1e-5, radius=1.0, lipschitz=1.0,
                               n_phases=2, neighboring_relation=relation, random_state=1,
                               record_history=history)


def _grid(prob, relation, history):
    return dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-5, steps=[0.5, 1.0], clips=[1.0],
                         passes=1, smoothness=np.ones(P), neighboring_relation=relation,
                         public_n=N if relation == ARO else None, random_state=1,
                         evaluate=history)


#: (name, run(problem, relation, history), relations, loss, extra stats that are releases)
CASES = [
    ("dp_cd", _dp_cd, ("replace_one", "zero_out", ARO), "squared", ()),
    ("dp_cd private smoothness",
     lambda prob, rel, h: dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2,
                                   smoothness="private", smoothness_bounds=np.full(P, 60.0),
                                   neighboring_relation=rel, random_state=1, record_history=h),
     ("replace_one",), "squared", ("smoothness", "steps", "clips", "noise_scales")),
    ("dp_cd_grid", _grid, ("replace_one", ARO), "squared", ()),
    ("dp_sgd poisson", _dp_sgd, ("zero_out", ARO), "squared", ()),
    ("dp_sgd shuffle", lambda prob, rel, h: _dp_sgd(prob, rel, h, sampling="shuffle"),
     ("replace_one",), "squared", ()),
    ("dp_srgd", _single_epoch("dp_srgd"), ("zero_out", "replace_one"), "squared", ()),
    ("dp_srg", _single_epoch("dp_srg"), ("zero_out",), "squared", ()),
    ("accelerated_dp_sgd", _single_epoch("accelerated_dp_sgd"), ("replace_one",), "squared", ()),
    ("dp_sgd_single_epoch", _single_epoch("dp_sgd_single_epoch"), ("zero_out",), "squared", ()),
    ("noisy_mirror_descent", _mirror("noisy_mirror_descent"), ("zero_out", ARO), "squared", ()),
    ("localized_mirror_descent", _mirror("localized_mirror_descent"), ("zero_out", ARO),
     "squared", ()),
    ("strongly_convex_reduction", _mirror("strongly_convex_reduction"), ("zero_out", ARO),
     "squared", ()),
    ("projected_dp_sgd_l1", _projected, ("zero_out", ARO), "squared", ()),
    ("vr_frank_wolfe", _vr_fw, ("replace_one",), "half_squared", ()),
    ("ttz_frank_wolfe", _ttz, ("replace_one",), "half_squared", ()),
    ("mlmc_dp_sco", _mlmc, ("replace_one", "zero_out"), "squared", ()),
]
PARAMS = [pytest.param(run, rel, loss, released, id=f"{name}-{rel}")
          for name, run, rels, loss, released in CASES for rel in rels]


def _differences(a, b, path=""):
    """Paths at which two stats structures differ (dicts by key, sequences by position)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}".lstrip(".") for k in set(a) ^ set(b)]
        for k in set(a) & set(b):
            out += _differences(a[k], b[k], f"{path}.{k}".lstrip("."))
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [path]
        return [d for x, y in zip(a, b) for d in _differences(x, y, path)]
    if isinstance(a, (np.ndarray, float, int, np.floating, np.integer)):
        try:
            same = np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
        except TypeError:
            same = False
        return [] if same else [path]
    return [] if a == b else [path]


def _run(run, prob, relation, history):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(prob, relation, history)


def _keys(stats):
    from dpsco_core.result import _stat_keys
    return _stat_keys(stats)


@pytest.mark.parametrize("run, relation, loss, released", PARAMS)
def test_stats_differ_between_neighbours_only_through_releases(run, relation, loss, released):
    D, D1 = _pair(relation, loss)
    res, res1 = _run(run, D, relation, False), _run(run, D1, relation, False)
    for r in (res, res1):
        assert not _keys(r.stats) & set(NON_PRIVATE_STATS), "a diagnostic without request"
        assert not set(r.privacy.non_private_outputs) & set(NON_PRIVATE_STATS.values())
    leaves = {path.split(".")[-1] for path in _differences(res.stats, res1.stats)}
    unexplained = leaves - RELEASED - set(released)
    assert not unexplained, (f"stats {sorted(unexplained)} differ between neighbouring datasets "
                             "but are neither releases nor listed as not private")


@pytest.mark.parametrize("run, relation, loss, released", PARAMS)
def test_requested_diagnostics_are_listed_as_not_private(run, relation, loss, released):
    D, _ = _pair(relation, loss)
    res = _run(run, D, relation, True)
    for key in _keys(res.stats) & set(NON_PRIVATE_STATS):
        assert NON_PRIVATE_STATS[key] in res.privacy.non_private_outputs, key


def test_an_estimator_without_diagnostics_lists_nothing():
    X, y = _data()
    est = dp.estimators.DPLasso(alpha=0.01, epsilon=1.0, delta=1e-5, random_state=0,
                                bounds=(np.full(P, -1.0), np.full(P, 1.0)), label_bound=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.privacy_.non_private_outputs == ()
