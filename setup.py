"""Build script: compiles every ``src_cython/*.pyx`` into ``dpsco_core._kernels.<name>``.

Metadata lives in ``pyproject.toml``; this file only describes the extension modules.

Environment variables
---------------------
DPSCO_DEBUG_BUILD=1
    Debug build: Cython bounds, wraparound and initialization checks on, ``-O0 -g``.
DPSCO_DISABLE_OPENMP=1
    Serial build even when the compiler supports OpenMP (the fallback that compilers without
    OpenMP get automatically).
DPSCO_REQUIRE_OPENMP=1
    Fail the build instead of falling back to serial when the OpenMP probe fails (CI and
    ``tools/sanitize.sh`` set it). Without it a failed probe is reported on stderr, loudly.
DPSCO_BUILD_JOBS=N
    Cythonize and compile N extensions at a time (default: every CPU, ``os.cpu_count()``).
    ``build_ext -j N`` on the command line takes precedence for the compile step; 1 is serial.
    Parallel by default so that ``pip install .``, ``pip install -e .`` and ``python -m build``,
    which cannot pass ``-j``, use every core (13 extensions at ``-O3`` dominate the install).

OpenMP is detected at build time by compiling and linking a small program with ``-fopenmp``;
it is never assumed. What was decided is written to ``dpsco_core/_kernels/_build_info.py`` (in
the source tree, and in the build tree that a wheel is made from) and reported by
``dpsco_core.show_config()``.

Packaging: ``MANIFEST.in`` lists what the sdist holds (sources, headers, data, tests, bench,
tools, docs); the version is read from ``dpsco_core.__version__`` (``pyproject.toml``).
"""

import multiprocessing
import os
import shlex
import shutil
import sys
import sysconfig
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
SRC = HERE / "src_cython"
BUILD_INFO = HERE / "dpsco_core" / "_kernels" / "_build_info.py"

DEBUG = os.environ.get("DPSCO_DEBUG_BUILD", "0") not in ("", "0", "false", "False")
DISABLE_OPENMP = os.environ.get("DPSCO_DISABLE_OPENMP", "0") not in ("", "0", "false", "False")
REQUIRE_OPENMP = os.environ.get("DPSCO_REQUIRE_OPENMP", "0") not in ("", "0", "false", "False")


def _build_jobs():
    """How many extensions to cythonize and compile at once (DPSCO_BUILD_JOBS, else every CPU)."""
    value = os.environ.get("DPSCO_BUILD_JOBS", "").strip()
    if value:
        try:
            jobs = int(value)
        except ValueError:
            raise SystemExit(f"DPSCO_BUILD_JOBS must be a positive integer, got {value!r}")
        if jobs < 1:
            raise SystemExit(f"DPSCO_BUILD_JOBS must be a positive integer, got {value!r}")
        return jobs
    return os.cpu_count() or 1


BUILD_JOBS = _build_jobs()

OPENMP_TEST_PROGRAM = textwrap.dedent(
    """
    #include <omp.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel reduction(+:n)
        n += 1;
        return (n >= 1 && omp_get_max_threads() >= 1) ? 0 : 1;
    }
    """
)


def _openmp_flags(compiler):
    """Return (compile_args, link_args) for OpenMP, or ([], []) if the compiler lacks it."""
    if DISABLE_OPENMP:
        return [], []
    if sys.platform == "win32" and compiler.compiler_type == "msvc":
        candidates = [(["/openmp"], [])]
    elif sys.platform == "darwin":
        candidates = [(["-Xpreprocessor", "-fopenmp"], ["-lomp"]), (["-fopenmp"], ["-fopenmp"])]
    else:
        candidates = [(["-fopenmp"], ["-fopenmp"])]
    # The probe object is compiled with CFLAGS (through compiler_so) but linked by linker_exe,
    # which sees neither CFLAGS nor LDFLAGS: with -fsanitize in CFLAGS the link then failed on
    # the sanitizer runtime and the build silently went serial. Link with LDFLAGS and the
    # -fsanitize options of CFLAGS, as the extensions themselves are linked.
    env_lflags = shlex.split(os.environ.get("LDFLAGS", ""))
    env_lflags += [f for f in shlex.split(os.environ.get("CFLAGS", ""))
                   if f.startswith("-fsanitize") and f not in env_lflags]
    errors = []
    tmp = tempfile.mkdtemp(prefix="dpsco_openmp_")
    try:
        src = os.path.join(tmp, "test_openmp.c")
        with open(src, "w") as fh:
            fh.write(OPENMP_TEST_PROGRAM)
        for cflags, lflags in candidates:
            try:
                objects = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
                compiler.link_executable(objects, "test_openmp", output_dir=tmp,
                                         extra_postargs=lflags + env_lflags)
            except Exception as exc:  # any compile or link failure: no OpenMP with these flags
                errors.append(f"{' '.join(cflags)}: {exc}")
                continue
            return cflags, lflags
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    message = ("\n" + "!" * 78 + "\nWARNING: OpenMP probe failed; building SERIAL kernels "
               "(one thread).\n" + "\n".join(errors) + "\nSet DPSCO_DISABLE_OPENMP=1 to "
               "choose this, or DPSCO_REQUIRE_OPENMP=1 to fail instead.\n" + "!" * 78)
    if REQUIRE_OPENMP:
        raise SystemExit(message.replace("WARNING", "ERROR").replace(
            "building SERIAL kernels (one thread)", "DPSCO_REQUIRE_OPENMP=1 is set"))
    print(message, file=sys.stderr)
    return [], []


class BuildExt(build_ext):
    """build_ext that adds OpenMP flags only when a test program compiles with them.

    It compiles the extensions in parallel (``BUILD_JOBS`` at a time) unless ``-j`` was given.
    """

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = BUILD_JOBS if BUILD_JOBS > 1 else None

    def build_extensions(self):
        omp_cflags, omp_lflags = _openmp_flags(self.compiler)
        if self.compiler.compiler_type == "msvc":
            opt = ["/Od", "/Zi"] if DEBUG else ["/O2"]
        else:
            # -ffp-contract=off: no FMA contraction, so a kernel and its NumPy twin round alike
            # and results stay bitwise reproducible across machines with and without FMA.
            # -fno-trapping-math: lets GCC turn the branch-free selects of _exp_poly.h into
            # vector blends (we never unmask floating-point traps); values are unchanged.
            opt = (["-O0", "-g"] if DEBUG else ["-O3"]) + ["-ffp-contract=off",
                                                           "-fno-trapping-math"]
        for ext in self.extensions:
            ext.extra_compile_args = opt + omp_cflags
            ext.extra_link_args = omp_lflags
        text = _build_info_text(self.compiler, opt + omp_cflags, omp_lflags, bool(omp_cflags))
        for path in self._build_info_targets():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        super().build_extensions()

    def _build_info_targets(self):
        """Where ``_build_info.py`` goes: the source tree, and the wheel's tree when not in place.

        ``build`` runs ``build_py`` (which copies the package's .py files into ``build_lib``)
        before ``build_ext``, so a file written only into the source tree here would miss the
        first wheel built from a clean tree; it is written into ``build_lib`` as well, beside
        the compiled kernels. The source-tree copy serves in-place and editable builds.
        """
        targets = [BUILD_INFO]
        if not self.inplace and not getattr(self, "editable_mode", False):
            targets.append(Path(self.build_lib) / BUILD_INFO.relative_to(HERE))
        return targets

    def get_outputs(self):
        outputs = super().get_outputs()
        if not self.inplace and not getattr(self, "editable_mode", False):
            outputs.append(str(Path(self.build_lib) / BUILD_INFO.relative_to(HERE)))
        return outputs


def _build_info_text(compiler, cflags, lflags, openmp):
    cc = getattr(compiler, "compiler_so", None) or [compiler.compiler_type]
    return (
        '"""Written by setup.py at build time; do not edit."""\n\n'
        f"OPENMP = {openmp!r}\n"
        f"DEBUG = {DEBUG!r}\n"
        f"COMPILER = {' '.join(cc)!r}\n"
        f"EXTRA_COMPILE_ARGS = {cflags!r}\n"
        f"EXTRA_LINK_ARGS = {lflags!r}\n"
        f"PLATFORM = {sysconfig.get_platform()!r}\n"
    )


def _extensions():
    numpy_dir = Path(np.__file__).resolve().parent
    # numpy's static libraries: npyrandom holds the C distributions (random_standard_normal,
    # random_laplace, ...) that kernels call on a bitgen_t; npymath what they need from NumPy.
    lib_dirs = [str(numpy_dir / "random" / "lib"), str(numpy_dir / "_core" / "lib")]
    exts = []
    for pyx in sorted(SRC.glob("*.pyx")):
        exts.append(
            Extension(
                f"dpsco_core._kernels.{pyx.stem}",
                [str(pyx.relative_to(HERE))],
                include_dirs=[np.get_include(), str(SRC)],
                library_dirs=lib_dirs,
                libraries=["npyrandom", "npymath"] + ([] if sys.platform == "win32" else ["m"]),
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return exts


def _cythonize(exts):
    directives = {
        "language_level": 3,
        # Kernel checks are set here rather than in the .pyx headers so that DPSCO_DEBUG_BUILD
        # can turn them back on (a file-level directive would override this dictionary).
        "boundscheck": DEBUG,
        "wraparound": DEBUG,
        "initializedcheck": DEBUG,
        # Always C division: Python semantics would change results (negative modulo) and
        # raise inside nogil code, so the debug build keeps the release arithmetic.
        "cdivision": True,
        "embedsignature": True,
    }
    # Generated C goes to a directory per mode: cythonize regenerates only when a .pyx is newer
    # than its .c, so a shared directory would let a debug build reuse release C (or back).
    c_dir = HERE / "build" / ("cython-debug" if DEBUG else "cython")
    # Cython's worker pool re-imports __main__ under the "spawn" start method (Windows, macOS),
    # which would run setup() again in each worker: parallel only where processes fork.
    method = (multiprocessing.get_start_method(allow_none=True)
              or multiprocessing.get_all_start_methods()[0])
    nthreads = BUILD_JOBS if method == "fork" else 0
    return cythonize(exts, compiler_directives=directives, include_path=[str(SRC)],
                     build_dir=str(c_dir.relative_to(HERE)), annotate=False, quiet=True,
                     nthreads=nthreads if nthreads > 1 else 0)


setup(ext_modules=_cythonize(_extensions()), cmdclass={"build_ext": BuildExt})
