"""Explanatory pictures any lesson may use: images side by side, and where two images differ."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def show_images(images: dict, *, title: str | None = None, width: float = 3.2):
    """Images side by side with their titles (grayscale drawn in gray, 0..255, no smoothing)."""
    fig, axes = plt.subplots(
        1,
        len(images),
        figsize=(width * len(images), width + 0.4),
        squeeze=False,
        layout="constrained",
    )
    for ax, (name, picture) in zip(axes[0], images.items(), strict=True):
        ax.imshow(
            picture,
            cmap="gray" if picture.ndim == 2 else None,
            vmin=0,
            vmax=255,
            interpolation="nearest",
        )
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    if title:
        fig.suptitle(title, fontsize=10)
    plt.close(fig)
    return fig


def differences(reference: np.ndarray, got: np.ndarray) -> np.ndarray:
    """A picture of where two images differ: white where equal, black where not (any channel)."""
    wrong = reference != got
    if wrong.ndim == 3:
        wrong = wrong.any(axis=2)
    return np.where(wrong, 0, 255).astype(np.uint8)
