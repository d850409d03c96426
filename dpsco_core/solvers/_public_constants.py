"""Where a solver's constants come from: public bounds, or the data with a warning.

A step, clip, smoothness or Lipschitz constant computed from the private data is a release no
accountant sees (issue 15, section 4): the run's guarantee then holds only on the condition
that this release does not matter. Every such constant goes through :func:`data_constant`,
which warns with :class:`~dpsco_core.exceptions.PrivacyLeakWarning` at the user's call and
returns the condition string the solver puts in ``PrivacyReport.conditions``.
"""

import warnings

from ..exceptions import PrivacyLeakWarning, external_stacklevel

__all__ = ["data_constant", "SMOOTHNESS_MODES"]

#: Accepted string values of a solver's ``smoothness`` argument (besides public numbers).
SMOOTHNESS_MODES = ("auto", "public", "exact")


def data_constant(constant, condition):
    """Announce that ``constant`` is read from the private data; return the report condition.

    Parameters
    ----------
    constant : str
        What is read, as the user would name it (for example "coordinate smoothness M_j").
    condition : str
        The sentence the privacy report lists under ``conditions``.
    """
    warnings.warn(
        f"{constant}: read from the private data and not accounted, so the reported epsilon "
        "holds only conditionally (report.unconditional is False). Declare public bounds "
        "(bounds=(lower, upper) and/or row_norm=..., arguments of Problem and of the "
        "estimators) or pass the constant as a public argument.", PrivacyLeakWarning,
        stacklevel=external_stacklevel())
    return condition
