"""Warnings and errors of dpsco-core.

Every warning the library raises subclasses :class:`DPSCOWarning`, so users can filter them
all at once (``warnings.simplefilter("ignore", dpsco_core.exceptions.DPSCOWarning)``).
"""


class DPSCOWarning(UserWarning):
    """Base class of every warning raised by dpsco-core."""


class OrderGridWarning(DPSCOWarning):
    """The optimal Renyi order lies at the edge of the order grid: epsilon may be loose."""


class TheoryWarning(DPSCOWarning):
    """A paper's theoretical parameters are infeasible (for example a batch size below 1)."""


class DivergenceWarning(DPSCOWarning):
    """A solver released non-finite coefficients: the step size (or clip) is too large.

    The privacy guarantee still holds (the release is post-processing of the private steps);
    the output is useless. Lower the step size.
    """


class PrivacyBudgetError(ValueError):
    """A requested privacy budget cannot be met with the given parameters."""


class UnsupportedEventError(TypeError):
    """An accountant was given a privacy event (or neighbouring relation) it cannot compose."""
