"""Packaging and metadata: one version string, the command line's name and --version, the
scikit-learn minimum with a clear message, the extras, LICENSE, and what an install ships.

Runs against whatever ``dpsco_core`` is imported: the editable install of the README, or the
wheel that ``.ci/run`` installs into a fresh virtual environment (then with
``DPSCO_EXPECT_INSTALLED=1``, checked in ``conftest.py``).
"""

import importlib
import importlib.metadata
import importlib.resources
import pathlib
import re
import subprocess
import sys

import pytest

import dpsco_core
from dpsco_core.__main__ import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"


def _pyproject():
    if not PYPROJECT.is_file():
        pytest.skip("pyproject.toml is not beside the tests")
    import tomllib
    return tomllib.loads(PYPROJECT.read_text())


def _distribution():
    try:
        return importlib.metadata.distribution("dpsco-core")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("dpsco-core is imported from a source tree without installed metadata")


# ---------------------------------------------------------------- one version string
def test_version_is_a_release_string():
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", dpsco_core.__version__)


def test_pyproject_reads_the_version_from_the_package():
    project = _pyproject()
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "dpsco_core.__version__"}


def test_installed_metadata_has_the_package_version():
    assert _distribution().version == dpsco_core.__version__


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"dpsco-core {dpsco_core.__version__}"


def test_python_m_version_in_a_subprocess():
    out = subprocess.run([sys.executable, "-m", "dpsco_core", "--version"], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    assert out.strip() == f"dpsco-core {dpsco_core.__version__}"


# ---------------------------------------------------------------- the usage text's name
@pytest.mark.parametrize("argv0, prog", [
    ("/venv/bin/dpsco-core", "dpsco-core"),
    ("C:\\venv\\Scripts\\dpsco-core.exe", "dpsco-core"),
    ("/site-packages/dpsco_core/__main__.py", "python -m dpsco_core"),
    ("-m", "python -m dpsco_core"),
])
def test_usage_names_how_it_was_started(monkeypatch, capsys, argv0, prog):
    if "\\" in argv0:  # a Windows path: only its base name matters
        argv0 = argv0.replace("\\", "/")
    monkeypatch.setattr(sys, "argv", [argv0, "--help"])
    with pytest.raises(SystemExit):
        main()
    assert capsys.readouterr().out.startswith(f"usage: {prog} ")


def test_console_script_entry_point():
    scripts = [ep for ep in _distribution().entry_points if ep.group == "console_scripts"]
    assert [(ep.name, ep.value) for ep in scripts] == [("dpsco-core", "dpsco_core.__main__:main")]


def test_console_script_runs_and_names_itself():
    script = pathlib.Path(sys.executable).parent / "dpsco-core"
    if not script.exists():
        pytest.skip("no dpsco-core console script beside this interpreter")
    res = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True,
                         timeout=120)
    assert res.stdout.startswith("usage: dpsco-core ")
    res = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True,
                         timeout=120)
    assert res.stdout.strip() == f"dpsco-core {dpsco_core.__version__}"


# ---------------------------------------------------------------- scikit-learn minimum
def test_sklearn_version_check():
    from dpsco_core.estimators import _check_sklearn_version

    for ok in ("1.6.0", "1.6.1", "1.7.dev0", "1.10.2", "2.0"):
        _check_sklearn_version(ok)
    for old in ("1.5.2", "1.3.0", "0.24.2", "unknown"):
        with pytest.raises(ImportError, match=r"scikit-learn >= 1\.6"):
            _check_sklearn_version(old)


def test_too_old_sklearn_gives_a_clear_error(monkeypatch):
    sklearn = pytest.importorskip("sklearn")
    monkeypatch.setattr(sklearn, "__version__", "1.5.2")
    monkeypatch.delitem(sys.modules, "dpsco_core.estimators", raising=False)
    with pytest.raises(ImportError) as exc:
        importlib.import_module("dpsco_core.estimators")
    message = str(exc.value)
    assert "scikit-learn >= 1.6" in message and "found scikit-learn 1.5.2" in message
    assert "dpsco-core[sklearn]" in message


def test_missing_sklearn_gives_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)   # import sklearn raises ImportError
    monkeypatch.delitem(sys.modules, "dpsco_core.estimators", raising=False)
    with pytest.raises(ImportError, match=r"needs scikit-learn >= 1\.6.*dpsco-core\[sklearn\]"):
        importlib.import_module("dpsco_core.estimators")


def test_every_extra_asks_for_sklearn_1_6():
    extras = _pyproject()["project"]["optional-dependencies"]
    assert extras["sklearn"] == ["scikit-learn>=1.6"]
    for name, reqs in extras.items():
        for req in reqs:
            if req.startswith("scikit-learn"):
                assert req == "scikit-learn>=1.6", (name, req)


def test_installed_metadata_extras():
    dist = _distribution()
    extras = set(dist.metadata.get_all("Provides-Extra") or [])
    assert {"sklearn", "test", "bench", "distributed"} <= extras
    requires = dist.requires or []
    assert any(r.startswith("scikit-learn>=1.6") and 'extra == "sklearn"' in r for r in requires)
    assert not any(r.startswith("scikit-learn") and ">=1.3" in r for r in requires)


# ---------------------------------------------------------------- license and contents
def test_license_file_and_metadata():
    if (ROOT / "LICENSE").is_file():
        text = (ROOT / "LICENSE").read_text()
        assert text.startswith("BSD 3-Clause License") and "dpsco-core developers" in text
    meta = _distribution().metadata
    assert meta["License-Expression"] == "BSD-3-Clause"
    direct_url = _distribution().read_text("direct_url.json") or ""
    if '"editable": true' not in direct_url.replace(" ", "").replace(":", ": "):
        files = [str(f) for f in _distribution().files or []]
        assert any(f.endswith("LICENSE") for f in files), files   # shipped in the wheel


def test_build_info_and_data_are_installed():
    from dpsco_core._kernels import _build_info

    assert isinstance(_build_info.OPENMP, bool)
    data = importlib.resources.files("dpsco_core") / "data"
    assert sorted(p.name for p in data.iterdir() if p.name.endswith(".csv.gz")) == [
        "california_housing.csv.gz", "electricity.csv.gz"]
