"""`python -m gpgpu_tools.slides [--out build/slides] [--check] [notebooks ...]`: build the decks.

`make slides` runs it. Where Chromium is installed it also prints each deck to a PDF handout
(OUT/pdf/NN_topic.pdf, one slide per page, fragments shown; --no-pdf skips them). With --check it
prints one line per deck measuring its lecture path against the limits of `limits` (slides,
longest code block, narrowest figure, smallest figure text, slides without notes, the densest
slide), then headless Chromium opens every deck and reports what the tests would (slide count,
overflowing slides, text under the navigation controls), ending with one summary line;
--screenshots writes a PNG of every slide, and of each deck's densest lecture slide.
"""

import argparse
import sys
from pathlib import Path

import nbformat

from . import build, problems
from .browser import Chromium, find_chromium, print_pdf
from .limits import add_displayed_widths, measure


def deck_problems(seen: dict, deck) -> list[str]:
    """What the browser found wrong with one opened deck, one line each."""
    if not seen["ready"]:
        return [f"reveal.js did not start: {seen['errors']} {seen['failed']}"]
    outside = [url for url in seen["requests"] if not url.startswith(("file:", "data:"))]
    return (
        [f"{seen['total']} slides, but the metadata asks for {deck.slides}"]
        * (seen["total"] != deck.slides)
        + [f"asks the network for {outside}"] * bool(outside)
        + [
            f"slide {o['slide']} (#/{o['h']}/{o['v']}) is {o['width']}x{o['height']}"
            + (f", cuts {o['cutCode']} code block(s) at the right" if o["cutCode"] else "")
            + f": {o['text']!r}"
            for o in seen["overflow"]
        ]
        + [
            f"slide {u['slide']} (#/{u['h']}/{u['v']}) puts {u['what']!r} "
            "under the navigation controls"
            for u in seen["underControls"]
        ]
        + [f"slide {h['slide']} has no heading: {h['text']!r}" for h in seen["headless"]]
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.slides",
        description="Build one offline reveal.js deck per notebook, and an index.",
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--out", type=Path, default=Path("build/slides"))
    parser.add_argument(
        "--check",
        action="store_true",
        help="measure every deck's lecture path (one line each) and open it in headless Chromium",
    )
    parser.add_argument(
        "--screenshots",
        action="store_true",
        help="with --check: a PNG of every slide, and densest.png, in OUT/screenshots/DECK",
    )
    parser.add_argument("--no-pdf", action="store_true", help="skip the PDF handouts")
    args = parser.parse_args()

    notebooks = args.notebooks or sorted(Path("notebooks").glob("*.ipynb"))
    if not notebooks:
        sys.exit("no notebooks to build (notebooks/*.ipynb is empty)")
    for path in notebooks:
        for problem in problems(nbformat.read(path, as_version=4), path.name):
            print(f"warning: {path}: {problem}", file=sys.stderr)
    decks = build(notebooks, args.out)
    for deck in decks:
        print(f"{deck.html}  {deck.slides:3d} slides  {deck.title}")
    print(f"{args.out / 'index.html'}  (open it in a browser; works offline)")
    measures = {
        deck.html.stem: measure(
            nbformat.read(deck.notebook, as_version=4), deck.html.stem, deck.notebook.parent
        )
        for deck in decks
    }
    chromium_path = find_chromium()
    if chromium_path is None:
        print(
            "PDF handouts and browser checks skipped: they need Chromium "
            "(Debian: apt-get install chromium)"
        )
        return report(measures, [], browser=False) if args.check else 0
    found = []
    with Chromium(chromium_path) as chromium:
        if not args.no_pdf:
            (args.out / "pdf").mkdir(parents=True, exist_ok=True)
            for deck in decks:
                target = args.out / "pdf" / f"{deck.html.stem}.pdf"
                try:
                    target.write_bytes(print_pdf(chromium, deck.html))
                except TimeoutError as problem:
                    sys.exit(f"{target}: {problem} (make slides PDF=0 skips the handouts)")
            print(f"{args.out / 'pdf'}/NN_topic.pdf  ({len(decks)} handouts, one slide per page)")
        for deck in decks if args.check else ():
            seen = chromium.inspect(deck.html)
            found += [f"{deck.html.name}: {line}" for line in deck_problems(seen, deck)]
            if not seen["ready"]:
                continue
            measured = measures[deck.html.stem]
            add_displayed_widths(measured, seen["plots"])
            lecture = seen["characters"][: measured.lecture_slides]
            densest = 1 + max(range(len(lecture)), key=lecture.__getitem__, default=0)
            measured.densest = (densest, lecture[densest - 1] if lecture else 0)
            if args.screenshots:
                folder = args.out / "screenshots" / deck.html.stem
                folder.mkdir(parents=True, exist_ok=True)
                for n in range(1, seen["total"] + 1):
                    (folder / f"slide-{n:02d}.png").write_bytes(chromium.screenshot(n))
                (folder / "densest.png").write_bytes(chromium.screenshot(densest))
                print(f"{folder}/slide-NN.png  ({seen['total']} screenshots, densest.png)")
    return report(measures, found, browser=True) if args.check else 0


def report(measures: dict, found: list[str], browser: bool) -> int:
    """Print each deck's line and what breaks the limits; 1 when anything does."""
    for name, measured in measures.items():
        print(measured.line())
        found += [f"{name}: {line}" for line in measured.breaches()]
    for line in found:
        print(line)
    how = "in Chromium" if browser else "from the notebooks only (no Chromium: widths are bounds)"
    verdict = "all passed" if not found else f"{len(found)} problem(s) above"
    print(f"slides check: {len(measures)} decks, measured {how}: {verdict}")
    return 1 if found else 0


sys.exit(main())
