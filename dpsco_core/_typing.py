"""Type aliases for the annotations of the public API (``py.typed``; nothing here runs).

``RandomStateLike`` is what every ``random_state`` accepts (``_random.check_random_state``);
``MatrixLike`` is what a ``Problem``'s features may be (array-likes and SciPy sparse matrices
or arrays, which SciPy does not annotate, so they type as ``Any``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from typing_extensions import TypeAlias
else:
    TypeAlias = Any

__all__ = ["ArrayLike", "FloatArray", "MatrixLike", "RandomStateLike"]

FloatArray: TypeAlias = NDArray[np.float64]
RandomStateLike: TypeAlias = Union[None, int, np.integer, np.random.Generator,
                                   np.random.SeedSequence]
MatrixLike: TypeAlias = Union[ArrayLike, Any]
