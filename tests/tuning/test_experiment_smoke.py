"""``python -m dpsco_core reproduce tuning --smoke``: every output is written (table, plot,
JSON), the private selections stay within their epsilon, and the table has the five methods
(two default rules, private selection on two grids, tuned) and the estimators' rows
(diffprivlib's column says when it is not available)."""

import json

import pytest

from dpsco_core.experiments import tuning


def test_smoke_run(tmp_path, capsys):
    pytest.importorskip("sklearn")
    assert tuning.main(["--smoke", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "tuning.md").read_text()
    assert "(b) private selection" in text and "california_std_2000 | DP-CD | 2 |" in text
    assert "(a0) worst-case rule" in text and "(a) / (c)" in text
    assert "electricity (accuracy)" in text
    data = json.loads((tmp_path / "tuning.json").read_text())
    methods = {r["method"] for r in data["solvers"]}
    assert methods == {"defaults", "worst_case", "private", "private_centred", "tuned"}
    assert "(b') private selection, grid centred on the rule" in text
    assert {r["passes"] for r in data["solvers"]} == {2}
    assert all(r["report_epsilon"] <= 1.0 for r in data["solvers"]
               if r["method"].startswith("private"))
    assert {r["grid"] for r in data["solvers"] if r["method"] == "tuned"} <= {"bounds",
                                                                              "centred"}
    models = {r["model"] for r in data["estimators"]}
    assert {"dpsco-core", "non-private", "dpsco-core (cd, rms)", "dpsco-core (sgd, rms)"} <= models
    assert 'solver="cd", rms_row_norm=sqrt(p)' in text
    if "diffprivlib" not in models:
        assert "diffprivlib not available" in text
    assert (tmp_path / "tuning.png").exists() or "matplotlib" not in str(models)


def test_table_of_an_older_json_without_the_worst_case_rows():
    rows = [dict(problem="p", solver="DP-CD", method=m, passes=50, seed=0, error=e)
            for m, e in (("defaults", 0.2), ("private", 0.1), ("tuned", 0.05))]
    text = tuning.markdown(rows, [], False, 50, 1)
    assert "| p | DP-CD | 50 | 0.2000 ± 0.0e+00 | - | 0.1000 ± 0.0e+00 | - | " \
           "0.0500 ± 0.0e+00 | 4.0x | 2.0x | - | yes; - |" in text


def test_estimator_table_of_an_older_json_without_the_rms_columns():
    est = [dict(data="d", model=m, seed=0, score=0.5, solver="ssp")
           for m in ("dpsco-core", "dpsco-core (cd)", "dpsco-core (sgd)",
                     "dpsco-core (sgd, shuffle)", "non-private")]
    text = tuning.markdown([], est, False, 50, 1)
    assert "| d | 0.5000 ± 0.0e+00 (ssp) | - | - | - | - | 0.5000 ± 0.0e+00 | " \
           "0.5000 ± 0.0e+00 | 0.5000 ± 0.0e+00 | diffprivlib not available | " \
           "0.5000 ± 0.0e+00 | 100.0%; -; -; -; -; 100.0%; 100.0%; 100.0% |" in text
