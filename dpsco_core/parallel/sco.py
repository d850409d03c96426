"""Deprecated alias of :mod:`dpsco_core.resque.parallel_sco` (moved with the ReSQue package).

Importing it warns (``DeprecationWarning``); it will be removed in a later minor release.
"""

import warnings

from ..resque.parallel_sco import *  # noqa: F401,F403
from ..resque.parallel_sco import __all__  # noqa: F401

warnings.warn("dpsco_core.parallel.sco moved to dpsco_core.resque.parallel_sco; the old name "
              "is deprecated and will be removed.", DeprecationWarning, stacklevel=2)
