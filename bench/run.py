"""Run every benchmark once and print one Markdown table of ratios measured in that run.

Usage: ``python bench/run.py [pytest args]``. Writes ``bench/.last_run.json`` and prints, for each
group, the median time of every implementation and its ratio to ``dpsco_core`` (ratio > 1:
dpsco_core is that many times faster).
"""

import json
import os
import platform
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))


def table(data):
    groups = defaultdict(dict)
    for bench in data["benchmarks"]:
        groups[bench["group"]][bench["extra_info"]["impl"]] = bench["stats"]["median"]
    lines = ["| benchmark | implementation | median | time / dpsco_core |",
             "|---|---|---|---|"]
    for group in sorted(groups):
        impls = groups[group]
        base = impls.get("dpsco_core")
        for impl, median in sorted(impls.items(), key=lambda kv: kv[1]):
            ratio = f"{median / base:.2f}" if base else "n/a"
            lines.append(f"| {group} | {impl} | {median * 1e3:.3f} ms | {ratio} |")
    return "\n".join(lines)


def machine(data):
    info = data.get("machine_info", {})
    cpu = info.get("cpu", {}).get("brand_raw", platform.processor())
    import numpy
    import dpsco_core
    from dpsco_core._config import effective_n_threads, openmp_enabled
    return (f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, numpy "
            f"{numpy.__version__}, dpsco-core {dpsco_core.__version__}, OpenMP "
            f"{'on' if openmp_enabled() else 'off'}, n_threads=None -> {effective_n_threads()}")


def main(argv):
    out = os.path.join(HERE, ".last_run.json")
    cmd = [sys.executable, "-m", "pytest", HERE, "-q", f"--benchmark-json={out}"] + argv
    code = subprocess.call(cmd)
    if code not in (0, 5):
        return code
    with open(out) as fh:
        data = json.load(fh)
    print()
    print(f"Machine: {machine(data)}")
    print()
    print(table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
