"""Private solvers: one public function per module (validate, derive, calibrate, run, report).

Every name in the ``__all__`` of a solver module of this package (``dp_cd``, ``dp_sgd``,
``frank_wolfe``, ...) is available as ``dpsco_core.solvers.<name>``: adding a solver module needs
no edit here. The modules are imported eagerly, and their names bound after, because importing
a submodule binds the *module* under its own name (``solvers.dp_cd``) and the function of the
same name must win.
"""

import importlib
import pkgutil

__all__ = []

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):
        continue
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _name in getattr(_module, "__all__", ()):
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)

del _info, _module, _name
