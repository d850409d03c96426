"""The README's quickstarts run as written, and it opens with the two set-up commands."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
QUICKSTARTS = re.findall(r"## Quickstart[^\n]*\n\n```python\n(.*?)```", README.read_text(), re.S)


def test_there_are_quickstarts():
    assert len(QUICKSTARTS) >= 2


FLOAT = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def _run(title, capsys):
    """Run the quickstart under ``## Quickstart: <title>``; its printed lines and namespace."""
    blocks = re.findall(r"## Quickstart: ([^\n]*)\n\n```python\n(.*?)```", README.read_text(),
                        re.S)
    code = dict(blocks)[title]
    # run as a script is (the Dask quickstart starts its cluster under the __main__ guard)
    namespace = {"__name__": "__main__"}
    exec(compile(code, f"{README}:{title}", "exec"), namespace)
    return capsys.readouterr().out.splitlines(), namespace


def _numbers(line):
    return [float(v) for v in re.findall(FLOAT, line)]


def test_quickstart_dp_cd(capsys):
    lines, ns = _run("private LASSO with DP-CD", capsys)
    assert len(lines) == 3, lines
    # DP-CD at epsilon = 1 on California housing: the paper's relative error is a few percent
    # to tens of percent (this seed: 0.15); 0 would mean no noise, >= 0.5 a broken solver.
    (relative,) = _numbers(lines[0])
    assert 0.0 < relative < 0.5
    # The report leads with the status: public bounds and private smoothness constants make it
    # unconditional; the Laplace release of the constants and the Gaussian updates compose to
    # at most the target 1 (0.93 with this split).
    epsilon = _numbers(lines[1])[0]
    assert 0.5 < epsilon <= 1.0 and "replace" in lines[1].lower()
    assert "unconditional" in lines[1] and "CONDITIONAL" not in lines[1]
    assert ns["model"].privacy_.epsilon <= 1.0
    # The estimator on the raw features with their public bounds: the defaults standardize
    # privately (feature_scaling="auto": 20,433 records, 8 features), release rho (a
    # quantile) and run DP-CD's rule, all three composed; held-in R^2 0.645 to 0.668 over 20
    # seeds (seed 0: 0.66; non-private Lasso on the clipped records 0.65; 0.52 to 0.56
    # before session 20, without the scales). Below 0.55 would mean broken defaults.
    (r2,) = _numbers(lines[2])
    assert 0.55 < r2 < 0.7
    assert ns["model"].solver_ == "cd" and ns["model"].rms_row_norm_ is not None
    assert ns["model"].feature_scales_ is not None
    assert len(ns["model"].privacy_.event.events) == 3


def test_quickstart_mechanisms(capsys):
    lines, ns = _run("mechanisms and accounting", capsys)
    (composed,) = _numbers(lines[0])
    # Ten (1, 1/n^2)-DP Gaussian releases composed by RDP: more than one release costs, and
    # far less than basic composition's 10 (3.38 on this code, about sqrt(10) times one release).
    assert 1.0 < composed < 10.0
    assert ns["z"] > 0 and ns["s"] > 0 and ns["i"] in (0, 1, 2)


def test_quickstart_frank_wolfe(capsys):
    lines, ns = _run("sparse private regression over the l1 ball (Frank-Wolfe)", capsys)
    assert len(lines) == 3, lines
    epsilon, delta = _numbers(lines[0])[:2]
    assert epsilon <= 1.0 and delta <= 1e-5
    match = re.fullmatch(rf"excess loss ({FLOAT}) against ({FLOAT}) for x = 0; (\d+) nonzeros",
                         lines[1])
    assert match, lines[1]
    fw_excess, zero_excess, nonzeros = map(float, match.groups())
    (sgd_excess,) = _numbers(lines[2])
    # Paper 004: in l1 geometry Frank-Wolfe beats the zero vector and DP-SGD with projection
    # at the same budget (whose error grows with sqrt(d)); its output is sparse.
    assert fw_excess < zero_excess and fw_excess < sgd_excess
    assert 1 <= nonzeros <= 50


def test_quickstart_budget(capsys):
    import warnings

    from dpsco_core.exceptions import PrivacyLeakWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)   # public bounds: no data constant
        lines, ns = _run("a privacy budget for a hyperparameter search", capsys)
    assert len(lines) == 6, lines
    # The README's numbers: four epsilon = 1 runs compose (RDP) to 0.878, 1.262, 1.562, 1.819
    # within the budget of 2; the fifth (2.046) is refused and not charged.
    spent = [_numbers(line.split("spent epsilon")[1])[0] for line in lines[:4]]
    assert spent == [0.878, 1.262, 1.562, 1.819]
    assert all(line.endswith(", unconditional") for line in lines[:4]), lines[:4]
    assert lines[4].startswith("step=10.0: refused: privacy budget exceeded") and "2.04628" in lines[4]
    assert "releases=4" in lines[5] and ns["budget"].spent_epsilon <= 2.0
    assert len(ns["candidates"]) == 4 and ns["res"].privacy.non_private_outputs == ()


def test_quickstart_pld(capsys):
    pytest.importorskip("dp_accounting")
    lines, ns = _run('a tighter accountant (`accountant="pld"`)', capsys)
    assert len(lines) == 2, lines
    # the numbers: RDP 3.2417, PLD 3.094 (4.6 % less noise)
    z_rdp, z_pld = _numbers(lines[0])[:2]
    assert round(z_rdp, 4) == 3.2417 and abs(z_pld - 3.094) < 5e-4
    rep = ns["res"].privacy
    assert rep.accountant == "pld" and "pld accountant" in lines[1]
    assert 1.0 - 1e-4 <= rep.epsilon <= 1.0 and rep.unconditional
    assert ns["res"].stats["noise_multiplier"] == ns["z_pld"]

def test_quickstart_dask_runs_as_a_script():
    # Copied into a script, the quickstart must start its LocalCluster under the __main__
    # guard: the workers are spawned processes that import the script, and without it each
    # starts a cluster of its own ("RuntimeError: Nanny failed to start"; review s19).
    code = re.search(r"## Quickstart: running on a Dask cluster\n\n```python\n(.*?)```",
                     README.read_text(), re.S).group(1)
    guard = code.index('if __name__ == "__main__":')
    assert guard < code.index("LocalCluster(")


def test_quickstart_dask(capsys):
    pytest.importorskip("distributed")
    lines, ns = _run("running on a Dask cluster", capsys)
    assert len(lines) == 2, lines
    assert lines[0].startswith("DP-SGD on 3 blocks: objective") and ns["ex"].round_trips >= 20
    assert 0.0 < _numbers(lines[0].split("objective")[1])[0] < 0.69   # below log 2 (w = 0)
    assert ns["res"].privacy.epsilon <= 1.0
    assert lines[1] == "same bits in process: True"


def test_readme_opens_with_the_two_commands():
    text = README.read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    assert 'pip install -e ".[test]"' in block and "python -m dpsco_core demo" in block
    assert "python -m pytest" in block
