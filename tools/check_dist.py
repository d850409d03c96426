#!/usr/bin/env python3
"""Check what an sdist or a wheel of dpsco-core holds (run by .ci/run after ``python -m build``).

    python tools/check_dist.py sdist dist/dpsco_core-X.tar.gz [--repo .]
    python tools/check_dist.py wheel dist/dpsco_core-X-cp311-...whl

sdist: every file git tracks under the source, test, benchmark, tool and doc directories, and the
top-level files, is in the archive; no build product is (compiled modules, generated C,
``_build_info.py``). wheel: a platform wheel (not ``py3-none-any``) with one compiled module per
``src_cython/*.pyx``, ``_build_info.py``, ``py.typed``, the data files and the LICENSE.
Exits 1 with the list of problems.
"""

import argparse
import fnmatch
import pathlib
import subprocess
import sys
import tarfile
import zipfile

TOP_LEVEL = ["LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", "setup.py", "MANIFEST.in"]
SHIPPED_DIRS = ("dpsco_core/", "src_cython/", "tests/", "bench/", "tools/", "docs/")
NEVER_IN_SDIST = ["*.so", "*.pyd", "*.o", "*.c", "*.pyc", "dpsco_core/_kernels/_build_info.py"]


def check_sdist(path, repo):
    with tarfile.open(path) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    have = set(names)
    problems = []
    tracked = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True,
                             text=True, check=True).stdout.split()
    wanted = TOP_LEVEL + [f for f in tracked if f.startswith(SHIPPED_DIRS)]
    problems += [f"missing from the sdist: {f}" for f in wanted if f not in have]
    problems += [f"build product in the sdist: {n}" for n in names
                 if any(fnmatch.fnmatch(n, pat) for pat in NEVER_IN_SDIST)]
    pyx = [n for n in names if n.startswith("src_cython/") and n.endswith(".pyx")]
    print(f"sdist {pathlib.Path(path).name}: {len(names)} files, {len(pyx)} .pyx, "
          f"{sum(n.startswith('tests/') for n in names)} under tests/")
    return problems


def check_wheel(path, repo):
    name = pathlib.Path(path).name
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    problems = []
    if name.endswith("-none-any.whl"):
        problems.append(f"{name} is a pure-Python wheel: the compiled kernels are missing")
    kernels = sorted(p.stem for p in (pathlib.Path(repo) / "src_cython").glob("*.pyx"))
    if not kernels:
        problems.append(f"no src_cython/*.pyx under {repo} to compare with")
    for stem in kernels:
        if not any(n.startswith(f"dpsco_core/_kernels/{stem}.") and n.endswith((".so", ".pyd"))
                   for n in names):
            problems.append(f"compiled kernel missing: dpsco_core/_kernels/{stem}")
    for needed in ["dpsco_core/_kernels/_build_info.py", "dpsco_core/py.typed",
                   "dpsco_core/data/california_housing.csv.gz",
                   "dpsco_core/data/electricity.csv.gz"]:
        if needed not in names:
            problems.append(f"missing from the wheel: {needed}")
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        problems.append("LICENSE missing from the wheel's .dist-info/licenses/")
    problems += [f"test or build file in the wheel: {n}" for n in names
                 if n.startswith(("tests/", "src_cython/", "bench/")) or n.endswith(".c")]
    print(f"wheel {name}: {len(names)} files")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["sdist", "wheel"])
    parser.add_argument("path")
    parser.add_argument("--repo", default=str(pathlib.Path(__file__).resolve().parents[1]),
                        help="the git checkout the sdist or wheel was built from")
    args = parser.parse_args(argv)
    problems = check_sdist(args.path, args.repo) if args.kind == "sdist" else \
        check_wheel(args.path, args.repo)
    for p in problems:
        print("  " + p, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {args.path}", file=sys.stderr)
        return 1
    print("  complete")
    return 0


if __name__ == "__main__":
    sys.exit(main())
