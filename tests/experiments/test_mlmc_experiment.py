"""Smoke test of ``python -m dpsco_core reproduce mlmc`` (tiny grid): every output file is
written and well-formed; the exact pieces (minimizers, schedule makespans) are checked exactly."""

import csv

import numpy as np
import pytest

from dpsco_core.__main__ import main
from dpsco_core.experiments import mlmc

OUTPUTS_CSV = {"mlmc_levels.csv": "agreement_z", "mlmc_moreau.csv": "rmse",
               "mlmc_speedup.csv": "speedup", "mlmc_dp.csv": "excess",
               "mlmc_paper_constants.csv": "error"}
PLOTS = ("mlmc_bias.png", "mlmc_variance.png", "mlmc_cost.png", "mlmc_tail.png",
         "mlmc_moreau.png", "mlmc_speedup.png", "mlmc_dp.png")


def test_median_minimizer_is_exact():
    b = np.array([-1.0, 0.3, 2.0, 5.0])
    # interior root: 2 of 4 below x in (0.3, 2): h(x) = 0 + (x - 1) -> x* = 1
    assert mlmc.median_minimizer(b, 1.0, 1.0) == pytest.approx(1.0, abs=1e-14)
    # root on a data point: h jumps from -0.08 to +0.42 at b = 2 (mu small, c far right)
    assert mlmc.median_minimizer(b, 0.01, 10.0) == pytest.approx(2.0, abs=1e-14)


def test_simulated_makespans():
    spans = mlmc.simulated_makespans([5.0, 1.0, 1.0, 1.0, 1.0, 1.0], 2)
    assert spans == {"static": 7.0, "dynamic": 5.0, "lpt": 5.0}
    spans = mlmc.simulated_makespans([1.0, 1.0, 2.0, 2.0], 2)
    assert spans["lpt"] == 3.0 and spans["dynamic"] == 3.0 and spans["static"] == 4.0


# Its DP-SGD baseline takes beta from the data: the PrivacyLeakWarning is expected.
@pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")
def test_reproduce_mlmc_smoke(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "mlmc"
    assert main(["reproduce", "mlmc", "--smoke", "--out", str(out), "--threads", "2"]) == 0
    text = capsys.readouterr().out
    assert "Where the estimator is less efficient than SGD" in text
    md = (out / "mlmc.md").read_text()
    for section in ("## E1", "## E2", "## E4", "## E5", "## E6", "## E9", "## E10", "## E6b",
                    "## E7", "## E8", "## Min-max", "## Algorithm 7"):
        assert section in md, section
    for name, column in OUTPUTS_CSV.items():
        with open(out / name) as fh:
            rows = list(csv.DictReader(fh))
        assert rows and all(np.isfinite(float(r[column])) for r in rows), name
    with open(out / "mlmc_levels.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["problem"], r["levels"]) for r in rows} == {
        ("kink", "epoch"), ("kink", "paper"), ("median", "epoch"), ("median", "paper")}
    for r in rows:
        # the exact expected cost is the implementation's; max cost never above worst case
        assert int(r["max_cost"]) <= int(r["worst_cost"])
        assert float(r["mlmc_bias"]) >= 0.0 and float(r["var"]) > 0.0
        # Note 001 T6/E1: the MLMC mean is EpochSGD's mean at the top level (agreement within
        # 4.5 combined standard errors), so its bias obeys Proposition 3's bias bound up to
        # its own noise; with the paper's levels the variance obeys the log2(T) bound (E2).
        assert float(r["agreement_z"]) <= 4.5, r
        assert float(r["mlmc_bias"]) <= float(r["bias_bound"]) + 4 * float(r["mlmc_bias_se"])
        if r["levels"] == "paper":
            assert float(r["var"]) <= float(r["var_bound"]), r
    with open(out / "mlmc_dp.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["method"] for r in rows} == set(mlmc.DP_METHODS)
    for r in rows:
        # the accountant's epsilon never exceeds the target (inf rows are non-private)
        assert float(r["report_epsilon"]) <= float(r["epsilon"]) + 1e-9
        assert r["relation"] == ("replace_one" if r["method"] == "dp_sgd_shuffle" else
                                 "zero_out") or r["epsilon"] == "inf"
    with open(out / "mlmc_speedup.csv") as fh:
        assert all(r["bitwise_equal"] == "True" for r in csv.DictReader(fh))
    for name in PLOTS:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
