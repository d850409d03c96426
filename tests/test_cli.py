"""The command line: the demo runs on the shipped data and its numbers are the accountant's."""

import re

import pytest

from dpsco_core.__main__ import main

# The demo runs the paper's protocol (steps from the data's smoothness constants): the
# PrivacyLeakWarning is expected, and the demo's reports say CONDITIONAL.
pytestmark = pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")


def test_demo_runs_and_reports_calibrated_budget(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for needed in ("California housing (n = 20,433)", "Electricity (n = 45,312)",
                   "noise multiplier", "RDP accountant", "CONDITIONAL ("):
        assert needed in out
    # the calibrated DP-SGD noise multiplier composes back to the target epsilon
    match = re.search(r"gives back epsilon = ([0-9.]+)", out)
    assert match and float(match.group(1)) <= 1.0 + 1e-6


def test_demo_is_reproducible(capsys):
    main(["demo", "--seed", "3"])
    first = capsys.readouterr().out
    main(["demo", "--seed", "3"])
    second = capsys.readouterr().out
    strip = lambda text: re.sub(r"(calibrated)? in [0-9.]+ m?s", "", text)  # noqa: E731
    assert strip(first) == strip(second)


def test_show_config_command(capsys):
    assert main(["show-config"]) == 0
    assert "openmp" in capsys.readouterr().out


def test_reproduce_help_lists_every_paper(capsys):
    from dpsco_core.__main__ import _PAPERS, _REPRODUCTIONS

    assert main(["reproduce", "--help"]) == 0
    out = capsys.readouterr().out
    assert set(_PAPERS) == set(_REPRODUCTIONS)
    for name, line in _PAPERS.items():
        assert f"  {name}" in out and line in out


@pytest.mark.parametrize("paper", ["dpcd", "mlmc", "resque-parallel"])
def test_smoke_is_documented_in_the_help(paper, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", paper, "--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--smoke" in out
    assert re.search(r"--smoke\s+an?\s+(tiny|seconds-long)", out), out


def test_reproduce_shows_progress_for_every_phase(tmp_path, capsys):
    # A tiny run (one problem, one algorithm, the smoke grid): every phase announces itself
    # on stderr with the elapsed time, in order, down to the last file written.
    pytest.importorskip("matplotlib")
    code = main(["reproduce", "dpcd", "--smoke", "--problems", "california_std",
                 "--algorithms", "DP-CD", "--out", str(tmp_path), "--threads", "1"])
    assert code == 0
    err = capsys.readouterr().err
    phases = re.findall(r"^\[phase (\d)/(\d)\] (.*) \(elapsed ([0-9.]+) s\)$", err, re.M)
    assert [int(k) for k, *_ in phases if not _[1].startswith("  ")] == [1, 2, 3, 4]
    assert {total for _, total, *_ in phases} == {"4"}
    elapsed = [float(e) for *_, e in phases]
    assert elapsed == sorted(elapsed)
    steps = [text.strip() for _, _, text, _ in phases if text.startswith("  ")]
    assert "california_std: optimum F* (1/1)" in steps
    # california_std is a balanced problem: figure 2 (balanced) and figure 3 (time), no figure 1
    assert steps[-3:] == ["figure2.png", "figure3.png", "summary.md"]
    assert "work [" in err                      # the progress bar of the sweep
    assert (tmp_path / "summary.md").is_file()
