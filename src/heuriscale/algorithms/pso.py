"""Particle Swarm Optimization, as benchmarked on CPU vs CUDA in paper 001.

Per particle `i` and coordinate, with `r1, r2 ~ U[0, 1)` drawn fresh each time:

    v_i <- w v_i + c1 r1 (pbest_i - x_i) + c2 r2 (gbest - x_i)        (2)
    x_i <- x_i + v_i                                                   (3)

Choices (see ALGORITHMS.md):
- velocities are clamped to +-vmax (default `vmax = ub - lb` per coordinate), positions to
  the bounds;
- `pbest_i` is replaced only when the new fitness is strictly better; `gbest` is the best
  `pbest` after each iteration (paper 001's tree reduction: a min-reduction with index);
- initial velocities are uniform in `[lb - x, ub - x]` (so `x + v` starts inside the box);
- library defaults are the constriction coefficients `w = 0.7298, c1 = c2 = 1.49618`; the
  preset `paper001` is paper 001's `w = 1, c1 = c2 = 2` (it pairs with the `euclidean`
  fitness).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Kernels, Proposal, State, check_finite, check_nonnegative, check_positive, take_rows, uniform
from .registry import register_algorithm


@dataclass
class PSOState(State):
    v: torch.Tensor  # (runs, pop, dim) velocities
    pbest_x: torch.Tensor  # (runs, pop, dim)
    pbest_f: torch.Tensor  # (runs, pop)
    gbest_x: torch.Tensor  # (runs, dim)
    gbest_f: torch.Tensor  # (runs,)


@register_algorithm
@dataclass(kw_only=True)
class PSO(Algorithm):
    """Global-best PSO with inertia weight `w` and acceleration coefficients `c1`, `c2`."""

    w: float = 0.7298
    c1: float = 1.49618
    c2: float = 1.49618
    vmax: float | None = None

    name = "pso"
    min_pop = 2
    population_copies = 10
    paper = "Kennedy & Eberhart 1995; CUDA with tree-reduction global best (reproduce pso)"
    presets = {"paper001": {"w": 1.0, "c1": 2.0, "c2": 2.0}}
    state_type = PSOState
    kernels = Kernels(cuda=True, cpu=True)  # engine/kernels/pso/
    migration_key = "pbest_f"  # islands exchange their best personal bests ...

    def __post_init__(self) -> None:
        super().__post_init__()
        check_finite(self.name, w=self.w)
        check_nonnegative(self.name, c1=self.c1, c2=self.c2)
        if self.vmax is not None:
            check_positive(self.name, vmax=self.vmax)

    def velocity_limit(self, problem: Problem) -> torch.Tensor:
        """vmax per coordinate: `vmax` if given, else the box's span."""
        span = problem.upper - problem.lower
        return span if self.vmax is None else torch.full_like(span, self.vmax)

    def ask_init(self, problem: Problem, runs: int) -> Proposal:
        self.check_dtype(problem.lower.dtype)
        x = uniform(problem.lower, problem.upper, (runs, self.pop_size))
        v = (problem.lower - x) + (problem.upper - problem.lower) * torch.rand_like(x)
        return Proposal(x, v=v)

    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> PSOState:
        best = f.argmin(-1)
        return PSOState(
            x=p.x, f=f, v=p.v, pbest_x=p.x, pbest_f=f,
            gbest_x=take_rows(p.x, best), gbest_f=f.gather(1, best[:, None]).squeeze(1),
        )

    def ask(self, problem: Problem, s: PSOState) -> Proposal:
        r1 = torch.rand_like(s.x)
        r2 = torch.rand_like(s.x)
        vmax = self.velocity_limit(problem)
        v = self.w * s.v + self.c1 * r1 * (s.pbest_x - s.x) + self.c2 * r2 * (s.gbest_x[:, None] - s.x)  # (2)
        v = torch.clamp(v, -vmax, vmax)
        x = torch.clamp(s.x + v, problem.lower, problem.upper)  # (3)
        return Proposal(x, v=v)

    def tell(self, problem: Problem, s: PSOState, p: Proposal, f: torch.Tensor) -> PSOState:
        improved = f < s.pbest_f
        pbest_f = torch.where(improved, f, s.pbest_f)
        pbest_x = torch.where(improved[..., None], p.x, s.pbest_x)
        best = pbest_f.argmin(-1)
        return PSOState(
            x=p.x, f=f, v=p.v, pbest_x=pbest_x, pbest_f=pbest_f,
            gbest_x=take_rows(pbest_x, best), gbest_f=pbest_f.gather(1, best[:, None]).squeeze(1),
        )

    def immigrate(self, state: PSOState, rows: dict) -> PSOState:
        """... so the best newcomer's personal best is the global best the island adopts."""
        s = super().immigrate(state, rows)
        best = s.pbest_f.argmin(-1)
        return s.replace(gbest_x=take_rows(s.pbest_x, best), gbest_f=s.pbest_f.gather(1, best[:, None]).squeeze(1))
