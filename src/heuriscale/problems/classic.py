"""Classic benchmark functions, vectorised over every leading dimension.

Each function maps `x[..., D]` to `f[...]` in torch, on the device and in the dtype of `x`.
`CLASSIC` records the usual search box and the known optimum of each; `ClassicProblem`
turns an entry into a `Problem`. Paper 003's "CEC2022 functions" at D = 1000 are the plain
base functions here (Bent Cigar, elliptic, HGBat, Rosenbrock, Griewank) on [-100, 100];
paper 004's f1-f5 are registered as `fep-f1` ... `fep-f5` with its bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .base import BoundLike, Problem, split_bounds

Tensor = torch.Tensor


def _index(x: Tensor) -> Tensor:
    """1, 2, ..., D in the dtype and device of x (a broadcastable row)."""
    return torch.arange(1, x.shape[-1] + 1, device=x.device, dtype=x.dtype)


def sphere(x: Tensor) -> Tensor:
    return (x * x).sum(-1)


def euclidean(x: Tensor) -> Tensor:
    """Paper 001's fitness, f(x, y) = sqrt(x^2 + y^2), in any dimension."""
    return torch.linalg.vector_norm(x, dim=-1)


def rastrigin(x: Tensor) -> Tensor:
    return 10.0 * x.shape[-1] + (x * x - 10.0 * torch.cos(2 * math.pi * x)).sum(-1)


def rosenbrock(x: Tensor) -> Tensor:
    head, tail = x[..., :-1], x[..., 1:]
    return (100.0 * (tail - head * head) ** 2 + (head - 1.0) ** 2).sum(-1)


def griewank(x: Tensor) -> Tensor:
    return (x * x).sum(-1) / 4000.0 - torch.cos(x / _index(x).sqrt()).prod(-1) + 1.0


def ackley(x: Tensor) -> Tensor:
    mean_sq = (x * x).mean(-1)
    mean_cos = torch.cos(2 * math.pi * x).mean(-1)
    return -20.0 * torch.exp(-0.2 * mean_sq.sqrt()) - torch.exp(mean_cos) + 20.0 + math.e


def schwefel_1_2(x: Tensor) -> Tensor:
    return (x.cumsum(-1) ** 2).sum(-1)


def schwefel_2_21(x: Tensor) -> Tensor:
    return x.abs().amax(-1)


def schwefel_2_22(x: Tensor) -> Tensor:
    a = x.abs()
    return a.sum(-1) + a.prod(-1)


def schwefel_2_26(x: Tensor) -> Tensor:
    return -(x * torch.sin(x.abs().sqrt())).sum(-1)


def step(x: Tensor) -> Tensor:
    return (torch.floor(x + 0.5) ** 2).sum(-1)


def zakharov(x: Tensor) -> Tensor:
    s = (0.5 * _index(x) * x).sum(-1)
    return (x * x).sum(-1) + s**2 + s**4


def levy(x: Tensor) -> Tensor:
    w = 1.0 + (x - 1.0) / 4.0
    head, last = w[..., :-1], w[..., -1]
    first = torch.sin(math.pi * w[..., 0]) ** 2
    middle = ((head - 1.0) ** 2 * (1.0 + 10.0 * torch.sin(math.pi * head + 1.0) ** 2)).sum(-1)
    end = (last - 1.0) ** 2 * (1.0 + torch.sin(2 * math.pi * last) ** 2)
    return first + middle + end


def bent_cigar(x: Tensor) -> Tensor:
    return x[..., 0] ** 2 + 1e6 * (x[..., 1:] ** 2).sum(-1)


def elliptic(x: Tensor) -> Tensor:
    """High-conditioned elliptic: sum_i (1e6)^((i-1)/(D-1)) x_i^2."""
    d = x.shape[-1]
    exponent = (_index(x) - 1.0) / max(d - 1, 1)
    return (torch.pow(1e6, exponent) * x * x).sum(-1)


def hgbat(x: Tensor) -> Tensor:
    """HGBat (Beyer & Finck): |r^4 - s^2|^(1/2) + (r^2/2 + s)/D + 1/2, r^2 = sum x^2, s = sum x.

    The plain base function has its minimum 0 at x = (-1, ..., -1); CEC suites shift the
    argument by -1 so that their optimum sits at the shift vector.
    """
    r2 = (x * x).sum(-1)
    s = x.sum(-1)
    return (r2 * r2 - s * s).abs().sqrt() + (0.5 * r2 + s) / x.shape[-1] + 0.5


@dataclass(frozen=True)
class ClassicSpec:
    fn: Callable[[Tensor], Tensor]
    lower: float
    upper: float
    optimum_x: float  # the minimiser's value in every coordinate
    optimum_f: Callable[[int], float]  # the minimum as a function of D
    summary: str


def _zero(_: int) -> float:
    return 0.0


# Schwefel 2.26's minimum, -418.9828872724338 per coordinate at x = 420.968746...
_SCHWEFEL_226_X = 420.96874635998202
_SCHWEFEL_226_F = -418.98288727243379

CLASSIC: dict[str, ClassicSpec] = {
    "sphere": ClassicSpec(sphere, -100, 100, 0.0, _zero, "sum x^2"),
    "euclidean": ClassicSpec(euclidean, -100, 100, 0.0, _zero, "sqrt(sum x^2), paper 001's fitness"),
    "rastrigin": ClassicSpec(rastrigin, -5.12, 5.12, 0.0, _zero, "10 D + sum(x^2 - 10 cos 2 pi x)"),
    "rosenbrock": ClassicSpec(rosenbrock, -30, 30, 1.0, _zero, "sum 100 (x_i+1 - x_i^2)^2 + (x_i - 1)^2"),
    "griewank": ClassicSpec(griewank, -600, 600, 0.0, _zero, "sum x^2/4000 - prod cos(x_i/sqrt i) + 1"),
    "ackley": ClassicSpec(ackley, -32.768, 32.768, 0.0, _zero, "Ackley's exponential function"),
    "schwefel-1.2": ClassicSpec(schwefel_1_2, -100, 100, 0.0, _zero, "sum_i (sum_j<=i x_j)^2"),
    "schwefel-2.21": ClassicSpec(schwefel_2_21, -100, 100, 0.0, _zero, "max |x_i|"),
    "schwefel-2.22": ClassicSpec(schwefel_2_22, -10, 10, 0.0, _zero, "sum |x| + prod |x|"),
    "schwefel-2.26": ClassicSpec(
        schwefel_2_26, -500, 500, _SCHWEFEL_226_X, lambda d: _SCHWEFEL_226_F * d,
        "-sum x sin(sqrt |x|)",
    ),
    "step": ClassicSpec(step, -100, 100, 0.0, _zero, "sum floor(x + 0.5)^2"),
    "zakharov": ClassicSpec(zakharov, -5, 10, 0.0, _zero, "sum x^2 + s^2 + s^4, s = sum i x_i / 2"),
    "levy": ClassicSpec(levy, -10, 10, 1.0, _zero, "Levy function"),
    "bent-cigar": ClassicSpec(bent_cigar, -100, 100, 0.0, _zero, "x_1^2 + 1e6 sum_i>1 x_i^2"),
    "elliptic": ClassicSpec(elliptic, -100, 100, 0.0, _zero, "high-conditioned elliptic"),
    "hgbat": ClassicSpec(hgbat, -100, 100, -1.0, _zero, "HGBat, minimum at x = -1"),
}

#: Paper 004's test functions f1-f5 with its bounds (Yao, Liu & Lin's f1, f3, f5, f8, f9).
FEP_FUNCTIONS: dict[str, tuple[str, float, float]] = {
    "fep-f1": ("sphere", -100, 100),
    "fep-f2": ("schwefel-1.2", -100, 100),
    "fep-f3": ("rosenbrock", -30, 30),
    "fep-f4": ("schwefel-2.26", -500, 500),
    "fep-f5": ("rastrigin", -5.12, 5.12),
}


class ClassicProblem(Problem):
    """One of the classic functions on its usual box, or on `bounds=(lower, upper)`."""

    def __init__(
        self,
        function: str,
        dim: int,
        bounds: tuple[BoundLike, BoundLike] | None = None,
        name: str | None = None,
    ) -> None:
        spec = CLASSIC[function]
        lower, upper = (spec.lower, spec.upper) if bounds is None else split_bounds(bounds)
        super().__init__(dim, lower, upper)
        self.name = name or function
        self.fn = spec.fn
        # The known optimum only holds when the minimiser lies in the box.
        xs = torch.full((self.dim,), spec.optimum_x, dtype=torch.float64)
        if bool(((xs >= self.lower) & (xs <= self.upper)).all()):
            self.optimum_x = xs
            self.optimum_f = spec.optimum_f(self.dim)

    def evaluate(self, x: Tensor) -> Tensor:
        return self.fn(x)
