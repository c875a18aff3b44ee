"""What a lecture can hold (issue 23), measured per deck from the notebook's JSON.

The lecture path is every slide before the first Markdown cell whose first line is `# Appendix`
(that slide and the ones after it are the appendix). On the lecture path: at most
MAX_LECTURE_SLIDES slides (horizontal and vertical; fragments do not open slides), code blocks of
at most MAX_CODE_LINES lines (code cells not tagged `hide-input`, fenced code in Markdown and the
output of `notebook.show_source`), figures at least MIN_FIGURE_WIDTH px wide at 1280x720 with no
text under MIN_FIGURE_TEXT px, and speaker notes on every slide.

`measure(nb)` needs no browser. A figure's displayed width comes from the browser where one was
asked (`Measure.displayed`); without it, `Figure.widest` is the most the deck's CSS lets it take
(its natural width, the slide's width, and the height cap), an upper bound: a figure whose bound
is too narrow is too narrow in any browser. The smallest text of a figure is the PNG text chunk
MIN_FONT_KEY (the height in px of its smallest text at natural size) x displayed / natural width.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

MAX_LECTURE_SLIDES = 40
MAX_CODE_LINES = 15
MIN_FIGURE_WIDTH = 1100  # px at 1280x720
MIN_FIGURE_TEXT = 18  # px at 1280x720
MIN_FONT_KEY = "gpgpu-lessons:min-font-px"
HIDE_INPUT = "hide-input"  # a code cell whose source the deck drops (its output stays)
APPENDIX = re.compile(r"^#\s+Appendix\b")
SHOWN = ("slide", "subslide", "fragment", "-")
# The deck's CSS (slides.TEMPLATE) for an output image: at most the slide's width and
# MAX_FIGURE_HEIGHT px tall when its cell is tagged hide-input (the figure has the slide to
# itself), MAX_FIGURE_HEIGHT_UNDER_CODE px when its code is shown above it; never enlarged.
SLIDE_WIDTH = 1280
MAX_FIGURE_HEIGHT = 540
MAX_FIGURE_HEIGHT_UNDER_CODE = 385
FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1\s*$", re.M | re.S)
MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)|<img\s[^>]*src=[\"']([^\"']+)[\"']")


@dataclass
class Figure:
    """One PNG on a slide: its natural size, its min-font chunk, and its width on the slide."""

    slide: int  # 1-based, in reading order (reveal.js's order)
    cell: int
    natural_width: int
    natural_height: int
    min_font_px: float | None  # the chunk's value; None when the PNG has no chunk
    output: bool = True  # an image output of a code cell (else a picture in Markdown)
    results_only: bool = False  # its cell is tagged hide-input: the taller height cap
    displayed_width: float | None = None  # measured in a browser, px at 1280x720

    @property
    def widest(self) -> float:
        """The most the deck's CSS lets it take on the slide, px (an upper bound)."""
        cap = MAX_FIGURE_HEIGHT if self.results_only else MAX_FIGURE_HEIGHT_UNDER_CODE
        tall = self.natural_width * cap / max(1, self.natural_height)
        return min(self.natural_width, SLIDE_WIDTH, tall)

    @property
    def width(self) -> float:
        """Its width on the slide: the browser's, else the upper bound."""
        return self.displayed_width if self.displayed_width is not None else self.widest

    @property
    def text_px(self) -> float | None:
        """The height of its smallest text on the slide, px (None: no chunk to say)."""
        if self.min_font_px is None:
            return None
        return self.min_font_px * self.width / self.natural_width


@dataclass
class Measure:
    """One deck's lecture path, measured."""

    name: str
    lecture_slides: int = 0
    appendix_slides: int = 0
    code: list[tuple[int, int, int]] = field(default_factory=list)  # (lines, slide, cell)
    figures: list[Figure] = field(default_factory=list)  # on lecture slides
    without_notes: list[int] = field(default_factory=list)  # lecture slides
    displayed: bool = False  # figure widths come from a browser
    densest: tuple[int, int] | None = None  # (lecture slide, characters of text), from a browser

    def longest_code(self) -> tuple[int, int, int] | None:
        return max(self.code, default=None)

    def narrowest(self) -> Figure | None:
        return min(self.figures, key=lambda f: f.width, default=None)

    def unmeasured(self) -> list[Figure]:
        return [f for f in self.figures if f.min_font_px is None]

    def smallest_text(self) -> Figure | None:
        measured = [f for f in self.figures if f.min_font_px is not None]
        return min(measured, key=lambda f: f.text_px, default=None)

    def line(self) -> str:
        """One line: slides, longest code, narrowest figure, smallest text, slides without notes."""
        code = self.longest_code()
        narrow = self.narrowest()
        small = self.smallest_text()
        how = "" if self.displayed else " at most"
        parts = [
            f"{self.lecture_slides} lecture slides (+{self.appendix_slides} appendix)",
            f"longest code {code[0]} lines (slide {code[1]})" if code else "no code",
            f"narrowest figure{how} {narrow.width:.0f} px (slide {narrow.slide})"
            if narrow
            else "no figures",
        ]
        if small:
            parts.append(f"smallest figure text{how} {small.text_px:.1f} px (slide {small.slide})")
        elif self.figures:
            parts.append("smallest figure text not measured")
        if self.unmeasured():
            parts.append(f"{len(self.unmeasured())} figure(s) without the {MIN_FONT_KEY} chunk")
        parts.append(f"{len(self.without_notes)} lecture slides without notes")
        if self.densest:
            parts.append(f"densest slide {self.densest[0]} ({self.densest[1]} characters)")
        return f"{self.name}: " + ", ".join(parts)

    def breaches(self) -> list[str]:
        """What breaks the lecture limits, one line each ([] when nothing does)."""
        found = []
        if self.lecture_slides > MAX_LECTURE_SLIDES:
            found.append(
                f"{self.lecture_slides} slides on the lecture path (at most {MAX_LECTURE_SLIDES}):"
                " move the rest after a '# Appendix' slide"
            )
        found += [
            f"slide {slide} (cell {cell}) shows {lines} lines of code (at most {MAX_CODE_LINES})"
            for lines, slide, cell in self.code
            if lines > MAX_CODE_LINES
        ]
        for f in self.figures:
            if f.width < MIN_FIGURE_WIDTH:
                found.append(
                    f"slide {f.slide} (cell {f.cell}) shows a figure "
                    f"{'' if f.displayed_width is not None else 'at most '}{f.width:.0f} px wide "
                    f"(at least {MIN_FIGURE_WIDTH}; natural {f.natural_width}x{f.natural_height})"
                )
            if f.min_font_px is None:
                found.append(
                    f"slide {f.slide} (cell {f.cell}): a figure without the {MIN_FONT_KEY} chunk"
                )
            elif f.text_px < MIN_FIGURE_TEXT:
                found.append(
                    f"slide {f.slide} (cell {f.cell}) shows figure text {f.text_px:.1f} px high "
                    f"(at least {MIN_FIGURE_TEXT})"
                )
        if self.without_notes:
            found.append(
                f"{len(self.without_notes)} lecture slides without speaker notes: "
                + ", ".join(map(str, self.without_notes))
            )
        return found


def slide_type(cell) -> str:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type") or "-"


def hides_input(cell) -> bool:
    return HIDE_INPUT in cell.get("metadata", {}).get("tags", [])


def is_appendix(cell) -> bool:
    """The Markdown cell that opens the appendix: its first line is '# Appendix'."""
    first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
    return cell.cell_type == "markdown" and bool(APPENDIX.match(first))


def code_blocks(cell) -> list[int]:
    """The line counts of the code blocks a shown cell puts on its slide."""
    if cell.cell_type == "markdown":
        return [len(body.rstrip("\n").splitlines()) for _, body in FENCE.findall(cell.source)]
    if cell.cell_type != "code":
        return []
    blocks = [] if hides_input(cell) else [len(cell.source.rstrip("\n").splitlines())]
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        html = "".join(data.get("text/html", ""))
        if 'class="highlight' in html and "text/plain" in data:  # IPython's Code: show_source
            blocks.append(len("".join(data["text/plain"]).rstrip("\n").splitlines()))
    return [n for n in blocks if n]


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return struct.unpack(">II", png[16:24])


def png_text(png: bytes) -> dict[str, str]:
    """A PNG's text chunks (tEXt, zTXt, iTXt), by keyword."""
    found, at = {}, 8
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        body = png[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            found[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            compressed, rest = rest[0], rest[2:]
            _, _, rest = rest.partition(b"\0")  # language tag
            _, _, text = rest.partition(b"\0")  # translated keyword
            found[key.decode("latin-1")] = (zlib.decompress(text) if compressed else text).decode(
                "utf-8"
            )
        elif kind == b"IEND":
            break
    return found


def figure(png: bytes, slide: int, cell: int, output: bool = True, results_only=False) -> Figure:
    width, height = png_size(png)
    chunk = png_text(png).get(MIN_FONT_KEY)
    try:
        min_font = float(chunk) if chunk is not None else None
    except ValueError:
        min_font = None
    return Figure(slide, cell, width, height, min_font, output, results_only)


def cell_pngs(cell, folder: Path | None) -> list[bytes]:
    """The PNGs a shown cell puts on its slide: image outputs, and Markdown's local pictures."""
    if cell.cell_type == "code":
        return [
            base64.b64decode("".join(output["data"]["image/png"]))
            for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})
        ]
    pngs = []
    for groups in MARKDOWN_IMAGE.findall(cell.source if cell.cell_type == "markdown" else ""):
        target = next(g for g in groups if g)
        if folder is not None and target.lower().endswith(".png") and ":" not in target:
            path = folder / target
            if path.is_file():
                pngs.append(path.read_bytes())
    return pngs


def measure(nb, name: str = "", folder: Path | None = None) -> Measure:
    """The lecture path of a notebook, measured from its JSON (`folder`: where its pictures are).

    Slides are numbered as reveal.js numbers them in reading order: the first shown cell opens
    slide 1, each later "slide" or "subslide" cell the next; "notes" cells belong to the slide
    they follow; "skip" cells are nowhere.
    """
    result = Measure(name)
    slide, appendix_at, has_notes = 0, None, set()
    for index, cell in enumerate(nb.cells):
        kind = slide_type(cell)
        if kind in SHOWN and (slide == 0 or kind in ("slide", "subslide")):
            slide += 1
            if appendix_at is None and is_appendix(cell):
                appendix_at = slide
        lecture = appendix_at is None
        if kind == "notes" and cell.source.strip():
            has_notes.add(max(slide, 1))
        if kind not in SHOWN or not lecture:
            continue
        result.code += [(lines, slide, index) for lines in code_blocks(cell)]
        output = cell.cell_type == "code"
        result.figures += [
            figure(png, slide, index, output, hides_input(cell)) for png in cell_pngs(cell, folder)
        ]
    lecture_slides = slide if appendix_at is None else appendix_at - 1
    result.lecture_slides = lecture_slides
    result.appendix_slides = slide - lecture_slides
    result.without_notes = [n for n in range(1, lecture_slides + 1) if n not in has_notes]
    return result


def add_displayed_widths(result: Measure, plots: list[dict]) -> None:
    """Take the figures' widths from a browser's report (slides.browser's INSPECT `plots`: the
    output images in reading order, each with its slide, offsetWidth and naturalWidth)."""
    for slide in {f.slide for f in result.figures}:
        shown = [p for p in plots if p["slide"] == slide]
        ours = [f for f in result.figures if f.slide == slide and f.output]
        for fig, plot in zip(ours, shown, strict=False):
            if plot["natural"] == fig.natural_width:  # the same picture
                fig.displayed_width = plot["width"]
    result.displayed = all(f.displayed_width is not None for f in result.figures)
