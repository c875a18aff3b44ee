"""Recorded GPU results (the JSON format) and the standard figures."""

import json

import pytest

from gpgpu_lessons import plotting, results, runtime
from gpgpu_lessons.timing import SIMULATED, Timing


def fake(name, ms, nbytes=4_000_000):
    return Timing(name, [ms, ms * 1.1, ms * 0.9], nbytes, SIMULATED)


def test_keys_are_validated():
    assert results.check_key("01_coalescing/stride_sweep")
    for bad in ("coalescing/stride", "01_coalescing", "01_Coalescing/x", 7):
        with pytest.raises(ValueError, match="experiment key must look like"):
            results.check_key(bad)


def test_slug():
    assert results.slug("NVIDIA H200") == "nvidia-h200"
    assert results.slug("NVIDIA GeForce RTX 4090 (laptop)") == "nvidia-geforce-rtx-4090-laptop"


def test_recorded_reads_every_gpu_file(tmp_path):
    for gpu in ("NVIDIA H200", "NVIDIA A100"):
        (tmp_path / f"{results.slug(gpu)}.json").write_text(
            json.dumps(
                {
                    "format": 1,
                    "gpu": gpu,
                    "date": "2026-11-22",
                    "device": {},
                    "software": {},
                    "experiments": {"00_timing/demo": {"kind": "variants", "timings": []}},
                }
            )
        )
    found = results.recorded("00_timing/demo", folder=tmp_path)
    assert [r.gpu for r in found] == ["NVIDIA A100", "NVIDIA H200"]
    assert found[0].label == "recorded on NVIDIA A100, 2026-11-22"
    assert results.recorded("00_timing/other", folder=tmp_path) == []


def test_wrong_format_is_refused(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"format": 99, "experiments": {}}))
    with pytest.raises(ValueError, match="format 99"):
        results.recorded("00_timing/demo", folder=tmp_path)


def test_record_needs_a_known_kind():
    with pytest.raises(ValueError, match="needs 'kind'"):
        results.record("00_timing/demo", {"timings": []})


def test_record_is_off_without_gpu_or_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(results.RECORD_ENV, str(tmp_path))
    written = results.record("00_timing/demo", {"kind": "variants"})
    if runtime.MODE == runtime.SIMULATOR:
        assert written is None and not list(tmp_path.iterdir())
    else:
        content = json.loads(written.read_text())
        assert (
            content["gpu"] == runtime.device_info().name
            and "00_timing/demo" in content["experiments"]
        )


def test_shipped_results_are_well_formed():
    for path in results.RECORDED_DIR.glob("*.json"):
        content = json.loads(path.read_text())
        assert content["format"] == results.FORMAT and path.stem == results.slug(content["gpu"])
        for key, data in content["experiments"].items():
            results.check_key(key)
            assert data["kind"] in results.KINDS


def gpu_fake(name, ms, nbytes=4_000_000):
    return Timing(name, [ms, ms * 1.1, ms * 0.9], nbytes)


def test_variants_figure_names_device_size_and_ceiling():
    timings = [fake("naive", 2.0), fake("fast", 1.0)]
    fig = plotting.variants(
        timings, title="demo", size="2^10 float32", ceiling=fake("device-to-device copy", 0.9)
    )
    titles = " ".join(ax.get_title(loc="left") for ax in fig.axes)
    assert "demo · 2^10 float32" in titles
    assert (
        plotting.SIMULATOR_NOTE if runtime.MODE == runtime.SIMULATOR else runtime.device_info().name
    ) in titles


def test_bandwidth_bars_against_the_ceiling():
    fig = plotting.variants(
        [gpu_fake("naive", 2.0), gpu_fake("fast", 1.0)],
        title="demo",
        ceiling=gpu_fake("device-to-device copy", 0.9),
    )
    right = next(ax for ax in fig.axes if "% of device-to-device copy" in ax.get_xlabel())
    widths = [bar.get_width() for bar in right.patches]  # bottom to top: fast, then naive
    assert widths == pytest.approx([100 * 0.9 / 1.0, 100 * 0.9 / 2.0])
    assert [text.get_text().strip() for text in right.texts] == ["90%", "45%"]


def write_recorded(folder, key, data, gpu="NVIDIA H200"):
    (folder / f"{results.slug(gpu)}.json").write_text(
        json.dumps(
            {
                "format": 1,
                "gpu": gpu,
                "date": "2026-11-22",
                "device": {},
                "software": {},
                "experiments": {key: data},
            }
        )
    )


@pytest.mark.skipif(
    runtime.MODE != runtime.SIMULATOR, reason="the simulator shows the recorded run"
)
def test_the_simulator_shows_the_recorded_run_with_its_own_size(tmp_path, monkeypatch):
    monkeypatch.setenv(results.RECORD_ENV, str(tmp_path))
    recorded = {
        "kind": "variants",
        "title": "Dot product",
        "size": "262,144 float32",
        "timings": [gpu_fake("1 thread", 20.4).as_dict(), gpu_fake("best", 0.05).as_dict()],
        "ceiling": None,
    }
    write_recorded(tmp_path, "01_coalescing/dot_demo", recorded)
    fig = plotting.variants(
        [fake("1 thread", 3.0), fake("best", 2.0)],
        title="Dot product",
        size="256 float32",
        record_as="01_coalescing/dot_demo",
    )
    title = fig.axes[0].get_title(loc="left")
    assert "262,144 float32" in title and "256 float32" not in title
    assert "recorded on NVIDIA H200, 2026-11-22" in title
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["best", "1 thread"]
    assert fig.axes[0].get_xscale() == "log", "20.4 ms beside 0.05 ms needs a log axis"


def test_every_label_stays_inside_the_frame():
    fig = plotting.variants([gpu_fake("slow", 472.0), gpu_fake("fast", 0.24)], title="t")
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    assert all(low < text.xy[0] < high for text in ax.texts)


def test_sweep_legend_sits_beside_the_data():
    series = {f"offset {k}": [gpu_fake("c", m) for m in (1, 2, 3)] for k in range(10)}
    fig = plotting.sweep([1, 2, 4], series, xlabel="stride", title="s")
    legend = fig.axes[0].get_legend()
    assert legend.get_bbox_to_anchor().x0 >= fig.axes[0].get_window_extent().x1 - 1


def test_recorded_experiments_carry_their_sizes_and_figures_show_them(monkeypatch):
    """Every shipped variants/sweep record has a title and a size; its figure's title shows both."""
    monkeypatch.delenv(results.RECORD_ENV, raising=False)
    for path in results.RECORDED_DIR.glob("*.json"):
        for key, data in json.loads(path.read_text())["experiments"].items():
            if data["kind"] not in ("variants", "sweep"):
                continue
            assert data.get("title") and data.get("size"), (
                f"{path.name}: {key} has no title or size"
            )
            if runtime.MODE == runtime.SIMULATOR:
                draw = plotting.variants if data["kind"] == "variants" else plotting.sweep
                args = dict(title="live", size="live size", record_as=key)
                if data["kind"] == "variants":  # one of the recorded variants, asked by its label
                    fig = draw([fake(data["timings"][0]["name"], 1.0)], **args)
                else:
                    fig = draw(
                        [1], {next(iter(data["series"])): [fake("x", 1.0)]}, xlabel="x", **args
                    )
                assert data["size"] in fig.axes[0].get_title(loc="left"), key


def test_variants_without_bytes_shows_time_only():
    fig = plotting.variants([Timing("a", [1.0])], title="t")
    assert sum(ax.get_visible() for ax in fig.axes) == 1


def test_sweep_figure_and_bad_input():
    x = [1, 2, 4]
    fig = plotting.sweep(
        x,
        {"copy": [fake("c", m) for m in (1, 2, 3)]},
        xlabel="stride",
        title="s",
        ceiling=fake("ceiling", 0.5),
    )
    assert fig.axes[0].get_xlabel() == "stride"
    with pytest.raises(ValueError, match="metric must be"):
        plotting.sweep(x, {"a": [fake("c", 1)]}, xlabel="x", title="t", metric="flops")
    with pytest.raises(ValueError, match="needs bytes_moved"):
        plotting.sweep(x, {"a": [Timing("c", [1.0])]}, xlabel="x", title="t")
    with pytest.raises(ValueError, match="at least one series"):
        plotting.sweep(x, {}, xlabel="x", title="t")
    with pytest.raises(ValueError, match="at least one Timing"):
        plotting.variants([], title="t")


def test_sweep_marks_are_drawn():
    fig = plotting.sweep(
        [1, 2], {"a": [fake("c", 1), fake("c", 2)]}, xlabel="x", title="t", marks={"L2": 1.5}
    )
    marks = [line for line in fig.axes[0].get_lines() if line.get_label() == "L2"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [1.5, 1.5]


def test_a_read_only_kernel_is_drawn_against_the_read_ceiling():
    fig = plotting.variants(
        [gpu_fake("sum", 1.0, 4_000_000)],
        title="sum",
        ceiling=Timing("device read", [0.9], 4_000_000),
    )
    assert any("% of device read" in ax.get_xlabel() for ax in fig.axes if ax.get_visible())


def test_times_only_use_one_axis_as_wide_as_the_figure():
    fig = plotting.variants([Timing("a", [1.0]), Timing("b", [50.0])], title="t")
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 1
