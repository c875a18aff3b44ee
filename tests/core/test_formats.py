"""Numbers for people: each formatter takes the unit its name says."""

from gpgpu_lessons import formats, notebook


def test_times_in_ms_and_in_seconds_agree():
    assert formats.format_ms(13_830) == "13.8 s" and formats.format_ms(1.74) == "1.74 ms"
    assert formats.format_ms(0.0521) == "52.1 µs" and formats.format_ms(0.00083) == "830 ns"
    assert formats.format_seconds(13.83) == "13.8 s" and formats.format_seconds(2e-6) == "2 µs"
    assert notebook.duration is formats.format_ms  # the notebooks' name for it


def test_counts_bytes_bandwidths():
    assert formats.format_count(2**28) == "2^28" and formats.format_count(1000) == "1,000"
    assert formats.format_bytes(512) == "512 B" and formats.format_bytes(3 * 2**19) == "1.5 MiB"
    assert formats.format_bytes(2**31) == "2 GiB"
    assert formats.format_gbps(3890.4) == "3,890 GB/s" and formats.format_gbps(12.54) == "12.5 GB/s"


def test_percentages_and_ratios():
    assert formats.format_percent(97.4) == "97%" and formats.format_percent(4.24) == "4.2%"
    assert formats.format_percent(0.312) == "0.31%"
    assert [formats.format_ratio(r) for r in (1234.5, 1, 0.1, 0.0413)] == [
        "1,234.5x",
        "1.0x",
        "0.1x",
        "0.041x",
    ]
