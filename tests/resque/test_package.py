"""The ReSQue package layout: one package, re-exported names, deprecated aliases."""

import importlib
import sys

import pytest

import dpsco_core
import dpsco_core.resque as resque


def test_public_names_and_the_function_wins_over_its_module():
    from dpsco_core.resque.parallel_sco import parallel_sco
    assert resque.parallel_sco is parallel_sco is dpsco_core.parallel_sco
    for name in ("ReSQueBatch", "GLMReSQueBatch", "smoothed_hinge", "resque_erm_ball",
                 "resque_private_erm", "resque_private_sco", "aggregate", "LipschitzGLM",
                 "noisy_projected_gd", "phased_erm"):
        assert name in resque.__all__ and callable(getattr(resque, name))


@pytest.mark.parametrize("old, new", [("dpsco_core.smoothing", "dpsco_core.resque.smoothing"),
                                      ("dpsco_core.parallel.sco",
                                       "dpsco_core.resque.parallel_sco")])
def test_deprecated_aliases(monkeypatch, old, new):
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match="moved to " + new.replace(".", r"\.")):
        mod = importlib.import_module(old)
    target = importlib.import_module(new)
    assert mod.__all__ == target.__all__
    for name in target.__all__:
        assert getattr(mod, name) is getattr(target, name)
