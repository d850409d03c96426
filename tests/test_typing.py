"""Typed public API: ``py.typed`` ships, public signatures are complete, mypy passes.

Two mypy runs share one cache: the package with the configuration in ``pyproject.toml``, and
``tests/typecheck/api_usage.py`` (every public name, used as a typed user would) under ``--strict``.
"""

import importlib.resources
import inspect
import pathlib

import pytest

import dpsco_core

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
USAGE = pathlib.Path(__file__).resolve().parent / "typecheck" / "api_usage.py"


def test_py_typed_is_shipped():
    assert (importlib.resources.files("dpsco_core") / "py.typed").is_file()


def _public_callables():
    from dpsco_core import estimators

    objs = [getattr(dpsco_core, name) for name in dpsco_core.__all__ if name != "__version__"]
    objs += [getattr(estimators, name) for name in estimators.__all__]
    for obj in objs:
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if inspect.isfunction(member) and (attr == "__init__" or not attr.startswith("_")):
                    yield f"{obj.__module__}.{obj.__qualname__}.{attr}", member
        else:
            yield f"{obj.__module__}.{obj.__qualname__}", obj


def test_public_signatures_are_fully_annotated():
    missing = []
    for name, func in _public_callables():
        sig = inspect.signature(func)
        if sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{name}: return")
        for param in sig.parameters.values():
            if param.name in ("self", "cls"):
                continue
            if param.annotation is inspect.Parameter.empty:
                missing.append(f"{name}: {param.name}")
    assert not missing, "unannotated public parameters:\n" + "\n".join(missing)


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    api = pytest.importorskip("mypy.api", reason="mypy is in the test extra")
    if not PYPROJECT.is_file():
        pytest.skip("pyproject.toml (the mypy configuration) is not beside the tests")
    cache = tmp_path_factory.mktemp("mypy_cache")

    def run(*args):
        stdout, stderr, status = api.run(["--config-file", str(PYPROJECT), "--cache-dir",
                                          str(cache), "--no-error-summary", *args])
        return status, stdout + stderr
    return run


def test_mypy_package(mypy_run):
    status, out = mypy_run("-p", "dpsco_core")
    assert status == 0, out


def test_mypy_strict_public_api_usage(mypy_run):
    status, out = mypy_run("--strict", "--follow-imports=silent", str(USAGE))
    assert status == 0, out
