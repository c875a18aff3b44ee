"""Every lesson notebook as a reveal.js deck that works offline, with speaker notes.

`build(notebooks, out)` writes one `NN_topic.html` per notebook, an `index.html` linking them and
an `assets/` folder with reveal.js and MathJax, unpacked from their npm packages (pinned, checked
against their sha512) so that a deck opened from disk loads nothing from the network. The decks
are made from the notebooks' committed outputs: nothing is executed.

A code cell tagged `hide-input` shows its output on the slide and its code in the notebook only.
`limits.measure(nb)` measures a deck's lecture path against the lecture limits of issue 23.

`problems(nb)` lists what breaks the slide conventions that every notebook must follow (see
`python -m gpgpu_tools.slides --help`, and the README's section for instructors).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from .limits import HIDE_INPUT, MAX_FIGURE_HEIGHT, MAX_FIGURE_HEIGHT_UNDER_CODE, hides_input

# Reveal.js and MathJax from the npm registry: name, version, the registry's sha512 of the tarball,
# and the files a deck needs (paths inside the package; a folder is copied whole), licence included.
PACKAGES = {
    "reveal.js": (
        "5.2.1",
        "r7//6mIM5p34hFiDMvYfXgyjXqGRta+/psd9YtytsgRlrpRzFv4RbH76TXd2qD+7ZPZEbpBDhdRhJaFgfQ7zNQ==",
        [
            "LICENSE",
            "dist/reveal.css",
            "dist/reveal.js",
            "dist/theme/white.css",
            "dist/theme/fonts/source-sans-pro",
            "plugin/notes/notes.js",
        ],
    ),
    "mathjax": (
        "3.2.2",
        "Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
        ["LICENSE", "es5/tex-svg.js", "es5/input/tex/extensions", "es5/ui", "es5/a11y"],
    ),
}

SLIDE_TYPES = ("slide", "subslide", "fragment", "-", "skip", "notes")
SHOWN = ("slide", "subslide", "fragment", "-")  # the slide types whose cell is on a slide
WIDTH, HEIGHT = 1280, 720  # the slide size reveal.js lays out and scales
MAX_CODE_LINES = 22  # code lines a shown cell may have (see problems)
MAX_CODE_COLUMNS = 100  # characters in a line of a shown code cell
TITLE = re.compile(r"^# Lesson (\d\d) · (\S.*)$")

# The reveal template of nbconvert, minus everything it loads from a CDN (jQuery, require.js,
# mermaid, MathJax 2, widgets), plus local reveal.js, its notes plugin and MathJax 3 (SVG output:
# no web fonts to load).
TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}
<script>
window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], processEscapes: true},
  svg: {fontCache: 'global'},
  options: {ignoreHtmlClass: 'tex2jax_ignore', processHtmlClass: 'tex2jax_process'}
};
</script>
<script src="assets/mathjax/es5/tex-svg.js"></script>
<style>
:root {
  --jp-content-font-size1: 20px;
  --jp-code-font-size: 18px;
}
.reveal .slides section h1, .reveal .slides section h2, \
.reveal .slides section h3 { text-transform: none; }
/* code flush left, wrapped only where a line has a space, never inside a word */
.reveal pre, .reveal pre code, .reveal .jp-OutputArea-output pre {
  white-space: pre-wrap !important; word-break: normal !important; overflow-wrap: normal !important;
  word-wrap: normal !important; text-align: left; margin-left: 0;
}
.reveal .jp-InputArea, .reveal .jp-OutputArea { margin-left: 0; }
/* plots as wide as the slide allows; taller where the cell's code is not shown (hide-input) */
.reveal .jp-OutputArea-output img {
  max-width: 100%; max-height: @UNDER_CODE@px; width: auto; height: auto;
}
.reveal .celltag_hide-input .jp-OutputArea-output img { max-height: @MAX_FIGURE_HEIGHT@px; }
</style>
{%- endblock html_head_js_mathjax -%}
{%- block footer_js -%}
<script src="{{ resources.reveal.url_prefix }}/dist/reveal.js"></script>
<script src="{{ resources.reveal.url_prefix }}/plugin/notes/notes.js"></script>
<script>
Reveal.initialize({
  width: {{ resources.reveal.width }}, height: {{ resources.reveal.height }}, margin: 0.04,
  controls: true, progress: true, hash: true, center: true,
  slideNumber: "{{ resources.reveal.number }}", transition: "{{ resources.reveal.transition }}",
  pdfSeparateFragments: false, pdfMaxPagesPerSlide: 1, plugins: [RevealNotes]
});
</script>
{%- endblock footer_js -%}
""".replace("@MAX_FIGURE_HEIGHT@", str(MAX_FIGURE_HEIGHT)).replace(
    "@UNDER_CODE@", str(MAX_FIGURE_HEIGHT_UNDER_CODE)
)


@dataclass
class Deck:
    notebook: Path
    html: Path
    title: str
    slides: int


def lesson_title(nb) -> str:
    """'Lesson 01 · Coalescing' from the first cell's heading ('' if there is none)."""
    first = nb.cells[0].source.splitlines() if nb.cells else []
    return first[0].strip().removeprefix("# ") if first and TITLE.match(first[0].strip()) else ""


def slide_type(cell) -> str | None:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


def expected_slides(nb) -> int:
    """How many reveal.js slides (horizontal and vertical) the cells' metadata asks for.

    The first shown cell opens a slide whatever its type; after it, each "slide" or "subslide"
    cell opens the next one. "notes" go into the current slide's speaker notes, "skip" nowhere.
    """
    shown = [slide_type(cell) or "-" for cell in nb.cells if (slide_type(cell) or "-") in SHOWN]
    return (1 + sum(kind in ("slide", "subslide") for kind in shown[1:])) if shown else 0


def problems(nb, name: str = "") -> list[str]:
    """What in this notebook breaks the slide conventions, one line each ([] when nothing does).

    - every cell has metadata.slideshow.slide_type, one of SLIDE_TYPES;
    - the first cell is a markdown title slide "# Lesson NN · Topic" (NN = the file's number),
      and the title slide (that cell and what follows it up to the next slide) lists the learning
      goals as a Markdown list;
    - a code cell shown on a slide (not tagged hide-input) has at most MAX_CODE_LINES lines of at
      most MAX_CODE_COLUMNS characters: longer code belongs in the package (shown with
      notebook.show_source) or in a cell with slide_type "skip" (it runs, but is not on the slides);
    - every slide has a heading: the cell that opens it is Markdown starting with '#'.
    """
    found = []
    opening = True  # the next shown cell opens a slide
    for index, cell in enumerate(nb.cells):
        kind = slide_type(cell) or "-"
        if kind not in SHOWN:
            continue
        if opening or kind in ("slide", "subslide"):
            first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
            if cell.cell_type != "markdown" or not first.startswith("#"):
                found.append(
                    f"cell {index} opens a slide without a heading: open it with a Markdown "
                    "cell that starts with '## ...'"
                )
        opening = False
    for index, cell in enumerate(nb.cells):
        kind = slide_type(cell)
        where = f"cell {index} ({cell.cell_type})"
        if kind is None:
            found.append(f"{where} has no metadata.slideshow.slide_type")
        elif kind not in SLIDE_TYPES:
            found.append(f"{where} has slide_type {kind!r}, not one of {', '.join(SLIDE_TYPES)}")
        if cell.cell_type == "code" and kind in SHOWN and not hides_input(cell):
            lines = cell.source.rstrip("\n").splitlines()
            if len(lines) > MAX_CODE_LINES:
                found.append(
                    f"{where} shows {len(lines)} lines of code on a slide "
                    f"(at most {MAX_CODE_LINES}): "
                    "move the code into the package or make the cell 'skip'"
                )
            wide = [n for n, line in enumerate(lines, 1) if len(line) > MAX_CODE_COLUMNS]
            if wide:
                found.append(
                    f"{where} has code lines wider than {MAX_CODE_COLUMNS} characters "
                    f"(line {wide[0]})"
                )
    if not nb.cells or nb.cells[0].cell_type != "markdown" or not lesson_title(nb):
        found.append('cell 0 is not a markdown title slide starting with "# Lesson NN · Topic"')
    else:
        number = TITLE.match("# " + lesson_title(nb)).group(1)
        if name[:2].isdigit() and name[:2] != number:
            found.append(f"the title says lesson {number} but the file is {name}")
        if slide_type(nb.cells[0]) not in (None, "slide"):
            found.append(
                f"cell 0 (the title) has slide_type {slide_type(nb.cells[0])!r}, not 'slide'"
            )
        title_slide = [nb.cells[0]]
        for cell in nb.cells[1:]:
            if slide_type(cell) in ("slide", "subslide"):
                break
            title_slide.append(cell)
        text = "\n".join(
            c.source for c in title_slide if c.cell_type == "markdown" and slide_type(c) in SHOWN
        )
        if not re.search(r"^\s*(?:[-*+]|\d+\.)\s+\S", text, re.M):
            found.append("the title slide has no learning goals (a Markdown list)")
    return found


def fetch_assets(out: Path, cache: Path) -> Path:
    """Unpack what the decks load into out/assets, from npm tarballs kept in `cache`.

    A tarball missing from the cache is fetched once with `npm pack` (the npm registry); every
    tarball is checked against its pinned sha512 before anything is taken from it.
    """
    cache.mkdir(parents=True, exist_ok=True)
    assets = out / "assets"
    for name, (version, integrity, wanted) in PACKAGES.items():
        tarball = cache / f"{name}-{version}.tgz"
        if not tarball.exists():
            if shutil.which("npm") is None:
                raise RuntimeError(
                    f"npm is needed once to download {name}@{version} into {cache} "
                    "(install Node.js: Debian's 'npm' package or conda's 'nodejs')"
                )
            subprocess.run(
                ["npm", "pack", f"{name}@{version}", "--pack-destination", str(cache), "--silent"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if digest != integrity:
            tarball.unlink()
            raise RuntimeError(
                f"{tarball} was not {name}@{version} (its sha512 differs): removed, build again"
            )
        target = assets / name
        shutil.rmtree(target, ignore_errors=True)
        with tarfile.open(tarball) as archive:
            members = [
                m
                for m in archive.getmembers()
                if m.isfile()
                and any(
                    m.name == f"package/{w}" or m.name.startswith(f"package/{w}/") for w in wanted
                )
            ]
            for member in members:
                destination = target / member.name.removeprefix("package/")
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(archive.extractfile(member).read())
    return assets


def exporter():
    """nbconvert's slides exporter with the offline template, images embedded, 1280x720 slides."""
    import jinja2
    from nbconvert import SlidesExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    made = SlidesExporter(
        extra_loaders=[jinja2.DictLoader({"offline_reveal.html.j2": TEMPLATE})],
        template_file="offline_reveal.html.j2",
        reveal_url_prefix="assets/reveal.js",
        reveal_theme="white",
        reveal_transition="slide",
        reveal_number="c/t",
        reveal_width=str(WIDTH),
        reveal_height=str(HEIGHT),
        embed_images=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    # results, not plumbing: a cell tagged hide-input shows its output without its code
    made.register_preprocessor(
        TagRemovePreprocessor(remove_input_tags={HIDE_INPUT}, enabled=True), enabled=True
    )
    return made


def build(notebooks, out: Path, cache: Path | None = None) -> list[Deck]:
    """Write a deck per notebook, index.html and the assets into `out`; return the decks."""
    import nbformat

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fetch_assets(out, Path(cache) if cache else out.parent / "assets-cache")
    slides = exporter()
    decks = []
    for path in sorted(Path(p) for p in notebooks):
        nb = nbformat.read(path, as_version=4)
        body, _ = slides.from_notebook_node(
            nb, resources={"metadata": {"name": path.stem, "path": str(path.parent)}}
        )
        target = out / f"{path.stem}.html"
        target.write_text(body, encoding="utf-8")
        decks.append(Deck(path, target, lesson_title(nb) or path.stem, expected_slides(nb)))
    (out / "index.html").write_text(index_page(decks), encoding="utf-8")
    return decks


def index_page(decks: list[Deck]) -> str:
    rows = "\n".join(
        f'<li><a href="{html.escape(d.html.name)}">{html.escape(d.title)}</a> '
        f"<span>({d.slides} slides)</span></li>"
        for d in decks
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gpgpu-lessons: slides</title>
<style>body {{font-family: sans-serif; max-width: 46em; margin: 3em auto; line-height: 1.5}}
li {{margin: .4em 0; font-size: 1.2em}} span, p {{color: #555}} \
kbd {{border: 1px solid #aaa; padding: 0 .3em}}</style>
</head><body>
<h1>gpgpu-lessons: slides</h1>
<ul>
{rows}
</ul>
<p>Keys: <kbd>→</kbd>/<kbd>Space</kbd> next, <kbd>S</kbd> speaker view with notes and timer,
<kbd>F</kbd> full screen, <kbd>Esc</kbd> overview. Built from the notebooks' stored outputs;
works offline (open this file from disk).</p>
</body></html>
"""
