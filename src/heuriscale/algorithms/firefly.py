"""Firefly Algorithm, as parallelised with CUDA in paper 002.

For every pair (i, j) with j brighter than i (strictly lower objective), i is attracted
towards j (paper 002, section 1.1, step 3):

    x_i <- x_i + beta0 exp(-gamma r_ij^2) (x_j - x_i) + alpha rand(-1, 1)

then clipped to the bounds.

`update="synchronous"` (default) is the GPU kernel's semantics: every firefly moves from
the previous generation's positions, summing the attraction of all brighter fireflies,
with one noise vector `alpha u_i`, `u_i ~ U(-1, 1)^D`, drawn per firefly and generation and
applied only to fireflies that have a brighter one (the brightest stays). The all-pairs
term is computed in tiles of `tile` attractors, so memory stays O(N tile), never O(N^2 D).

`update="sequential"` is paper 002's CPU listing: fireflies updated in place, pair by pair
(Gauss-Seidel), clipped after each move, with fresh noise for every attraction; brightness
is the one evaluated at the start of the generation. It is a Python double loop: slower,
for comparison only.

Units of `alpha` and `gamma`. The attraction e^(-gamma r^2) and the step alpha u are only
meaningful against the size of the search box: with gamma = 1 on [-100, 100]^10 every pair
of a random population is ~80 apart and e^(-6,700) = 0, so no firefly attracts another and
the swarm drifts at random. Yang sets both from the problem's length scale L: gamma = 1/L^m
(m = 2 here) "for a given length scale" and alpha scaled by the variables' scales
(X.-S. Yang, Nature-Inspired Metaheuristic Algorithms, 2nd ed., Luniver Press 2010, the
Firefly chapter's "scalings"), alpha_0 = 0.01 L with "L the average scale of the problem"
(X.-S. Yang and X. He, Firefly Algorithm: Recent Advances and Applications, Int. J. Swarm
Intelligence 1(1):36-50, 2013, arXiv:1308.3898), and his MATLAB code draws the step as
alpha (rand - 0.5) |Ub - Lb|. So:

- `scale="box"` (the default): `alpha` and `gamma` are in units of the box. With L the mean
  over dimensions of `upper - lower` (Yang and He's average scale; one L for every
  dimension, so the kernels keep scalar coefficients: a box much longer in some dimensions
  than others is best rescaled to a cube first), the step is `alpha L u` and the
  absorption `gamma / L^2`. The defaults alpha = 0.001, beta0 = 0.2, gamma = 1 were chosen
  by measurement on CEC 2022 F1, F2, F4, Rastrigin and Rosenbrock at D = 10 (200,000
  evaluations; alpha is held constant here, where Yang also lets it decay over the run,
  and the smaller constant step measured better than 0.01 and 0.003; beta0 = 0.2 measured
  better than 1 with the synchronous update, which sums the pulls of all brighter fireflies).
- `scale="absolute"`: `alpha` and `gamma` are taken as given, in the problem's own units.
  Paper 002's values are absolute (on [-5.12, 5.12]^2): the preset `paper002` is
  `N = 40, alpha = 0.5, beta0 = 0.2, gamma = 1, scale="absolute"`, which the reproduction of
  paper 002 uses.

`coefficients(problem)` gives the absolute (alpha, beta0, gamma) a step uses; the native and
fused kernels take them from there, so every engine moves the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Kernels, Proposal, State, check_count, is_real
from .registry import register_algorithm

#: Attractor tile when `tile` is not set: about this many pair weights per tile and run set.
PAIRS_PER_TILE = 1 << 24


def attraction(x: torch.Tensor, f: torch.Tensor, beta0: float, gamma: float, tile: int):
    """sum_j [f_j < f_i] beta0 exp(-gamma |x_i - x_j|^2) (x_j - x_i), and whether any j is brighter.

    x (runs, n, dim), f (runs, n); attractors are processed `tile` at a time.
    """
    runs, n, _ = x.shape
    sq = (x * x).sum(-1)  # |x_i|^2
    pull = torch.zeros_like(x)
    weight_sum = torch.zeros_like(f)
    has_brighter = torch.zeros_like(f, dtype=torch.bool)
    for start in range(0, n, tile):
        xj, fj, sqj = x[:, start:start + tile], f[:, start:start + tile], sq[:, start:start + tile]
        r2 = (sq[:, :, None] + sqj[:, None, :] - 2.0 * x @ xj.transpose(1, 2)).clamp(min=0.0)
        brighter = fj[:, None, :] < f[:, :, None]  # (runs, n, tile)
        w = torch.where(brighter, beta0 * torch.exp(-gamma * r2), 0.0)
        pull = pull + w @ xj
        weight_sum = weight_sum + w.sum(-1)
        has_brighter = has_brighter | brighter.any(-1)
    return pull - weight_sum[..., None] * x, has_brighter


@register_algorithm
@dataclass(kw_only=True)
class Firefly(Algorithm):
    """Firefly Algorithm with randomness `alpha`, attractiveness `beta0`, absorption `gamma`;
    `scale="box"` (default) reads alpha and gamma relative to the box, `"absolute"` as given."""

    alpha: float = 0.001
    beta0: float = 0.2
    gamma: float = 1.0
    scale: str = "box"
    update: str = "synchronous"
    tile: int | None = None

    name = "firefly"
    min_pop = 2
    population_copies = 10
    paper = "Yang 2008; Abdullah, Firefly + BFGS with OpenMP and CUDA (reproduce firefly)"
    presets = {"paper002": {"pop_size": 40, "alpha": 0.5, "beta0": 0.2, "gamma": 1.0, "scale": "absolute"}}
    state_type = State
    kernels = Kernels(cuda=True, cpu=True)  # engine/kernels/firefly/ (CUDA: the synchronous update)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.update not in ("synchronous", "sequential"):
            raise ValueError(f"firefly: update must be 'synchronous' or 'sequential', got {self.update!r}")
        if self.scale not in ("box", "absolute"):
            raise ValueError(f"firefly: scale must be 'box' (alpha, gamma relative to the box) or 'absolute', "
                             f"got {self.scale!r}")
        values = {"alpha": self.alpha, "beta0": self.beta0, "gamma": self.gamma}
        if not all(is_real(v) and v >= 0 for v in values.values()):
            given = ", ".join(f"{k}={v!r}" for k, v in values.items())
            raise ValueError(f"firefly: alpha, beta0 and gamma must be >= 0 (finite numbers), got {given}")
        if self.tile is not None:
            self.tile = check_count(self.name, "tile", self.tile)

    def coefficients(self, problem: Problem):
        """(alpha, beta0, gamma) in the problem's units: as given when `scale="absolute"`, else
        alpha L and gamma / L^2 with L the mean side of the box (0-d tensors: no host sync)."""
        if self.scale == "absolute":
            return self.alpha, self.beta0, self.gamma
        length = (problem.upper - problem.lower).mean()
        return self.alpha * length, self.beta0, self.gamma / (length * length)

    def _tile(self, runs: int, n: int) -> int:
        """Attractors per tile: `tile`, else about PAIRS_PER_TILE pair weights per tile."""
        return self.tile or max(1, min(n, PAIRS_PER_TILE // (runs * n)))

    def memory_bytes(self, runs: int, dim: int, itemsize: int) -> int:
        n = self.pop_size
        if self.update == "sequential":  # one noise draw per pair: (runs, n, n, dim)
            pairs = runs * n * n * dim
        else:  # about six (runs, n, tile) temporaries of pair weights (measured peak)
            pairs = 6 * runs * n * self._tile(runs, n)
        return super().memory_bytes(runs, dim, itemsize) + pairs * itemsize

    def ask(self, problem: Problem, s: State) -> Proposal:
        if self.update == "sequential":
            return Proposal(self._sequential_move(problem, s))
        runs, n, _ = s.x.shape
        alpha, beta0, gamma = self.coefficients(problem)
        pull, has_brighter = attraction(s.x, s.f, beta0, gamma, self._tile(runs, n))
        noise = alpha * (2.0 * torch.rand_like(s.x) - 1.0)
        x = s.x + pull + torch.where(has_brighter[..., None], noise, 0.0)
        return Proposal(torch.clamp(x, problem.lower, problem.upper))

    def tell(self, problem: Problem, s: State, p: Proposal, f: torch.Tensor) -> State:
        return State(x=p.x, f=f)  # every firefly moves: no selection

    def _sequential_move(self, problem: Problem, s: State) -> torch.Tensor:
        runs, n, dim = s.x.shape
        alpha, beta0, gamma = self.coefficients(problem)
        noise = alpha * (2.0 * torch.rand(runs, n, n, dim, device=s.x.device, dtype=s.x.dtype) - 1.0)
        x = s.x.clone()
        for i in range(n):
            for j in range(n):
                brighter = (s.f[:, j] < s.f[:, i])[:, None]
                r2 = ((x[:, i] - x[:, j]) ** 2).sum(-1, keepdim=True)
                moved = x[:, i] + beta0 * torch.exp(-gamma * r2) * (x[:, j] - x[:, i]) + noise[:, i, j]
                x[:, i] = torch.where(brighter, torch.clamp(moved, problem.lower, problem.upper), x[:, i])
        return x
