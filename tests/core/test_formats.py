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


def test_plain_numbers_never_in_e_notation():
    cases = {0.874996951640809: "0.875", 5.1627e-08: "5.16 × 10⁻⁸", -3e-5: "-3 × 10⁻⁵"}
    cases |= {0.0: "0", 0.0018372: "0.001837", 12345.6: "12,346", 9.99e-4: "9.99 × 10⁻⁴"}
    assert {v: formats.format_number(v) for v in cases} == cases


def test_tables_write_small_floats_as_powers_of_ten(capsys):
    from unittest import mock

    with mock.patch.object(notebook, "display") as shown:
        notebook.table(["variant", "relative error"], [["sequential", 5.16e-08]])
    text = shown.call_args.args[0].data
    assert "5.16 × 10⁻⁸" in text and "e-08" not in text
