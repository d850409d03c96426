"""Pure-NumPy twins of the compiled kernels: test oracles and benchmark baselines.

Each module mirrors one kernel module (``dpsco_core._kernels._<name>`` has its twin in
``dpsco_core.reference.<name>``) and each entry point has the kernel's name, arguments and
return value, drawing the same random numbers in the same order, so that tests can swap one for
the other and compare bitwise. Modules are imported on first attribute access.
"""

import importlib
import importlib.util


def __getattr__(name):
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
