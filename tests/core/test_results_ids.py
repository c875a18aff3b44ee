"""Recorded variants are keyed by stable ids; a record lacking an asked-for id is refused."""

import json

import pytest

from gpgpu_lessons import results, runtime
from gpgpu_lessons.timing import Timing


def stored(name, ms=1.0, **more):
    return {**Timing(name, [ms, ms], 1_000_000).as_dict(), **more}


def variants(*timings):
    return {"kind": "variants", "title": "t", "size": "s", "timings": list(timings)}


def test_an_id_is_the_given_one_else_the_labels_slug():
    data = results.with_ids(
        variants(
            stored("exact grid, 1 x 16 B"),
            stored("renamed label", id="kept"),
            Timing("pinned label", [1.0]).identified("pinned").as_dict(),
        )
    )
    assert results.ids(data) == ["exact-grid-1-x-16-b", "kept", "pinned"]
    assert all("id" not in t["extra"] for t in data["timings"]), "the id moves out of extra"
    assert [t["name"] for t in data["timings"]] == [
        "exact grid, 1 x 16 B",
        "renamed label",
        "pinned label",
    ]


def test_a_sweep_keys_its_series_by_id():
    data = results.with_ids(
        {"kind": "sweep", "series": {"one copy": [], "two copies": []}, "ids": {"two copies": "x2"}}
    )
    assert data["ids"] == {"one copy": "one-copy", "two copies": "x2"}
    assert results.ids({"kind": "table", "columns": [], "rows": []}) == []


def test_two_variants_with_one_id_are_refused():
    with pytest.raises(ValueError, match=r"share the id\(s\) \['a-b'\]"):
        results.with_ids(variants(stored("a b"), stored("a, b")))


def gpu_record(folder, key, data, fmt=results.FORMAT):
    content = {
        "format": fmt,
        "gpu": "NVIDIA H200",
        "date": "2026-11-23",
        "device": {},
        "software": {},
        "experiments": {key: data},
    }
    (folder / "nvidia-h200.json").write_text(json.dumps(content))


def test_format_1_records_read_with_their_labels_slugs_as_ids(tmp_path):
    gpu_record(tmp_path, "01_coalescing/demo", variants(stored("Copy, 4 B")), fmt=1)
    (found,) = results.recorded("01_coalescing/demo", folder=tmp_path)
    assert results.ids(found.data) == ["copy-4-b"]


def test_shown_looks_variants_up_by_id():
    shown = results.Shown(
        results.with_ids(variants(stored("a", 1.0), stored("b", 2.0, id="second"))), "x", False
    )
    assert {k: t.median_ms for k, t in shown.by_id().items()} == {"a": 1.0, "second": 2.0}


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A recorded GPU run of one experiment, read in place of the package's records."""
    monkeypatch.setattr(results, "RECORDED_DIR", tmp_path)
    monkeypatch.delenv(results.RECORD_ENV, raising=False)
    gpu_record(tmp_path, "01_coalescing/demo", variants(stored("copy"), stored("cupy copy")))
    return tmp_path


@pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator shows the recorded run")
def test_a_figure_asking_for_an_id_the_record_lacks_is_refused(shipped):
    with pytest.raises(
        ValueError, match=r"has no variant with id 'copy-renamed'.*'copy', 'cupy-copy'"
    ):
        results.experiment("01_coalescing/demo", variants(stored("copy renamed")))


@pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator shows the recorded run")
def test_a_renamed_label_that_keeps_its_id_shows_the_record(shipped):
    renamed = Timing("copy, renamed", [9.0], 1_000_000).identified("copy")
    shown = results.experiment("01_coalescing/demo", variants(renamed.as_dict()))
    assert not shown.live and list(shown.by_id()) == ["copy", "cupy-copy"]
    assert shown.by_id()["copy"].median_ms == 1.0, "the recorded time, not this run's"


@pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator shows the recorded run")
def test_the_record_may_hold_more_variants_but_not_another_kind(shipped):
    shown = results.experiment("01_coalescing/demo", variants(stored("copy")))
    assert results.ids(shown.data) == ["copy", "cupy-copy"]
    with pytest.raises(ValueError, match="draws a 'sweep'"):
        results.experiment("01_coalescing/demo", {"kind": "sweep", "series": {"copy": []}, "x": []})


def test_the_shipped_record_keys_every_variant_by_a_frozen_id():
    for path in results.RECORDED_DIR.glob("*.json"):
        content = json.loads(path.read_text())
        assert content["format"] == results.FORMAT, f"{path.name}: convert it to format 2"
        for key, data in content["experiments"].items():
            if data["kind"] == "variants":
                assert all("id" in t for t in data["timings"]), key
            if data["kind"] == "sweep":
                assert set(data["ids"]) == set(data["series"]), key
            assert results.with_ids(data) == data, f"{key}: ids are stored, not derived"


def test_benchmark_records_under_the_id_it_is_given():
    from gpgpu_lessons import timing

    found = timing.benchmark(lambda: None, name="a label that may change", repeat=1, id="kept")
    assert results.ids(results.with_ids(variants(found.as_dict()))) == ["kept"]
