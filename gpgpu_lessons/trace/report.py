"""The result of trace_kernel: counters per line with a verdict, hazards, text and HTML tables."""

from __future__ import annotations

import html
import linecache
import os
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .accesses import WARP, Accesses, Site
from .arrays import OPS, SPACES, View
from .hazards import Hazard, thread_index
from .model import SECTOR_BYTES, Line, Requests, bank_of


class Access(NamedTuple):
    """One recorded load, store or atomic."""

    block: tuple  # blockIdx
    thread: tuple  # threadIdx
    warp: int
    lane: int
    array: str
    space: str
    op: str
    index: tuple  # element index
    address: int  # simulated byte address
    line: int
    interval: int  # syncthreads the thread had passed


_UNIT = {"global": "sectors", "local": "sectors", "shared": "wavefronts", "constant": "addresses"}


def source_line(file: str, line: int) -> str:
    """The text of a source line (stripped), '' when it cannot be read."""
    return linecache.getline(file, line).strip()


@dataclass
class Trace:
    """What a kernel launch did to memory, traced on the simulator (see trace_kernel)."""

    kernel: str
    file: str
    grid: tuple
    block: tuple
    blocks: list  # grid points traced
    lines: list[Line]
    hazards: list[Hazard]
    accesses: Accesses
    requests: Requests
    sites: list[Site]
    views: list[View]
    seconds: float  # running the kernel (the analysis not included)
    analysis_seconds: float = 0.0

    # -- looking things up ----------------------------------------------------------------

    def line(self, line: int, space: str | None = None, op: str | None = None) -> Line:
        """The row of `.lines` for a source line (and space/op when the line has several)."""
        rows = [
            r
            for r in self.lines
            if r.line == line and space in (None, r.space) and op in (None, r.op)
        ]
        if len(rows) != 1:
            found = ", ".join(f"{r.space} {r.op}" for r in self.lines if r.line == line) or "none"
            raise KeyError(
                f"line {line} of {self.kernel}: {len(rows)} rows match "
                f"(space={space}, op={op}); the line has: {found}"
            )
        return rows[0]

    def request(
        self, line: int, *, space=None, op=None, block=None, warp: int = 0, occurrence: int = 0
    ) -> np.ndarray:
        """Access rows of one warp request at `line` (default: the first block's warp 0)."""
        row = self.line(line, space, op)
        match = np.array(
            [
                self.sites[s].line == line and self.sites[s].file == row.file
                for s in self.requests.site
            ],
            dtype=bool,
        )
        match &= np.array(SPACES)[self.requests.space] == row.space
        match &= np.array(OPS)[self.requests.op] == row.op
        match &= (self.requests.warp == warp) & (self.requests.occurrence == occurrence)
        if block is not None:
            wanted = tuple(block) + (0,) * (3 - len(tuple(block)))
            match &= np.array([self.blocks[b] == wanted for b in self.requests.block], dtype=bool)
        found = np.flatnonzero(match)
        if not len(found):
            raise KeyError(f"no request of warp {warp} (occurrence {occurrence}) at line {line}")
        i = found[0]
        return self.requests.rows[self.requests.first[i] : self.requests.first[i + 1]]

    def lanes(self, line: int, **where) -> list[tuple]:
        """(lane, threadIdx, element index, byte address, sector, bank) of one warp request."""
        rows = self.request(line, **where)
        acc = self.accesses
        return [
            (
                int(acc.thread[r] % WARP),
                thread_index(acc.thread[r], self.block),
                tuple(int(v) for v in acc.index[r] if v >= 0),
                int(acc.address[r]),
                int(acc.address[r] // SECTOR_BYTES),
                bank_of(int(acc.address[r])),
            )
            for r in sorted(rows, key=lambda r: acc.thread[r])
        ]

    def rows(self, line: int | None = None) -> list[Access]:
        """Every recorded access (or those at one source line of the kernel's file), in order."""
        acc, names = self.accesses, [v.name for v in self.views]
        return [
            Access(
                self.blocks[acc.block[r]],
                thread_index(acc.thread[r], self.block),
                int(acc.thread[r] // WARP),
                int(acc.thread[r] % WARP),
                names[acc.view[r]],
                SPACES[acc.space[r]],
                OPS[acc.op[r]],
                tuple(int(v) for v in acc.index[r] if v >= 0),
                int(acc.address[r]),
                self.sites[acc.site[r]].line,
                int(acc.interval[r]),
            )
            for r in range(len(acc))
            if line is None or self._at(acc.site[r], line)
        ]

    def _at(self, site: int, line: int) -> bool:
        return self.sites[site].line == line and self.sites[site].file == self.file

    def figure(self, line: int, **where):
        """Picture of one warp request at `line`: which sector or bank each lane hits."""
        from .figures import request_picture

        return request_picture(self, line, **where)

    @property
    def warps(self) -> int:
        """Warps traced (blocks traced x warps per block)."""
        return len(self.blocks) * -(-int(np.prod(self.block)) // WARP)

    @property
    def ok(self) -> bool:
        """True when every line is ideal and no hazard was found."""
        return not self.hazards and all(r.ok for r in self.lines)

    # -- summaries ------------------------------------------------------------------------

    def _where(self, row) -> str:
        if row.file == self.file:
            return str(row.line)
        return f"{os.path.basename(row.file)}:{row.line}"

    def _title(self) -> str:
        total = int(np.prod(self.grid))
        threads = len(self.blocks) * int(np.prod(self.block))
        sampled = "" if len(self.blocks) == total else f" ({len(self.blocks)} of {total} blocks)"
        return (
            f"{self.kernel}[{_dims(self.grid)}, {_dims(self.block)}]: {threads} threads "
            f"traced{sampled}"
        )

    def _cells(self, row: Line) -> tuple:
        unit = _UNIT[row.space]
        if row.op == "atomic":
            unit = "contention" if row.space != "global" else unit
        per = row.per_request(unit)
        ideal = {
            "sectors": row.per_request("ideal_sectors"),
            "wavefronts": row.per_request("ideal_wavefronts"),
        }.get(unit, 1.0)
        return unit, per, ideal

    def summary(self) -> str:
        """The per-line table and the hazards as text."""
        header = (
            f"{'line':>6}  {'space':8} {'op':6} {'requests':>8}  {'per request':>20}  "
            f"{'ideal':>6}  verdict"
        )
        out = [self._title(), header]
        for row in self.lines:
            unit, per, ideal = self._cells(row)
            out.append(
                f"{self._where(row):>6}  {row.space:8} {row.op:6} {row.requests:>8}  "
                f"{per:>9.1f} {unit:<10}  {ideal:>6.1f}  {row.verdict}"
            )
        out.append("hazards: none" if not self.hazards else f"hazards ({len(self.hazards)}):")
        out += [
            f"  {h.kind}: {h.message}" + (f" [{h.count} found]" if h.count > 1 else "")
            for h in self.hazards
        ]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<Trace of {self._title()}: {len(self.lines)} lines, {len(self.hazards)} hazards>"

    def _repr_html_(self) -> str:
        head = "".join(
            f"<th>{h}</th>"
            for h in (
                "line",
                "source",
                "space",
                "op",
                "requests",
                "per request",
                "ideal",
                "verdict",
            )
        )
        body = []
        for row in self.lines:
            unit, per, ideal = self._cells(row)
            colour = "#1a7f37" if row.ok else "#cf222e"
            body.append(
                f"<tr><td>{self._where(row)}</td><td><code>{html.escape(row.source)}</code></td>"
                f"<td>{row.space}</td><td>{row.op}</td><td>{row.requests}</td>"
                f"<td>{per:.1f} {unit}</td><td>{ideal:.1f}</td>"
                f"<td style='color:{colour}'>{html.escape(row.verdict)}</td></tr>"
            )
        items = "".join(
            f"<li style='color:#cf222e'><b>{h.kind}</b>: {html.escape(h.message)}"
            + (f" [{h.count} found]" if h.count > 1 else "")
            + "</li>"
            for h in self.hazards
        )
        hazards = f"<ul>{items}</ul>" if self.hazards else "<p>hazards: none</p>"
        return (
            f"<p><b>{html.escape(self._title())}</b></p><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>{hazards}"
        )


def _dims(dims: tuple) -> str:
    used = max([1] + [k + 1 for k, n in enumerate(dims) if n > 1])
    return str(dims[0]) if used == 1 else str(tuple(dims[:used]))
