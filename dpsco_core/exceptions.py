"""Warnings and errors of dpsco-core.

Every warning the library raises subclasses :class:`DPSCOWarning`, so users can filter them
all at once (``warnings.simplefilter("ignore", dpsco_core.exceptions.DPSCOWarning)``).
"""

import os
import sys

#: Files under this directory are the library; warnings point past them.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


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


class PrivacyLeakWarning(DPSCOWarning):
    """A quantity read from the private data is used or released without being accounted.

    Examples: a clip threshold, step size, smoothness or Lipschitz constant computed from the
    data; a label set read from ``y``; a non-private diagnostic kept on a fitted estimator. The
    reported epsilon then holds only conditionally (``PrivacyReport.unconditional`` is False).
    Pass the quantity as a public argument, or use the private variant, to silence it.
    """


class PrivacyBudgetError(ValueError):
    """A requested privacy budget cannot be met with the given parameters."""


class UnsupportedEventError(TypeError):
    """An accountant was given a privacy event (or neighbouring relation) it cannot compose."""


def external_stacklevel():
    """``stacklevel`` for a ``warnings.warn`` in the caller that points at the user's code.

    Counts the frames from the function calling this one up to the first frame whose file is
    outside the dpsco_core package (``skip_file_prefixes`` of Python 3.12, for 3.11). A fixed
    stacklevel is wrong as soon as one public entry point calls another or a private helper
    warns on behalf of several entry points.
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level
