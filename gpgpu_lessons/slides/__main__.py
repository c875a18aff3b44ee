"""`python -m gpgpu_lessons.slides [--out build/slides] [--check] [notebooks ...]`: build the decks.

`make slides` runs it. With --check, headless Chromium opens every deck and reports what the
tests would (slide count, overflowing slides), and --screenshots writes a PNG of every slide.
"""
import argparse
import sys
from pathlib import Path

import nbformat

from . import build, problems

parser = argparse.ArgumentParser(prog="python -m gpgpu_lessons.slides",
                                 description="Build one offline reveal.js deck per notebook, and an index.")
parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
parser.add_argument("--out", type=Path, default=Path("build/slides"))
parser.add_argument("--check", action="store_true", help="open every deck in headless Chromium and report")
parser.add_argument("--screenshots", action="store_true", help="with --check: a PNG of every slide in OUT/screenshots")
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

if args.check:
    from .browser import Chromium, find_chromium

    if find_chromium() is None:
        sys.exit("--check needs Chromium (Debian: apt-get install chromium)")
    failed = False
    with Chromium(find_chromium()) as chromium:
        for deck in decks:
            seen = chromium.inspect(deck.html)
            if not seen["ready"]:
                print(f"{deck.html.name}: reveal.js did not start: {seen['errors']} {seen['failed']}")
                failed = True
                continue
            outside = [url for url in seen["requests"] if not url.startswith(("file:", "data:"))]
            for line in ([f"{seen['total']} slides, but the metadata asks for {deck.slides}"] * (seen["total"] != deck.slides)
                         + [f"asks the network for {outside}"] * bool(outside)
                         + [f"slide {o['slide']} (#/{o['h']}/{o['v']}) is {o['width']}x{o['height']}"
                            + (f", cuts {o['cutCode']} code block(s) at the right" if o["cutCode"] else "")
                            + f": {o['text']!r}" for o in seen["overflow"]]):
                print(f"{deck.html.name}: {line}")
                failed = True
            if args.screenshots:
                folder = args.out / "screenshots" / deck.html.stem
                folder.mkdir(parents=True, exist_ok=True)
                for n in range(1, seen["total"] + 1):
                    (folder / f"slide-{n:02d}.png").write_bytes(chromium.screenshot(n))
                print(f"{folder}/slide-NN.png  ({seen['total']} screenshots)")
    sys.exit(1 if failed else 0)
