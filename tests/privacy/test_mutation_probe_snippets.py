"""The mutation probe cannot rot silently: every mutant's original snippet is in the code,
exactly once (``tools/mutation_probe.py`` refuses to run otherwise; this fails first)."""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
if not (ROOT / "tools" / "mutation_probe.py").is_file() or not (ROOT / "dpsco_core").is_dir():
    # Run against an installed wheel (.ci/run): the probe mutates sources, which are not here.
    pytest.skip("the source tree (tools/, dpsco_core/) is not available", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("mutation_probe",
                                               ROOT / "tools" / "mutation_probe.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


def test_the_issue_mutants_are_listed():
    names = {m.name for m in probe.MUTANTS}
    assert {"dp_cd-releases-K", "ttz-sensitivity-RL/n", "mirror-kernel-noise-sigma",
            "smoothness-laplace-halved", "tree-level-shares-seed"} <= names
    assert len(names) == len(probe.MUTANTS)


@pytest.mark.parametrize("mutant", probe.MUTANTS, ids=lambda m: m.name)
def test_snippet_found_exactly_once(mutant):
    text = (ROOT / mutant.path).read_text()
    assert text.count(mutant.original) == 1, mutant.name
    assert mutant.replacement != mutant.original
