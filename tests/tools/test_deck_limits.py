"""The lecture limits of issue 23, measured from the notebooks' JSON (no browser needed).

Per notebook: at most 40 slides on the lecture path (before the '# Appendix' slide), code blocks
of at most 15 lines, figures at least 1,100 px wide at 1280x720 (here the most the deck's CSS lets
a figure take, an upper bound; tests/tools/test_slides.py checks the widths Chromium shows) with
no text under 18 px (the PNG's min-font chunk), speaker notes on every lecture slide. The rest
checks the measuring itself on small notebooks made here.
"""

import base64
import io
import re
from pathlib import Path

import nbformat
import pytest
from gpgpu_tools import slides
from gpgpu_tools.slides import limits
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_lecture_path_keeps_the_limits(path):
    measured = limits.measure(nbformat.read(path, as_version=4), path.stem, path.parent)
    print(measured.line())
    found = measured.breaches()
    assert not found, measured.line() + "\n  " + "\n  ".join(found)


# --- the measuring, on notebooks made here ------------------------------------------------------


def png(width_in=12.0, height_in=4.0, dpi=100, min_font: float | None = 24.0, itxt=False) -> str:
    """A matplotlib figure as base64 PNG, with the min-font chunk (as tEXt, or zipped iTXt)."""
    from matplotlib.figure import Figure
    from PIL import Image, PngImagePlugin

    fig = Figure(figsize=(width_in, height_in), dpi=dpi)
    fig.subplots().plot([1, 2, 3])
    buffer = io.BytesIO()
    metadata = {} if min_font is None or itxt else {limits.MIN_FONT_KEY: str(min_font)}
    fig.savefig(buffer, format="png", metadata=metadata)
    if itxt and min_font is not None:
        info = PngImagePlugin.PngInfo()
        info.add_itxt(limits.MIN_FONT_KEY, str(min_font), zip=True)
        again = io.BytesIO()
        Image.open(io.BytesIO(buffer.getvalue())).save(again, format="png", pnginfo=info)
        buffer = again
    return base64.b64encode(buffer.getvalue()).decode()


def cell(kind, source, slide_type="-", tags=(), png_data=None, outputs=()):
    made = (new_markdown_cell if kind == "markdown" else new_code_cell)(source)
    made.metadata["slideshow"] = {"slide_type": slide_type}
    if tags:
        made.metadata["tags"] = list(tags)
    made.outputs = list(outputs) if kind == "code" else made.get("outputs")
    if png_data:
        made.outputs.append(
            new_output("display_data", data={"image/png": png_data, "text/plain": "<Figure>"})
        )
    if kind == "markdown":
        made.pop("outputs", None)
    return made


def notes(text="Say what the slide shows. Then why it matters."):
    return cell("markdown", text, "notes")


def show_source_output(lines: int):
    """What notebook.show_source leaves in a cell: IPython's Code display."""
    code = "\n".join(f"x{i} = {i}" for i in range(lines))
    return new_output(
        "display_data",
        data={
            "text/html": f'<style>pre {{}}</style><div class="highlight"><pre>{code}</pre></div>',
            "text/plain": code,
        },
    )


def lecture(*extra_cells):
    """A lecture that keeps every limit: title, one figure slide (hide-input), a 15-line kernel,
    an appendix with a long kernel and a narrow figure (not held to the limits)."""
    return new_notebook(
        cells=[
            cell("markdown", "# Lesson 07 · Sample\n\n- a goal", "slide"),
            notes(),
            cell("markdown", "## The measured curve", "slide"),
            cell("code", "plotting.sweep(...)\n" * 12, tags=[limits.HIDE_INPUT], png_data=png()),
            notes(),
            cell("markdown", "### The kernel", "subslide"),
            cell("code", "\n".join(["k = 1"] * 15)),
            cell("markdown", "- one more point", "fragment"),
            notes(),
            *extra_cells,
            cell("markdown", "# Appendix", "slide"),
            cell("code", "\n".join(["tuned = 1"] * 40)),
            cell("markdown", "## A narrow picture", "slide"),
            cell("code", "draw()", png_data=png(4, 3, min_font=6)),
        ]
    )


def test_a_lecture_within_the_limits_passes_and_its_appendix_is_not_counted():
    measured = limits.measure(lecture(), "07_sample")
    assert measured.breaches() == []
    assert (measured.lecture_slides, measured.appendix_slides) == (3, 2)
    assert measured.longest_code() == (15, 3, 6)  # the hide-input cell's 12 lines are not shown
    (figure,) = measured.figures
    assert (figure.natural_width, figure.natural_height, figure.min_font_px) == (1200, 400, 24)
    assert figure.width == 1200 and figure.text_px == 24
    assert measured.without_notes == []
    assert measured.line() == (
        "07_sample: 3 lecture slides (+2 appendix), longest code 15 lines (slide 3), narrowest "
        "figure at most 1200 px (slide 2), smallest figure text at most 24.0 px (slide 2), "
        "0 lecture slides without notes"
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            [cell("markdown", f"## Slide {n}", "slide") for n in range(38)]
            + [notes()] * 0,  # 3 + 38 = 41 slides
            r"41 slides on the lecture path \(at most 40\)",
        ),
        (
            [cell("markdown", "## Long", "slide"), cell("code", "y = 2\n" * 16), notes()],
            r"slide 4 \(cell 10\) shows 16 lines of code \(at most 15\)",
        ),
        (
            [
                cell("markdown", "## Shown source", "slide"),
                cell("code", "notebook.show_source(k)", outputs=[show_source_output(16)]),
                notes(),
            ],
            r"slide 4 \(cell 10\) shows 16 lines of code",
        ),
        (
            [
                cell("markdown", "## Fenced\n\n```python\n" + "z = 3\n" * 17 + "```", "slide"),
                notes(),
            ],
            r"slide 4 \(cell 9\) shows 17 lines of code",
        ),
        (
            [
                cell("markdown", "## Narrow", "slide"),
                cell("code", "d()", png_data=png(10, 3)),
                notes(),
            ],
            r"slide 4 \(cell 10\) shows a figure at most 1000 px wide \(at least 1100",
        ),
        (  # 1300 x 800 px: the 540 px height cap makes it 877.5 px wide on the slide
            [
                cell("markdown", "## Tall", "slide"),
                cell("code", "d()", tags=[limits.HIDE_INPUT], png_data=png(13, 8)),
                notes(),
            ],
            r"shows a figure at most 878 px wide",
        ),
        (  # 1200 x 500 px under its code: the 385 px cap makes it 924 px wide
            [
                cell("markdown", "## Under its code", "slide"),
                cell("code", "d()", png_data=png(12, 5)),
                notes(),
            ],
            r"shows a figure at most 924 px wide",
        ),
        (
            [
                cell("markdown", "## Small text", "slide"),
                cell("code", "d()", tags=[limits.HIDE_INPUT], png_data=png(min_font=12, itxt=True)),
                notes(),
            ],
            r"slide 4 \(cell 10\) shows figure text 12.0 px high \(at least 18\)",
        ),
        (
            [
                cell("markdown", "## No chunk", "slide"),
                cell("code", "d()", png_data=png(min_font=None)),
                notes(),
            ],
            r"slide 4 \(cell 10\): a figure without the gpgpu-lessons:min-font-px chunk",
        ),
        (
            [cell("markdown", "## Silent", "slide"), cell("markdown", "  ", "notes")],
            r"1 lecture slides without speaker notes: 4$",
        ),
    ],
    ids=[
        "41-slides",
        "16-lines",
        "show-source",
        "fenced",
        "narrow",
        "tall",
        "under-code",
        "small-text",
        "no-chunk",
        "no-notes",
    ],
)
def test_each_limit_is_found(extra, message):
    found = limits.measure(lecture(*extra), "07_sample").breaches()
    assert any(re.search(message, line) for line in found), found


def test_the_browser_width_scales_the_figure_text():
    measured = limits.measure(lecture(), "07_sample")
    limits.add_displayed_widths(
        measured, [{"slide": 2, "width": 900, "natural": 1200}, {"slide": 5, "width": 200}]
    )
    (figure,) = measured.figures
    assert measured.displayed and figure.width == 900 and figure.text_px == 18
    assert any("figure 900 px wide" in line for line in measured.breaches())
    assert "narrowest figure 900 px" in measured.line()


def test_a_picture_in_markdown_beside_the_notebook_is_a_figure(tmp_path):
    (tmp_path / "wide.png").write_bytes(base64.b64decode(png(min_font=30)))
    nb = lecture(cell("markdown", "## Picture\n\n![a diagram](wide.png)", "slide"), notes())
    measured = limits.measure(nb, "07_sample", tmp_path)
    picture = measured.figures[-1]
    assert (picture.slide, picture.output, picture.min_font_px) == (4, False, 30)


def test_the_deck_drops_the_code_of_a_hide_input_cell_and_keeps_its_output():
    pytest.importorskip("nbconvert", reason="the decks need nbconvert (the lab extra)")
    nb = lecture()
    nb.cells[3].source = "secret_plumbing_call()"
    nb.cells[3].outputs.append(new_output("stream", name="stdout", text="the shown result\n"))
    nb.cells[6].source = "visible_kernel_line = 1"
    body, _ = slides.exporter().from_notebook_node(nb)
    assert "secret_plumbing_call" not in body and "the shown result" in body
    assert "visible_kernel_line" in body
    assert f"max-height: {limits.MAX_FIGURE_HEIGHT}px" in body
    assert f"max-height: {limits.MAX_FIGURE_HEIGHT_UNDER_CODE}px" in body


def test_a_figure_under_its_code_may_be_shorter_than_one_alone():
    alone = limits.measure(lecture(), "07_sample").figures[0]
    nb = lecture()
    nb.cells[3].metadata["tags"] = []
    under = limits.measure(nb, "07_sample").figures[0]
    assert (alone.results_only, alone.widest) == (True, 1200)
    assert (under.results_only, under.widest) == (False, 1155)  # 1200 x 385 / 400


def test_long_code_in_a_hide_input_cell_breaks_no_slide_convention():
    nb = lecture()
    nb.cells[3].source = "x = 1\n" * 30
    assert not [p for p in slides.problems(nb, "07_sample.ipynb") if p.startswith("cell 3 ")]
    nb.cells[3].metadata["tags"] = []
    assert "cell 3 (code) shows 30 lines of code" in " ".join(slides.problems(nb))
