"""setup.py's OpenMP probe under sanitizer flags (issue 16).

``tools/sanitize.sh`` passes ``-fsanitize=address,undefined`` through CFLAGS/LDFLAGS. The probe
compiled its test program with CFLAGS but linked it without the sanitizer runtime, the link
failed, and the build silently dropped OpenMP: the sanitizer job then tested serial kernels.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

SETUP = pathlib.Path(__file__).resolve().parents[1] / "setup.py"

PROBE = r"""
import sys
from setuptools._distutils.ccompiler import new_compiler
from setuptools._distutils.sysconfig import customize_compiler
source = open(sys.argv[1]).read()
namespace = {"__file__": sys.argv[1], "__name__": "dpsco_setup_probe"}
# Everything but the final setup(...) call: the probe function and its settings.
exec(compile(source[:source.rindex("\nsetup(")], sys.argv[1], "exec"), namespace)
compiler = new_compiler()
customize_compiler(compiler)
print(repr(namespace["_openmp_flags"](compiler)))
"""


def _probe(env_extra):
    env = dict(os.environ, **env_extra)
    env.pop("DPSCO_DISABLE_OPENMP", None)
    env.pop("DPSCO_REQUIRE_OPENMP", None)
    out = subprocess.run([sys.executable, "-c", PROBE, str(SETUP)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1], out.stderr


def _gcc_with_asan():
    gcc = shutil.which("gcc")
    if gcc is None or sys.platform != "linux":
        return False
    lib = subprocess.run([gcc, "-print-file-name=libasan.so"], capture_output=True, text=True)
    return os.path.isabs(lib.stdout.strip())


@pytest.mark.skipif(not _gcc_with_asan(), reason="needs gcc with libasan (Linux)")
@pytest.mark.skipif(not SETUP.is_file(), reason="source tree not available")
def test_openmp_probe_survives_sanitizer_flags():
    plain, _ = _probe({})
    if "fopenmp" not in plain:
        pytest.skip("this compiler has no OpenMP")
    sanitized, err = _probe({
        "CFLAGS": "-fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g",
        "LDFLAGS": "-fsanitize=address,undefined"})
    assert "fopenmp" in sanitized, err


@pytest.mark.skipif(not SETUP.is_file(), reason="source tree not available")
def test_failed_probe_is_loud():
    # A compiler flag that makes every probe fail: the fallback must be announced on stderr.
    flags, err = _probe({"CFLAGS": "-fdpsco-no-such-flag"})
    assert flags == "([], [])"
    assert "OpenMP probe failed" in err and "SERIAL" in err
