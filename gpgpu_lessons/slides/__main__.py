"""`python -m gpgpu_lessons.slides [--out build/slides] [notebooks ...]`: build the decks (make slides)."""
import argparse
import sys
from pathlib import Path

import nbformat

from . import build, problems

parser = argparse.ArgumentParser(prog="python -m gpgpu_lessons.slides", description=__doc__.split(": ", 1)[1])
parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
parser.add_argument("--out", type=Path, default=Path("build/slides"))
args = parser.parse_args()

notebooks = args.notebooks or sorted(Path("notebooks").glob("*.ipynb"))
if not notebooks:
    sys.exit("no notebooks to build (notebooks/*.ipynb is empty)")
for path in notebooks:
    for problem in problems(nbformat.read(path, as_version=4), path.name):
        print(f"warning: {path}: {problem}", file=sys.stderr)
for deck in build(notebooks, args.out):
    print(f"{deck.html}  {deck.slides:3d} slides  {deck.title}")
print(f"{args.out / 'index.html'}  (open it in a browser; works offline)")
