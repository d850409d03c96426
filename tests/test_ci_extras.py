"""Under CI, a test that needs a missing test extra fails instead of being skipped."""

import os
import pathlib
import shutil
import subprocess
import sys

CONFTEST = pathlib.Path(__file__).resolve().parent / "conftest.py"
ROOT = CONFTEST.parents[1]


def _run(tmp_path, ci):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_needs_extra.py").write_text(
        "import pytest\n"
        "mod = pytest.importorskip('dpsco_no_such_extra_module')\n\n"
        "def test_uses_it():\n    assert mod\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def test_missing_extra_fails_under_ci(tmp_path):
    out = _run(tmp_path, ci=True)
    assert out.returncode not in (0, 5), out.stdout
    assert "dpsco_no_such_extra_module" in out.stdout and "CI is set" in out.stdout


def test_missing_extra_skips_outside_ci(tmp_path):
    out = _run(tmp_path, ci=False)
    assert out.returncode in (0, 5) and "skipped" in out.stdout, out.stdout   # 5: none ran
