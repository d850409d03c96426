"""Argument checks shared by the ``python -m dpsco_core reproduce <paper>`` commands.

A bad command line ends with argparse's usage line, a one-line error naming the option and
exit code 2, before any work starts: never a traceback.
"""

import os
from pathlib import Path

__all__ = ["parse_experiment_args"]


def parse_experiment_args(parser, argv):
    """``parser.parse_args(argv)``, then ``--threads`` and ``--out`` (when the parser has them)
    checked: threads an integer in [1, MAX_N_THREADS], out a directory that exists or can be
    created, and is writable."""
    from .._config import effective_n_threads

    args = parser.parse_args(argv)
    threads = getattr(args, "threads", None)
    if threads is not None:
        try:
            effective_n_threads(threads)
        except (TypeError, ValueError) as exc:
            parser.error(f"argument --threads: {exc}")
    out = getattr(args, "out", None)
    if out is not None:
        _check_writable_dir(parser, Path(out))
    return args


def _check_writable_dir(parser, out):
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f"argument --out: cannot create the output directory {str(out)!r}: "
                     f"{exc.strerror or exc}.")
    if not out.is_dir() or not os.access(out, os.W_OK | os.X_OK):
        parser.error(f"argument --out: {str(out)!r} is not a writable directory.")
