"""The command line: the demo runs on the shipped data and its numbers are the accountant's."""

import os
import re
import subprocess
import sys

import pytest

import dpsco_core
import dpsco_core.__main__ as cli
from dpsco_core.__main__ import main
from dpsco_core.exceptions import PrivacyLeakWarning

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


def test_demo_warnings_point_at_the_demo_s_calls(capsys):
    # Review (session 17): the command line counted as library code, so the location of the
    # warnings its calls provoke walked past it: `python -m dpsco_core demo` printed
    # "<frozen runpy>:88: PrivacyLeakWarning", and main(["demo"]) blamed its caller.
    with pytest.warns(PrivacyLeakWarning) as record:
        main(["demo"])
    assert len(record) >= 2 and {r.filename for r in record} == {cli.__file__}
    with open(cli.__file__) as source:
        lines = source.read().splitlines()
    assert all(re.search(r"\bdp_(cd|sgd)\(", lines[r.lineno - 1]) for r in record)


def test_python_m_demo_prints_its_warnings_at_the_demo_s_lines():
    root = os.path.dirname(os.path.dirname(dpsco_core.__file__))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-W", "default", "-m", "dpsco_core", "demo"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    places = re.findall(r"^(.+?):\d+: (\w+Warning): ", proc.stderr, re.M)
    ours = {os.path.realpath(f) for f, name in places if name == "PrivacyLeakWarning"}
    assert ours == {os.path.realpath(cli.__file__)}, proc.stderr
    assert not any("runpy" in f for f, _ in places), proc.stderr


def test_warnings_from_the_reproductions_point_at_them():
    # experiments/ (``reproduce``) calls the library as a user would; a library helper called
    # from elsewhere still points at its caller.
    from dpsco_core.solvers._public_constants import data_constant

    script = os.path.join(os.path.dirname(dpsco_core.__file__), "experiments", "_probe.py")
    namespace = {}
    exec(compile("def call(f, *args):\n    return f(*args)\n", script, "exec"), namespace)
    with pytest.warns(PrivacyLeakWarning) as record:
        namespace["call"](data_constant, "a constant", "a condition")
    assert [r.filename for r in record] == [script]
    with pytest.warns(PrivacyLeakWarning) as record:
        data_constant("a constant", "a condition")
    assert [r.filename for r in record] == [__file__]


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
