"""Multi-level Otsu thresholding as optimisation (paper 003's image application).

An individual is K reals in [0, 255]; it is floored and sorted into thresholds
`t_1 <= ... <= t_K`, which split the grey levels into classes [0, t_1], (t_1, t_2], ...,
(t_K, 255] (class j above threshold t, as `skimage.filters.threshold_otsu` uses it). The
objective is minus the between-class variance

    sigma_B^2 = sum_j w_j (mu_j - mu_T)^2

computed from the cumulative histogram sums, so one evaluation costs O(K) whatever the
image size: the 256-bin histogram is computed once, on the device, when the problem is made.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from .base import Problem

LEVELS = 256


def load_image(image: str | np.ndarray, size: int | None = None) -> np.ndarray:
    """A grey uint8 image: a `skimage.data` name (camera, coins, moon, ...), a file, or an array;
    resized to `size` x `size` when given (paper 003 uses 512, 1024, 2048 and 4096)."""
    try:
        import skimage.data
        import skimage.io
        from skimage.color import rgb2gray
        from skimage.transform import resize
        from skimage.util import img_as_ubyte
    except ImportError:
        raise ValueError("Otsu thresholding needs scikit-image: pip install 'heuriscale[images]'") from None
    if isinstance(image, np.ndarray):
        img = image
    elif Path(image).is_file():
        img = skimage.io.imread(image)
    elif hasattr(skimage.data, str(image)) and callable(getattr(skimage.data, str(image))):
        img = getattr(skimage.data, str(image))()
    else:
        raise ValueError(f"image {image!r} is neither a file nor a skimage.data image (e.g. camera, coins, moon)")
    if img.ndim == 3:
        img = rgb2gray(img[..., :3])
    if img.ndim != 2:
        raise ValueError(f"image must be 2-D (grey) or RGB, got shape {img.shape}")
    if size is not None:
        if size < 1:
            raise ValueError(f"image size must be >= 1 pixel, got {size}")
        img = resize(img, (size, size), preserve_range=img.dtype == np.uint8, anti_aliasing=True)
        img = img.round().astype(np.uint8) if img.max() > 1.0 else img
    return img if img.dtype == np.uint8 else img_as_ubyte(img)


class OtsuThresholding(Problem):
    """Maximise the between-class variance of `levels` thresholds on `image` (minimise its negative)."""

    def __init__(self, image: str | np.ndarray = "camera", levels: int = 1, size: int | None = None,
                 device: str | torch.device = "cpu") -> None:
        if isinstance(levels, bool) or not isinstance(levels, int) or not 1 <= levels <= 254:
            raise ValueError(f"levels (number of thresholds) must be an integer in 1..254, got {levels!r}")
        super().__init__(levels, 0.0, LEVELS - 1.0)
        self.name = "otsu"
        self.image_name = image if isinstance(image, str) else "array"
        self.image = load_image(image, size)
        pixels = torch.from_numpy(self.image).to(device)
        hist = torch.bincount(pixels.flatten().long(), minlength=LEVELS).double()  # once, on the device
        p = hist / hist.sum()
        levels_ = torch.arange(LEVELS, device=p.device, dtype=p.dtype)
        # cumulative sums with a leading 0, so that class (a, b] is omega[b + 1] - omega[a + 1]
        self.omega = torch.cat([p.new_zeros(1), p.cumsum(0)])
        self.mu = torch.cat([p.new_zeros(1), (levels_ * p).cumsum(0)])

    def thresholds(self, x: torch.Tensor) -> torch.Tensor:
        """Decoded integer thresholds, sorted: floor(x) in 0..255."""
        return torch.floor(x).clamp(0, LEVELS - 1).sort(-1).values.long()

    def between_class_variance(self, t: torch.Tensor) -> torch.Tensor:
        """sigma_B^2 for integer thresholds t[..., K] (sorted), from the cumulative sums."""
        edges = torch.cat([torch.full_like(t[..., :1], -1), t, torch.full_like(t[..., :1], LEVELS - 1)], -1) + 1
        w = self.omega[edges[..., 1:]] - self.omega[edges[..., :-1]]
        m = self.mu[edges[..., 1:]] - self.mu[edges[..., :-1]]
        mu_t = self.mu[-1]
        # w_j (mu_j - mu_T)^2 with mu_j = m_j / w_j, written so empty classes contribute 0
        terms = torch.where(w > 0, (m - w * mu_t) ** 2 / torch.where(w > 0, w, 1.0), 0.0)
        return terms.sum(-1)

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        return -self.between_class_variance(self.thresholds(x)).to(x.dtype)

    def decode(self, x: torch.Tensor) -> dict:
        t = self.thresholds(x.to(self.omega.device))
        return {"thresholds": t.tolist(), "between_class_variance": float(self.between_class_variance(t))}

    def segment(self, x: torch.Tensor) -> np.ndarray:
        """Class labels 0..K of every pixel for the solution x (as `np.digitize` with the thresholds)."""
        t = self.thresholds(x.detach().cpu()).numpy()
        return np.digitize(self.image, bins=t + 0.5).astype(np.uint8)

    def save_thresholded(self, x: torch.Tensor, path: str | Path) -> Path:
        """Write the image with each class painted in its mean grey level (PNG or any skimage format)."""
        import skimage.io

        labels = self.segment(x)
        means = np.array([self.image[labels == k].mean() if (labels == k).any() else 0 for k in range(self.dim + 1)])
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)  # e.g. `--output-image scratch/out.png` on a fresh clone
        skimage.io.imsave(str(path), means[labels].round().astype(np.uint8), check_contrast=False)
        return path
