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
