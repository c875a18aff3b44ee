"""A plain-text progress bar: redrawn in place in a terminal, one line per step in a log file."""

from __future__ import annotations

import shutil
import sys
import time

from gpgpu_lessons.formats import format_seconds

WIDTH = 24  # characters of the bar


class Progress:
    """`step(label)` before each of `total` steps, `done()` after the last.

    A terminal sees one line redrawn with a carriage return; a file (a log, a pipe) gets one
    complete line per step, so nothing is lost or garbled when the output is not a terminal.
    """

    def __init__(self, total: int, stream=None, *, live: bool | None = None):
        self.total, self.count = max(1, total), 0
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.live = isatty() if live is None else live
        self.start = time.perf_counter()
        self._drawn = 0

    def line(self, label: str, *, estimate: bool = True) -> str:
        """'[#########---------------]  12/60  35 s, ~140 s left  transpose 777 x 80973'."""
        filled = WIDTH * self.count // self.total
        elapsed = time.perf_counter() - self.start
        text = f"[{'#' * filled}{'-' * (WIDTH - filled)}] {self.count:>3}/{self.total}"
        text += f"  {format_seconds(elapsed)}"
        if estimate and 0 < self.count - 1 < self.total:
            left = elapsed / (self.count - 1) * (self.total - self.count + 1)
            text += f", ~{format_seconds(left)} left"
        return f"{text}  {label}"

    def step(self, label: str) -> None:
        """Count one more step and show it, labelled (what is being done now)."""
        self.count = min(self.total, self.count + 1)
        self._write(self.line(label))

    def note(self, text: str) -> None:
        """A message between steps, on its own line (the bar is redrawn at the next step)."""
        self._clear()
        print(text, file=self.stream, flush=True)

    def done(self) -> None:
        """Finish: the last line stays, with the total time."""
        self.count = self.total
        finished = f"done in {format_seconds(time.perf_counter() - self.start)}"
        self._write(self.line(finished, estimate=False))
        if self.live:
            print(file=self.stream, flush=True)
            self._drawn = 0

    def _clear(self) -> None:
        if self.live and self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self._drawn = 0

    def _write(self, text: str) -> None:
        if self.live:  # one screen line, or the carriage return cannot redraw it
            text = text[: max(20, shutil.get_terminal_size().columns - 1)]
            self._clear()
            self.stream.write(text)
            self.stream.flush()
            self._drawn = len(text)
        else:
            print(text, file=self.stream, flush=True)
