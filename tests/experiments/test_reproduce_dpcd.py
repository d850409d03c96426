"""Smoke test of ``python -m dpsco_core reproduce dpcd``: every output file written, well-formed."""

import csv

import pytest

from dpsco_core.__main__ import main

# The paper's protocol takes the smoothness constants from the data: the PrivacyLeakWarning
# is expected.
pytestmark = pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")


def test_reproduce_dpcd_smoke(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "dpcd"
    code = main(["reproduce", "dpcd", "--smoke", "--out", str(out), "--threads", "2",
                 "--problems", "california_raw", "electricity_std"])
    assert code == 0
    text = capsys.readouterr().out
    assert "NON-PRIVATE objective" in text and "lambda = 0.1 lambda_max" in text
    for name in ("runs.csv", "table2.md", "table3.md", "summary.md", "figure1.png",
                 "figure2.png", "figure3.png"):
        assert (out / name).is_file(), name
    with open(out / "runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    algorithms = {(r["problem"], r["algorithm"]) for r in rows}
    assert algorithms == {("california_raw", "DP-CD"), ("california_raw", "DP-CD-replace-one"),
                          ("california_raw", "DP-CD-priv-cst"), ("california_raw", "DP-SGD"),
                          ("electricity_std", "DP-CD"), ("electricity_std", "DP-CD-replace-one"),
                          ("electricity_std", "DP-SGD")}
    assert all(float(r["relative_error"]) >= -1e-9 for r in rows)
    table2 = (out / "table2.md").read_text()
    assert "| California (imbalanced), ε=1 | DP-CD |" in table2 and "0.1708" in table2
    assert "| California (imbalanced), ε=1 | DP-CD-replace-one |" in table2
    # the experiment states each algorithm's neighbouring relation
    assert "DP-CD zero-out" in table2 and "DP-CD-replace-one replace-one" in table2
    assert "DP-SGD zero-out" in table2
    assert "(paper)" in (out / "table3.md").read_text()
    for name in ("figure1.png", "figure2.png", "figure3.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # Table 3 alone, from the finished run's selected configurations
    (out / "table3.md").unlink()
    assert main(["reproduce", "dpcd", "--smoke", "--table3-from", str(out)]) == 0
    table3 = (out / "table3.md").read_text()
    assert "| California (imbalanced) | DP-CD |" in table3 and "(paper)" in table3


def test_reproduce_dpcd_theorem_schedule_smoke(tmp_path, capsys, monkeypatch):
    """``--algorithms DP-CD-theorem``: no grid, dp_cd called with Theorem 3.3's (T, K), steps
    1/M_j (step=1), clips L_j and the theorem's noise under replace-one; the public R_M bound
    holds (it is at least the oracle R_M from w*)."""
    import importlib

    import numpy as np

    from dpsco_core.experiments import dpcd

    # the module, not the function that dpsco_core.solvers re-exports under the same name
    dp_cd_module = importlib.import_module("dpsco_core.solvers.dp_cd")

    calls = []
    original = dp_cd_module.dp_cd

    def recording(problem, **kwargs):
        calls.append(kwargs)
        return original(problem, **kwargs)

    monkeypatch.setattr(dp_cd_module, "dp_cd", recording)
    out = tmp_path / "dpcd"
    assert main(["reproduce", "dpcd", "--smoke", "--out", str(out), "--threads", "1",
                 "--problems", "california_raw", "--algorithms", "DP-CD-theorem"]) == 0
    assert "DP-CD-theorem: R_M" in capsys.readouterr().out
    with open(out / "runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["algorithm"], r["phase"]) for r in rows} == {("DP-CD-theorem", "theorem")}
    assert len(rows) == dpcd.make_grid("smoke").final_seeds == len(calls)
    assert "| California (imbalanced), ε=1 | DP-CD-theorem |" in (out / "theorem.md").read_text()

    setting, = dpcd.build_settings(["california_raw"])
    const = dpcd.theorem_constants(setting)
    oracle = dpcd.theorem_constants(setting, oracle=True)
    assert const["R"] >= oracle["R"]
    T, K = dp_cd_module.dp_cd_theorem_schedule(
        "convex", n_samples=setting.problem.n_samples, epsilon=setting.epsilon,
        delta=setting.delta, lipschitz=const["L"], smoothness=const["M"], distance=const["R"])
    assert const["L"].shape == const["M"].shape == (setting.problem.n_features,)
    for kw in calls:
        assert (kw["n_outer"], kw["n_inner"]) == (T, K)
        assert kw["step"] == 1.0 and kw["average"] and kw["calibration"] == "theorem"
        np.testing.assert_array_equal(kw["clip"], const["L"])
        assert kw["neighboring_relation"] == "replace_one"
        assert (kw["epsilon"], kw["delta"]) == (setting.epsilon, setting.delta)
