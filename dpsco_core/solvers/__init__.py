"""Private solvers: one public function per module (validate, derive, calibrate, run, report)."""

from .dp_cd import dp_cd
from .frank_wolfe import projected_dp_sgd_l1, ttz_frank_wolfe, vr_frank_wolfe

__all__ = ["dp_cd", "vr_frank_wolfe", "ttz_frank_wolfe", "projected_dp_sgd_l1"]
