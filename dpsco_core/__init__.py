"""dpsco-core: differentially private stochastic convex optimization with compiled kernels.

Submodules (``privacy``, ``mechanisms``, ``datasets``, ``penalties``, ``problems``, ...) and
the main names below are imported on first use, so ``import dpsco_core`` is cheap and the
pure-Python privacy layer works without touching the compiled kernels.
"""

import importlib
import importlib.util

__version__ = "0.1.0"

# name -> module that defines it, for the names users reach as dpsco_core.<name>
_EXPORTS = {
    "show_config": "_config",
    "effective_n_threads": "_config",
    "openmp_enabled": "_config",
    "Problem": "problems",
    "PublicBounds": "public_bounds",
    "L1": "penalties",
    "L2": "penalties",
    "ElasticNet": "penalties",
    "Box": "penalties",
    "NoPenalty": "penalties",
    "Result": "result",
    "Budget": "privacy.budget",
    "dp_cd": "solvers.dp_cd",
    "dp_cd_grid": "solvers.dp_cd",
    "dp_sgd": "solvers.dp_sgd",
    "vr_frank_wolfe": "solvers.frank_wolfe",
    "ttz_frank_wolfe": "solvers.frank_wolfe",
    "noisy_mirror_descent": "solvers.mirror_descent",
    "localized_mirror_descent": "solvers.mirror_descent",
    "dp_srgd": "solvers.dp_srgd",
    "TreeAggregation": "tree",
    "parallel_sco": "parallel.sco",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
