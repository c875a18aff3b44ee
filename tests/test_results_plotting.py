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
        (tmp_path / f"{results.slug(gpu)}.json").write_text(json.dumps({
            "format": 1, "gpu": gpu, "date": "2026-11-22", "device": {}, "software": {},
            "experiments": {"00_timing/demo": {"kind": "variants", "timings": []}}}))
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
        assert content["gpu"] == runtime.device_info().name and "00_timing/demo" in content["experiments"]


def test_shipped_results_are_well_formed():
    for path in results.RECORDED_DIR.glob("*.json"):
        content = json.loads(path.read_text())
        assert content["format"] == results.FORMAT and path.stem == results.slug(content["gpu"])
        for key, data in content["experiments"].items():
            results.check_key(key)
            assert data["kind"] in results.KINDS


def test_variants_figure_names_device_and_ceiling():
    timings = [fake("naive", 2.0), fake("fast", 1.0)]
    fig = plotting.variants(timings, title="demo", ceiling=fake("device-to-device copy", 0.9))
    titles = " ".join(ax.get_title(loc="left") for ax in fig.axes)
    assert "demo" in titles
    assert (plotting.SIMULATOR_NOTE if runtime.MODE == runtime.SIMULATOR else runtime.device_info().name) in titles
    assert any("% of device copy" in ax.get_xlabel() for ax in fig.axes)


def test_variants_without_bytes_shows_time_only():
    fig = plotting.variants([Timing("a", [1.0])], title="t")
    assert sum(ax.get_visible() for ax in fig.axes) == 1


def test_sweep_figure_and_bad_input():
    x = [1, 2, 4]
    fig = plotting.sweep(x, {"copy": [fake("c", m) for m in (1, 2, 3)]}, xlabel="stride", title="s",
                         ceiling=fake("ceiling", 0.5))
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
    fig = plotting.sweep([1, 2], {"a": [fake("c", 1), fake("c", 2)]}, xlabel="x", title="t", marks={"L2": 1.5})
    assert "L2" in [line.get_label() for line in fig.axes[0].get_lines()]


def test_gpu_timings_in_this_mode(tmp_path, monkeypatch):
    live = [fake("a", 1.0)]
    label, timings = results.gpu_timings("00_timing/nothing_recorded", live)
    if runtime.MODE == runtime.GPU:
        assert label == runtime.device_info().name and timings is live
    else:
        assert (label, timings) == (None, None)
