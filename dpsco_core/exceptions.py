"""Warnings and errors of dpsco-core.

Every warning the library raises subclasses :class:`DPSCOWarning`, so users can filter them
all at once (``warnings.simplefilter("ignore", dpsco_core.exceptions.DPSCOWarning)``). A
warning's location is the line of the caller's code that called into the library (for the
demo, ``python -m dpsco_core demo``, the demo's own line in ``dpsco_core/__main__.py``).
"""

import os
import sys

#: Files under this directory are the library; warnings point past them.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: ... except the package's own clients of the library, the command line (``python -m
#: dpsco_core demo``) and the paper reproductions: a warning their calls provoke points at
#: their line. Walking past them reached runpy (the demo's warnings said ``<frozen runpy>:88``).
_CLIENT_FILES = (_PACKAGE_DIR + "__main__.py", _PACKAGE_DIR + "experiments" + os.sep)


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


def external_stacklevel(skip=0):
    """``stacklevel`` for a ``warnings.warn`` in the caller that points at the user's code.

    The first ``skip`` frames, counting from the caller, are passed over whatever their file
    (``skip=2`` in a dataclass's ``__post_init__``: it and the generated ``__init__``, file
    ``<string>``).

    Counts the frames from the function calling this one up to the first frame whose file is
    outside the dpsco_core library (``skip_file_prefixes`` of Python 3.12, for 3.11). A fixed
    stacklevel is wrong as soon as one public entry point calls another or a private helper
    warns on behalf of several entry points. The package's command line (``__main__.py``,
    the demo) and ``experiments/`` (``reproduce``) call the library as a user would, so the
    walk stops there: ``python -m dpsco_core demo`` has no user frame above them but runpy's.

    Parameters
    ----------
    skip : int, default=0
        Frames passed over first, whatever their file (see above).

    Returns
    -------
    int
    """
    frame = sys._getframe(1)
    level = 1
    for _ in range(skip):
        if frame is None:
            break
        frame = frame.f_back
        level += 1
    while frame is not None and _in_library(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def _in_library(filename):
    return filename.startswith(_PACKAGE_DIR) and not filename.startswith(_CLIENT_FILES)
