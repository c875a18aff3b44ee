"""Load the lessons' photographs (images/, see images/README.md) as grayscale or RGB arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

IMAGES_DIR = Path(__file__).resolve().parents[1] / "images"
PHOTOS = {"astronaut": "astronaut.png", "camera": "camera.png"}
MODES = {"gray": "L", "rgb": "RGB"}


def load(
    name: str = "astronaut", *, mode: str = "gray", shape: tuple[int, int] | None = None
) -> np.ndarray:
    """A photograph as uint8, (h, w) for 'gray' or (h, w, 3) for 'rgb', resized to shape=(h, w)."""
    if name not in PHOTOS:
        raise ValueError(f"unknown photograph {name!r}; choose one of {sorted(PHOTOS)}")
    if mode not in MODES:
        raise ValueError(f"mode must be 'gray' or 'rgb', got {mode!r}")
    path = IMAGES_DIR / PHOTOS[name]
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: the images/ folder of the repository must sit "
            "beside gpgpu_lessons/ (install the package from a clone with pip install -e .)"
        )
    with Image.open(path) as image:
        picture = image.convert(MODES[mode])
        if shape is not None:
            if len(shape) != 2 or not all(
                isinstance(s, (int, np.integer)) and s >= 1 for s in shape
            ):
                raise ValueError(
                    f"shape must be (height, width) with positive integers, got {shape!r}"
                )
            picture = picture.resize((int(shape[1]), int(shape[0])), Image.Resampling.BICUBIC)
        return np.asarray(picture, dtype=np.uint8).copy()
