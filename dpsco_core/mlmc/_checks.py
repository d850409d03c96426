"""Checks of what user-supplied oracles return, and of iteration counts derived from
accuracy targets (shared by the MLMC algorithms and ball acceleration).

A user oracle that returns NaN, inf or a vector of the wrong length would otherwise surface
as a raw NumPy message from deep inside an iteration, or be carried silently into the output;
a default iteration count computed from a tiny accuracy target or a huge constant would make
a run that never ends (a hang, not an answer).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import exception_summary

__all__ = ["oracle_vector", "oracle_value", "MAX_DEFAULT_ITER", "default_iterations"]

#: Largest iteration count a default (from epsilon, lipschitz, radius, ...) may reach; a caller
#: who wants more passes ``n_iter`` explicitly.
MAX_DEFAULT_ITER = 10 ** 7


def oracle_vector(g: Any, name: str, shape: Sequence[int]) -> np.ndarray:
    """``g`` (the output of the user callable ``name``) as a finite float64 array of ``shape``."""
    try:
        g = np.asarray(g, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must return real numbers; got {type(g).__name__} "
                        f"({exception_summary(exc)}).") from None
    if g.shape != tuple(shape):
        raise ValueError(f"{name} must return an array of shape {tuple(shape)} (the point's); "
                         f"got {g.shape}.")
    if not np.all(np.isfinite(g)):
        raise ValueError(f"{name} returned NaN or inf; the iterations need finite vectors.")
    return g


def oracle_value(v: Any, name: str) -> float:
    """``v`` (the output of the user callable ``name``) as a float, NaN refused (+inf is a
    legitimate value of an extended-real objective)."""
    try:
        v = float(v)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must return a real number; got {type(v).__name__} "
                        f"({exception_summary(exc)}).") from None
    if math.isnan(v):
        raise ValueError(f"{name} returned NaN.")
    return v


def default_iterations(count: float, names: Sequence[str]) -> int:
    """``ceil(count)`` as an int, refused (naming the arguments ``names`` it came from) when
    it is not finite or exceeds :data:`MAX_DEFAULT_ITER`."""
    if not count <= MAX_DEFAULT_ITER:
        raise ValueError(f"{', '.join(names)} give {count:.3g} iterations (more than "
                         f"{MAX_DEFAULT_ITER:g}): the run would not end; loosen the accuracy "
                         "target, check the constants, or pass n_iter explicitly.")
    return max(1, math.ceil(count))
