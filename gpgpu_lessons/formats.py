"""Numbers written for people, each formatter named by the unit it takes."""

from __future__ import annotations


def format_ms(ms: float) -> str:
    """A time given in milliseconds: '13.8 s', '1.74 ms', '52.1 µs', '830 ns' (3 digits)."""
    for unit, scale in (("s", 1e3), ("ms", 1.0), ("µs", 1e-3)):
        if abs(ms) >= scale:
            return f"{ms / scale:.3g} {unit}"
    return f"{ms * 1e6:.3g} ns"


def format_seconds(seconds: float) -> str:
    """A time given in seconds, as `format_ms` writes it."""
    return format_ms(1e3 * seconds)


def format_count(n: int) -> str:
    """An element count: '100', '10,000', '2^28' (powers of two from 2^10 up)."""
    n = int(n)
    if n >= 1024 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def format_bytes(nbytes: float) -> str:
    """A size given in bytes: '512 B', '4 KiB', '1.5 MiB', '2 GiB' (3 digits)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def format_gbps(gbs: float) -> str:
    """A bandwidth given in GB/s: '3,890 GB/s', '12.5 GB/s', '0.031 GB/s'."""
    return f"{gbs:,.0f} GB/s" if gbs >= 100 else f"{gbs:.3g} GB/s"


def format_percent(value: float) -> str:
    """A percentage given in per cent: '97%', '4.2%', '0.31%' (two digits below 10)."""
    return f"{value:,.0f}%" if value >= 10 else f"{value:.2g}%"


def format_ratio(ratio: float) -> str:
    """A speed-up or time ratio: '14.9x', '1.0x', '0.042x' (small ones keep two digits)."""
    return f"{ratio:,.1f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_number(value: float) -> str:
    """A plain number: '12,345', '0.8750', '1.27 × 10⁻⁷' (4 digits; tiny ones as powers of ten)."""
    if value != 0 and abs(value) < 1e-3:
        mantissa, exponent = f"{value:.2e}".split("e")
        return f"{float(mantissa):.3g} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
