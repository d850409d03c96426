"""Private solvers: one public function per module (validate, derive, calibrate, run, report).

``dpsco_core.solvers.<name>`` finds ``<name>`` in the ``__all__`` of the solver modules of this
package (``dp_cd``, ``dp_sgd``, ``frank_wolfe``, ...), imported on first use: adding a solver
module needs no edit here.
"""

import importlib
import pkgutil

_PUBLIC_MODULES = sorted(m.name for m in pkgutil.iter_modules(__path__)
                         if not m.name.startswith("_"))


def __getattr__(name):
    for module_name in _PUBLIC_MODULES:
        module = importlib.import_module(f"{__name__}.{module_name}")
        if name in getattr(module, "__all__", ()):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    names = set(globals())
    for module_name in _PUBLIC_MODULES:
        names.update(getattr(importlib.import_module(f"{__name__}.{module_name}"), "__all__", ()))
    return sorted(names)
