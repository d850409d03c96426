"""Private solvers: one public function per module (validate, derive, calibrate, run, report)."""

from .dp_cd import dp_cd
from .dp_sgd import dp_sgd

__all__ = ["dp_cd", "dp_sgd"]
