"""dpsco-core: differentially private stochastic convex optimization with compiled kernels.

Submodules (``privacy``, ``mechanisms``, ``datasets``, ``penalties``, ``problems``, ...) and
the main names below are imported on first use, so ``import dpsco_core`` is cheap and the
pure-Python privacy layer works without touching the compiled kernels.
"""

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Before any kernel module loads: the OpenMP runtime reads its wait policy once (issue 18).
from . import _openmp_env

_openmp_env.apply()

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
    "dp_ssp": "solvers.ssp",
    "TreeAggregation": "tree",
    "parallel_sco": "resque.parallel_sco",
}

__all__ = sorted(_EXPORTS) + ["__version__"]

if TYPE_CHECKING:  # what the lazy __getattr__ below returns, for type checkers (py.typed);
    # "import X as X" marks an explicit re-export (mypy --strict, pyright)
    from ._config import effective_n_threads as effective_n_threads
    from ._config import openmp_enabled as openmp_enabled
    from ._config import show_config as show_config
    from .penalties import L1 as L1
    from .penalties import L2 as L2
    from .penalties import Box as Box
    from .penalties import ElasticNet as ElasticNet
    from .penalties import NoPenalty as NoPenalty
    from .problems import Problem as Problem
    from .resque.parallel_sco import parallel_sco as parallel_sco
    from .result import Result as Result
    from .solvers.dp_cd import dp_cd as dp_cd
    from .solvers.dp_cd import dp_cd_grid as dp_cd_grid
    from .solvers.dp_sgd import dp_sgd as dp_sgd
    from .solvers.dp_srgd import dp_srgd as dp_srgd
    from .solvers.ssp import dp_ssp as dp_ssp
    from .solvers.frank_wolfe import ttz_frank_wolfe as ttz_frank_wolfe
    from .solvers.frank_wolfe import vr_frank_wolfe as vr_frank_wolfe
    from .solvers.mirror_descent import localized_mirror_descent as localized_mirror_descent
    from .solvers.mirror_descent import noisy_mirror_descent as noisy_mirror_descent
    from .tree import TreeAggregation as TreeAggregation


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        # cached: the import machinery was a noticeable part of a short call (issue 18)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
