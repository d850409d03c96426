"""Compiled kernels (built from ``src_cython/*.pyx`` by ``setup.py``). Not a public API."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # The kernels are compiled extension modules without stubs: to a type checker every
    # ``from dpsco_core._kernels import _name`` is ``Any`` (they are not a public API).
    def __getattr__(name: str) -> Any: ...
