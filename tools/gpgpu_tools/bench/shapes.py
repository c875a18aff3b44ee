"""The sweep: which shapes each family is timed on, scaled to the GPU's L2 cache.

A family declares its kind of shapes (`SWEEPS`): `vectors` (1-D, whole 16-byte words and not),
`matrices` (2-D), `images` (the matrices as gray images and H x W x 3 RGB ones) or `sums`
(the lengths of a reduction); it may leave some out by label (its `skip`) or bring its own
simulator shapes (its `tiny`).

On a GPU every array of a 2-D family or of the copy holds at least `L2_FACTOR` times the L2
cache (runtime.device_info().l2_bytes), so HBM, not the cache, is measured: a power-of-two
shape like the lessons', odd sides, primes, sides that are 2 mod 4, or 4 and 12 mod 16 (rows
of no whole number of 16-byte words), thin matrices (777 x N, N x 777, and 3, 7, 17 or 40
rows or columns: fewer than one tile, or one and a row), 1 x N and N x 1, and
RGB images (H x W x 3). Sum and dot run from 2^16 to 2^30 elements (as far as a quarter of the free
memory allows), with the sizes the issue measured (10^6, 3 x 10^6, 10^7) and an odd one.
`small` is a quick look: fewer shapes, and sums up to 2^26.

In the simulator, `tiny` shapes instead (`TINY`): edge-only ones (smaller than one tile, word
or vector), 1 x N, N x 1 and RGB, and a few that cross one tile, so every kernel is checked on
its bulk and its edge in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SIZES = ("small", "full", "tiny")
SWEEPS = ("vectors", "matrices", "images", "sums")  # the kinds of shapes a family declares
L2_FACTOR = {"full": 4, "small": 2}  # inputs hold at least this many times the L2 cache
DEFAULT_L2 = 50 * 2**20  # when the device does not say
THIN = 777  # the short side of the thin matrices (the 777 x 12345)
FEW = (3, 7, 17, 40)  # short sides below one tile, or one and a row: a few rows or columns
REDUCTION_POWERS = {"full": range(16, 31), "small": range(16, 27, 2)}
REDUCTION_EXTRA = {"full": (10**6, 3 * 10**6, 10**7, 2**25 + 3), "small": (10**6,)}


@dataclass(frozen=True)
class Case:
    """One input shape of one family, and why it is in the sweep."""

    family: str
    shape: tuple[int, ...]
    label: str

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def shape_text(self) -> str:
        return shape_text(self.shape)


def shape_text(shape) -> str:
    """'4097 x 4099', '9999 x 10001 x 3', or a vector's length ('2^26', '67,108,865')."""
    if len(shape) > 1:
        return " x ".join(str(s) for s in shape)
    n = shape[0]
    return f"2^{n.bit_length() - 1}" if n > 1 and n & (n - 1) == 0 else f"{n:,}"


def is_prime(n: int) -> bool:
    """Trial division: enough for the sides of a sweep (up to a few 10^8)."""
    if n < 2:
        return False
    return all(n % p for p in range(2, math.isqrt(n) + 1))


def prime_at_least(n: int) -> int:
    """The smallest prime >= n."""
    while not is_prime(n):
        n += 1
    return n


def odd(n: int) -> int:
    """n, or n + 1 if n is even."""
    return n | 1


def with_remainder(n: int, modulus: int, remainder: int) -> int:
    """The smallest m >= n with m % modulus == remainder."""
    return n + (remainder - n) % modulus


def power_of_two_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def matrices(elements: int, *, mod16: bool = True) -> list[tuple]:
    """(shape, label) of 2-D shapes of at least `elements` elements each."""
    side = math.isqrt(elements)
    square = power_of_two_at_least(side)
    other = lambda first: -(-elements // first)  # noqa: E731  (the side that makes enough)
    low = prime_at_least(side * 4 // 5)
    shapes = [
        ((square, square), "power of 2 (the lessons')"),
        ((square + 1, square - 1), "odd sides"),
        ((low, prime_at_least(other(low))), "primes"),
        ((with_remainder(side, 4, 2), with_remainder(other(side), 4, 2)), "sides 2 mod 4"),
    ]
    if mod16:
        sides = with_remainder(side, 16, 4), with_remainder(other(side), 16, 12)
        shapes.append((sides, "sides 4 and 12 mod 16"))
    long = odd(other(THIN))
    shapes += [((THIN, long), f"{THIN} x N"), ((long, THIN), f"N x {THIN}")]
    for few in FEW:
        long = odd(other(few))
        shapes += [((few, long), f"{few} x N"), ((long, few), f"N x {few}")]
    shapes += [((1, odd(elements)), "1 x N"), ((odd(elements), 1), "N x 1")]
    return shapes


def rgb_images(pixels: int) -> list[tuple]:
    """(shape, label) of H x W x 3 images of at least `pixels` pixels each."""
    side = math.isqrt(pixels)
    multiple = -(-side // 64) * 64
    return [
        ((multiple, multiple, 3), "RGB, sides a multiple of 64"),
        ((odd(side), odd(side) + 2, 3), "RGB, odd sides"),
        ((prime_at_least(side), prime_at_least(side + 100), 3), "RGB, primes"),
        ((1, odd(pixels), 3), "RGB, 1 x N"),
        ((odd(pixels), 1, 3), "RGB, N x 1"),
    ]


def vectors(elements: int) -> list[tuple]:
    """(shape, label) of 1-D lengths of at least `elements`: whole 16-byte words and not."""
    n = power_of_two_at_least(elements)
    return [
        ((n,), "power of 2"),
        ((n + 1,), "power of 2 + 1"),
        ((n + 2,), "power of 2 + 2"),
        ((n + 3,), "power of 2 + 3"),
        ((prime_at_least(n + 4),), "prime"),
    ]


def reduction_sizes(sizes: str, itemsize: int, arrays: int, free_bytes: int | None) -> list[tuple]:
    """(shape, label) of the sums' lengths: powers of 2 and the issue's sizes, as memory allows."""
    lengths = {2**k: "power of 2" for k in REDUCTION_POWERS[sizes]}
    lengths.update({n: "issue's size" if n % 10 == 0 else "odd" for n in REDUCTION_EXTRA[sizes]})
    limit = None if free_bytes is None else free_bytes // 4 // (itemsize * arrays)
    return [((n,), label) for n, label in sorted(lengths.items()) if limit is None or n <= limit]


SMALL_LABELS = {  # the shapes of a `small` sweep: the lessons', and the worst the issue found
    "power of 2 (the lessons')",
    "odd sides",
    f"{THIN} x N",
    "1 x N",
    "RGB, odd sides",
    "power of 2",
    "power of 2 + 1",
}


def images(elements: int) -> list[tuple]:
    """(shape, label) of gray images (the matrices) and RGB ones, each of >= `elements` bytes."""
    return matrices(elements) + rgb_images(elements // 3)


TINY = {  # the simulator's sweep of each kind: edges alone, and a few crossing one tile
    "matrices": [
        ((3, 5), "edge only"),
        ((2, 6), "even sides: wide accesses"),
        ((1, 37), "1 x N"),
        ((37, 1), "N x 1"),
        ((34, 3), "crosses a tile"),
    ],
    "images": [
        ((5, 7), "edge only"),
        ((3, 24), "whole words"),
        ((2, 37), "1 x N-ish"),
        ((9, 1), "N x 1"),
        ((3, 5, 3), "RGB, edge only"),
        ((2, 12, 3), "RGB, whole words"),
    ],
    "vectors": [
        ((1,), "one element"),
        ((3,), "edge only"),
        ((64,), "whole words"),
        ((67,), "bulk and edge"),
    ],
    "sums": [((1,), "one element"), ((3,), "edge only"), ((1001,), "bulk and edge")],
}


def sweep(
    family, sizes: str, *, l2_bytes: int | None = None, free_bytes: int | None = None
) -> list[Case]:
    """The cases of one family (a families.Family) for `sizes` ('small', 'full' or 'tiny')."""
    if sizes not in SIZES:
        raise ValueError(f"sizes must be one of {SIZES}, got {sizes!r}")
    itemsize = np.dtype(family.dtype).itemsize
    if sizes == "tiny":
        found = list(family.tiny) or TINY[family.sweep]
    elif family.sweep == "sums":
        found = reduction_sizes(sizes, itemsize, family.inputs, free_bytes)
    else:
        elements = L2_FACTOR[sizes] * (l2_bytes or DEFAULT_L2) // itemsize
        build = {"vectors": vectors, "matrices": matrices, "images": images}[family.sweep]
        found = [(shape, label) for shape, label in build(elements) if label not in family.skip]
        if sizes == "small":
            found = [(shape, label) for shape, label in found if label in SMALL_LABELS]
    return [Case(family.name, tuple(shape), label) for shape, label in found]
