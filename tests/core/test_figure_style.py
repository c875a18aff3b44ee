"""Figures legible on a slide: one style, and a PNG chunk saying the smallest text's height."""

import base64
import io
import subprocess
import sys
import textwrap

import numpy as np
from PIL import Image

from gpgpu_lessons import diagrams, plotting
from gpgpu_lessons.l00_timing_gpu_code import figures as l00
from gpgpu_lessons.l02_shared_memory import figures as l02
from gpgpu_lessons.l05_atomics_vs_reduction import figures as l05
from gpgpu_lessons.timing import Timing

SLIDE_MIN_PX = 18  # CONVENTIONS.md: no text under 18 px on a 1280 x 720 slide
SLIDE_MIN_WIDTH = 1100  # ... and a figure at least 1,100 px wide


def chunk(png: bytes) -> float:
    return float(Image.open(io.BytesIO(png)).text[plotting.MIN_FONT_KEY])


def test_the_chunk_is_the_smallest_visible_text():
    fig, ax = plotting.figure(height=3)
    ax.set_title("big", fontsize=30)
    ax.text(0.5, 0.5, "small", fontsize=16)
    ax.text(0.5, 0.2, "hidden", fontsize=4, visible=False)
    ax.text(0.5, 0.1, "   ", fontsize=5)  # blank: nothing to read
    ax.tick_params(labelsize=20)
    png = plotting.png(fig)
    assert chunk(png) == round(16 * plotting.DPI / 72, 1)
    assert Image.open(io.BytesIO(png)).size[0] == plotting.WIDTH * plotting.DPI


def test_figures_for_slides_are_wide_with_large_text():
    shown = {
        "timeline": l00.launch_timeline(),
        "hierarchy": l02.memory_hierarchy(),
        "trees": l05.trees(),
        "images": diagrams.show_images({"a": np.zeros((4, 4)), "b": np.full((4, 4), 255)}),
        "variants": plotting.variants(
            [Timing("a", [1.0], 10**6), Timing("b", [60.0], 10**6)],
            title="t",
            ceiling=Timing("copy", [0.9], 10**6),
        ),
    }
    for name, fig in shown.items():
        png = plotting.png(fig)
        width = Image.open(io.BytesIO(png)).size[0]
        # shown SLIDE_MIN_WIDTH wide (at least), the smallest text scales with the picture
        assert width >= SLIDE_MIN_WIDTH, name
        assert chunk(png) * SLIDE_MIN_WIDTH / width >= SLIDE_MIN_PX, name


def test_the_hierarchy_puts_local_memory_off_chip():
    fig = l02.memory_hierarchy()
    ax = fig.axes[0]
    chip_bottom = 2.2  # the dashed "on chip" box starts here (data units: inches)
    local = [t for t in ax.texts if "local memory" in t.get_text()]
    assert local and all(t.get_position()[1] < chip_bottom for t in local)


def test_ipython_shows_figures_with_the_chunk_even_under_the_inline_backend():
    """In a fresh process: the inline backend's formatter, then ours, then %matplotlib again."""
    script = textwrap.dedent(
        """
        import base64, io
        from IPython.terminal.interactiveshell import TerminalInteractiveShell as Shell
        from PIL import Image
        shell = Shell.instance()
        shell.enable_matplotlib("inline")
        from gpgpu_lessons import plotting
        plotting.register_png_formatter()
        shell.enable_matplotlib("inline")  # a later %matplotlib inline keeps ours
        fig, ax = plotting.figure(height=2)
        with plotting.styled():
            ax.set_title("t")
        formatter = shell.display_formatter.formatters["image/png"]
        formatter.enabled = True  # a terminal shows no PNG; a notebook's kernel does
        data = formatter(fig)
        png = base64.b64decode(data) if isinstance(data, str) else data
        print(Image.open(io.BytesIO(png)).text[plotting.MIN_FONT_KEY])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    shown = float(done.stdout.strip().splitlines()[-1])
    assert shown == round(plotting.MIN_FONT_PT * plotting.DPI / 72, 1)  # the tick labels


def test_png_base64_is_what_ipython_expects():
    fig, _ = plotting.figure(height=2)
    assert chunk(base64.b64decode(plotting._png_base64(fig))) > 0
