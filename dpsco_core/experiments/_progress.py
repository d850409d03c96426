"""A text progress bar with an estimate of the time left, for long sweeps (on stderr)."""

import sys
import time


class Progress:
    """``with Progress(total, label) as bar: ... bar.advance(k)``; prints at most ~10 times/s."""

    def __init__(self, total, label="", stream=None, width=30):
        self.total = max(1, int(total))
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        self.done = 0
        self.start = time.perf_counter()
        self._last = 0.0

    def __enter__(self):
        self._draw(force=True)
        return self

    def __exit__(self, *exc):
        self.done = min(self.done, self.total)
        self._draw(force=True)
        self.stream.write("\n")
        self.stream.flush()

    def advance(self, k=1):
        self.done += k
        self._draw()

    def _draw(self, force=False):
        now = time.perf_counter()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        frac = min(1.0, self.done / self.total)
        elapsed = now - self.start
        left = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        bar = "#" * int(frac * self.width) + "." * (self.width - int(frac * self.width))
        eta = "--:--" if left != left else f"{int(left) // 60:02d}:{int(left) % 60:02d}"
        self.stream.write(f"\r{self.label} [{bar}] {100 * frac:5.1f}% "
                          f"elapsed {int(elapsed) // 60:02d}:{int(elapsed) % 60:02d} "
                          f"left {eta}")
        self.stream.flush()


class Phases:
    """Numbered phase lines on stderr: ``[phase k/N] label (elapsed 12.3 s)``.

    The sweeps have a :class:`Progress` bar; the phases around them (data and optima, timings,
    tables and figures) print a line when they start, and :meth:`step` lines within, so that
    a run is never silent for long. Elapsed time is counted from the creation of the object.
    """

    def __init__(self, total, stream=None):
        self.total = int(total)
        self.k = 0
        self.stream = sys.stderr if stream is None else stream
        self.start_time = time.perf_counter()

    def start(self, label):
        """Begin the next phase."""
        self.k += 1
        self._write(label)

    def step(self, detail):
        """A line within the current phase (one unit of a silent loop)."""
        self._write("  " + detail)

    def _write(self, text):
        elapsed = time.perf_counter() - self.start_time
        self.stream.write(f"[phase {self.k}/{self.total}] {text} (elapsed {elapsed:.1f} s)\n")
        self.stream.flush()
