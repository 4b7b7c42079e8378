"""The ZDT problems (Zitzler, Deb and Thiele 2000): two objectives, any dimension >= 2.

Written as pymoo 0.6.2 writes them (`pymoo.problems.multi.zdt`), in torch and vectorised
over every leading dimension: `evaluate(x[..., D])` returns `f[..., 2]` on the device and
in the dtype of `x`. ZDT5 (binary variables) is left out, as in most studies. Each problem's
`pareto_front(n)` is pymoo's: `n` points (100 by default) evenly spaced in f1 on the true
front (ZDT3: `n // 5` on each of its five pieces), sorted by f1.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .base import Problem, check_dim

Tensor = torch.Tensor

#: pymoo's default number of variables of each problem (the paper's).
DEFAULT_DIM = {"zdt1": 30, "zdt2": 30, "zdt3": 30, "zdt4": 10, "zdt6": 10}

#: The f1 ranges of ZDT3's five disconnected front pieces (pymoo's, to 10 digits).
ZDT3_PIECES = (
    (0.0, 0.0830015349),
    (0.182228780, 0.2577623634),
    (0.4093136748, 0.4538821041),
    (0.6183967944, 0.6525117038),
    (0.8233317983, 0.8518328654),
)


def _linear_g(tail: Tensor) -> Tensor:
    """ZDT1-3's g = 1 + 9 / (D - 1) * sum of x_2..x_D (1 on the front, where they are 0)."""
    return 1.0 + 9.0 / tail.shape[-1] * tail.sum(-1)


def zdt1(x: Tensor) -> Tensor:
    f1 = x[..., 0]
    g = _linear_g(x[..., 1:])
    return torch.stack([f1, g * (1.0 - (f1 / g).sqrt())], -1)


def zdt2(x: Tensor) -> Tensor:
    f1 = x[..., 0]
    g = _linear_g(x[..., 1:])
    return torch.stack([f1, g * (1.0 - (f1 / g) ** 2)], -1)


def zdt3(x: Tensor) -> Tensor:
    f1 = x[..., 0]
    g = _linear_g(x[..., 1:])
    ratio = f1 / g
    return torch.stack([f1, g * (1.0 - ratio.sqrt() - ratio * torch.sin(10.0 * math.pi * f1))], -1)


def zdt4(x: Tensor) -> Tensor:
    f1, tail = x[..., 0], x[..., 1:]
    g = 1.0 + 10.0 * tail.shape[-1] + (tail * tail - 10.0 * torch.cos(4.0 * math.pi * tail)).sum(-1)
    return torch.stack([f1, g * (1.0 - (f1 / g).sqrt())], -1)


def zdt6(x: Tensor) -> Tensor:
    x1, tail = x[..., 0], x[..., 1:]
    f1 = 1.0 - torch.exp(-4.0 * x1) * torch.sin(6.0 * math.pi * x1) ** 6
    g = 1.0 + 9.0 * (tail.sum(-1) / tail.shape[-1]) ** 0.25
    return torch.stack([f1, g * (1.0 - (f1 / g) ** 2)], -1)


FUNCTIONS = {"zdt1": zdt1, "zdt2": zdt2, "zdt3": zdt3, "zdt4": zdt4, "zdt6": zdt6}


def zdt_front(name: str, n: int = 100) -> np.ndarray:
    """pymoo's Pareto front of ZDT `name` with `n` points, as an (n, 2) array sorted by f1."""
    if name == "zdt3":
        pieces = []
        for lo, hi in ZDT3_PIECES:
            f1 = np.linspace(lo, hi, n // len(ZDT3_PIECES))
            pieces.append(np.column_stack([f1, 1.0 - np.sqrt(f1) - f1 * np.sin(10.0 * np.pi * f1)]))
        front = np.vstack(pieces)
    elif name == "zdt6":
        f1 = np.linspace(0.2807753191, 1.0, n)
        front = np.column_stack([f1, 1.0 - f1**2])
    else:
        f1 = np.linspace(0.0, 1.0, n)
        front = np.column_stack([f1, 1.0 - (f1**2 if name == "zdt2" else np.sqrt(f1))])
    return front[np.argsort(front[:, 0], kind="stable")]


class ZDT(Problem):
    """ZDT1, 2, 3, 4 or 6 in dimension `dim` (>= 2; pymoo's default when None)."""

    objectives = 2

    def __init__(self, name: str, dim: int | None = None) -> None:
        if name not in FUNCTIONS:
            raise ValueError(f"unknown ZDT problem {name!r}: choose one of {', '.join(FUNCTIONS)}")
        dim = check_dim(DEFAULT_DIM[name] if dim is None else dim)
        if dim < 2:
            raise ValueError(f"problem {name!r} needs dimension >= 2 (x_1 gives f1, the others g), got {dim}")
        # ZDT4 searches x_1 in [0, 1] and the others in [-5, 5]; the others live in [0, 1]^D.
        spread = 5.0 if name == "zdt4" else None
        lower = [0.0] + [-spread if spread else 0.0] * (dim - 1)
        upper = [1.0] + [spread if spread else 1.0] * (dim - 1)
        super().__init__(dim, lower, upper)
        self.name = name
        self._function = FUNCTIONS[name]

    def evaluate(self, x: Tensor) -> Tensor:
        return self._function(x)

    def pareto_front(self, n: int | None = None) -> Tensor:
        """pymoo's front: `n` points (default 100) evenly spaced in f1 (ZDT3: n // 5 per piece)."""
        n = 100 if n is None else _check_points(n, at_least=len(ZDT3_PIECES) if self.name == "zdt3" else 2)
        return torch.from_numpy(zdt_front(self.name, n))


def _check_points(n, at_least: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < at_least:
        raise ValueError(f"the number of front points must be an integer >= {at_least}, got {n!r}")
    return int(n)
