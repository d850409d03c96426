"""dpsco-core: differentially private stochastic convex optimization with compiled kernels.

Submodules are imported on first use, so ``import dpsco_core`` is cheap and the pure-Python
privacy layer works without touching the compiled kernels.
"""

import importlib

__version__ = "0.1.0"

_SUBMODULES = ("privacy", "mechanisms", "datasets", "penalties", "reference", "exceptions",
               "audit")
_CONFIG_NAMES = ("show_config", "effective_n_threads", "openmp_enabled")

__all__ = list(_SUBMODULES) + list(_CONFIG_NAMES) + ["__version__"]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _CONFIG_NAMES:
        return getattr(importlib.import_module(f"{__name__}._config"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
