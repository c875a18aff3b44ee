"""`python -m gpgpu_tools.slides [--out build/slides] [--check] [notebooks ...]`: build the decks.

`make slides` runs it. Where Chromium is installed it also prints each deck to a PDF handout
(OUT/pdf/NN_topic.pdf, one slide per page, fragments shown). With --check, headless Chromium
opens every deck and reports what the tests would (slide count, overflowing slides, text under
the navigation controls, plot widths), ending with one summary line; --screenshots writes a PNG
of every slide.
"""

import argparse
import sys
from pathlib import Path

import nbformat

from . import WIDTH, build, problems
from .browser import Chromium, find_chromium

MIN_PLOT_WIDTH = 0.6 * WIDTH  # a plot narrower than this is hard to read from the back of a room


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
        + [
            f"slide {p['slide']} shows a plot {p['width']} px wide "
            f"(at least {MIN_PLOT_WIDTH:.0f}): {p['text']!r}"
            for p in seen["plots"]
            if p["width"] < MIN_PLOT_WIDTH
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.slides",
        description="Build one offline reveal.js deck per notebook, and an index.",
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--out", type=Path, default=Path("build/slides"))
    parser.add_argument(
        "--check", action="store_true", help="open every deck in headless Chromium and report"
    )
    parser.add_argument(
        "--screenshots",
        action="store_true",
        help="with --check: a PNG of every slide in OUT/screenshots",
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
    chromium_path = find_chromium()
    if chromium_path is None:
        if args.check:
            sys.exit("--check needs Chromium (Debian: apt-get install chromium)")
        print("PDF handouts skipped: they need Chromium (Debian: apt-get install chromium)")
        return 0
    found, slides_seen, smallest = [], 0, None
    with Chromium(chromium_path) as chromium:
        if not args.no_pdf:
            (args.out / "pdf").mkdir(parents=True, exist_ok=True)
            for deck in decks:
                target = args.out / "pdf" / f"{deck.html.stem}.pdf"
                target.write_bytes(chromium.pdf(deck.html))
            print(f"{args.out / 'pdf'}/NN_topic.pdf  ({len(decks)} handouts, one slide per page)")
        for deck in decks if args.check else ():
            seen = chromium.inspect(deck.html)
            slides_seen += seen.get("total", 0)
            widths = [p["width"] for p in seen.get("plots", [])]
            smallest = min(
                [smallest, *widths] if smallest is not None else widths, default=smallest
            )
            found += [f"{deck.html.name}: {line}" for line in deck_problems(seen, deck)]
            if args.screenshots and seen["ready"]:
                folder = args.out / "screenshots" / deck.html.stem
                folder.mkdir(parents=True, exist_ok=True)
                for n in range(1, seen["total"] + 1):
                    (folder / f"slide-{n:02d}.png").write_bytes(chromium.screenshot(n))
                print(f"{folder}/slide-NN.png  ({seen['total']} screenshots)")
    if not args.check:
        return 0
    for line in found:
        print(line)
    narrowest = f"narrowest plot {smallest} px" if smallest is not None else "no plots"
    verdict = "all passed" if not found else f"{len(found)} problem(s) above"
    print(f"slides check: {len(decks)} decks, {slides_seen} slides, {narrowest}: {verdict}")
    return 1 if found else 0


sys.exit(main())
