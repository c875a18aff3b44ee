"""docs/results.md is what gpgpu_tools.results_report renders from the recorded JSON, today."""

import json
import shutil
import statistics

from gpgpu_tools import results_report

from gpgpu_lessons import results


def test_the_committed_page_is_what_the_records_render():
    assert results_report.PAGE.exists(), "run python -m gpgpu_tools.results_report"
    assert results_report.PAGE.read_text() == results_report.render(), (
        "docs/results.md drifted from gpgpu_lessons/recorded/: run "
        "python -m gpgpu_tools.results_report and commit docs/results.md"
    )


def test_a_changed_record_changes_the_page(tmp_path):
    """Every row is computed: a different measurement gives a different page."""
    folder = tmp_path / "recorded"
    shutil.copytree(results.RECORDED_DIR, folder)
    path = folder / "nvidia-h200.json"
    content = json.loads(path.read_text())
    first = content["experiments"]["00_timing/first_call"]["timings"][0]
    first["samples_ms"] = [s * 2 for s in first["samples_ms"]]
    content["date"] = "2031-01-01"
    path.write_text(json.dumps(content))
    page = results_report.render(folder)
    assert page != results_report.render(results.RECORDED_DIR)
    doubled = statistics.median(first["samples_ms"])
    assert "2031-01-01" in page and f"{results_report.duration(doubled)} vs" in page


def test_check_says_whether_the_page_is_stale(tmp_path, capsys):
    page = tmp_path / "results.md"
    assert results_report.main(["--out", str(page)]) == 0
    assert results_report.main(["--check", "--out", str(page)]) == 0
    page.write_text(page.read_text() + "a hand edit\n")
    assert results_report.main(["--check", "--out", str(page)]) == 1
    assert "stale" in capsys.readouterr().err


def test_the_narrow_flips_show_the_recorded_ratios():
    for path in sorted((results.RECORDED_DIR / "narrow_flips").glob("*.json")):
        lines = results_report.narrow_flips_section(path)
        for row in json.loads(path.read_text())["rows"]:
            shape = " x ".join(map(str, row["shape"]))
            flip = "horizontal" if row["horizontal"] else "vertical"
            (line,) = [x for x in lines if x.startswith(f"| {shape} | {flip} |")]
            times = results_report.times
            ratios = f"{times(row['of_ceiling'])} | {times(row['of_copy'])}"
            assert f"| {row['kernel']} | {ratios} |" in line
            for way, other in row.get("candidates", {}).items():
                column = lines[4].split(" | ").index(way)  # the header row
                assert line.split(" | ")[column] == results_report.times(other["of_ceiling"])
