"""Pure-NumPy twins of the compiled kernels: test oracles and benchmark baselines.

Each module mirrors one kernel module (``dpsco_core._kernels.<name>``) and each entry point has
the kernel's name, arguments and return value, drawing the same random numbers in the same
order, so that tests can swap one for the other and compare bitwise.
"""

from . import noise, noisy_max, prox

__all__ = ["noise", "noisy_max", "prox"]
