"""Pure-NumPy twins of the compiled kernels: test oracles and benchmark baselines.

Each module mirrors one kernel module (``dpsco_core._kernels.<name>``) and each entry point has
the kernel's name, arguments and return value, drawing the same random numbers in the same
order, so that tests can swap one for the other and compare bitwise.
"""

from . import discrete, noise, noisy_max

__all__ = ["discrete", "noise", "noisy_max"]
