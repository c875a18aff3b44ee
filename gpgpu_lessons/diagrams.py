"""Explanatory pictures any lesson may use: images side by side, and where two images differ."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import plotting


def show_images(images: dict, *, title: str | None = None, differences: bool = False):
    """Images side by side with their titles (grayscale drawn in gray, 0..255, no smoothing),
    in the slide style: plotting.WIDTH wide, each image as wide as the row allows (4 in at most).

    differences=True: `images` holds two images (say a correct result and a raced one), and a
    third panel shows where they differ (black).
    """
    if differences:
        if len(images) != 2:
            raise ValueError(
                f"differences=True compares two images, got {len(images)}: {list(images)}"
            )
        images = {**images, "where they differ (black)": where_different(*images.values())}
    side = min(4.0, plotting.WIDTH / len(images))
    fig, axes = plotting.figure(1, len(images), height=side + 0.8, squeeze=False)
    for ax, (name, picture) in zip(axes[0], images.items(), strict=True):
        ax.imshow(
            picture,
            cmap="gray" if picture.ndim == 2 else None,
            vmin=0,
            vmax=255,
            interpolation="nearest",
        )
        ax.set_title(name, fontsize=plotting.MIN_FONT_PT)
        ax.set_xticks([])
        ax.set_yticks([])
    if title:
        fig.suptitle(title, fontsize=plotting.MIN_FONT_PT + 1)
    plt.close(fig)
    return fig


def where_different(reference: np.ndarray, got: np.ndarray) -> np.ndarray:
    """A picture of where two images differ: white where equal, black where not (any channel)."""
    wrong = reference != got
    if wrong.ndim == 3:
        wrong = wrong.any(axis=2)
    return np.where(wrong, 0, 255).astype(np.uint8)
