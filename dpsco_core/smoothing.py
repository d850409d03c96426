"""Deprecated alias of :mod:`dpsco_core.resque.smoothing` (moved with the ReSQue package).

Importing it warns (``DeprecationWarning``); it will be removed in a later minor release.
"""

import warnings

from .resque.smoothing import *  # noqa: F401,F403
from .resque.smoothing import __all__  # noqa: F401

warnings.warn("dpsco_core.smoothing moved to dpsco_core.resque.smoothing; the old name is "
              "deprecated and will be removed.", DeprecationWarning, stacklevel=2)
