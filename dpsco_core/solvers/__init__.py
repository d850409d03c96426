"""Private solvers: one public function per module (validate, derive, calibrate, run, report)."""

from .dp_cd import dp_cd, dp_cd_grid

__all__ = ["dp_cd", "dp_cd_grid"]
