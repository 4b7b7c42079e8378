"""Constraint handling: turning `g(x) <= 0` constraints into something every algorithm minimises.

A problem declares constraints by setting `n_constraints` and implementing
`constraints(x) -> g[..., m]` (feasible where every `g <= 0`); its `evaluate` stays the raw
objective. `Constrained(problem, method=...)` wraps it:

- `"penalty"` (default, a static penalty): `f(x) + weight * v(x)`;
- `"deb"` (Deb's feasibility rules as one number): feasible points keep `f(x)`, infeasible
  ones get `offset + v(x)`, so a feasible point beats every infeasible one and infeasible
  points compare by violation. The order is exactly Deb's when `offset` is at least the
  largest objective value in the box (by default it is estimated from 4096 samples, times 2);

with `v(x) = sum_i max(0, g_i(x))` the total violation.
"""

from __future__ import annotations

import torch

from .base import Problem, ProblemWrapper, is_real


def violation(g: torch.Tensor) -> torch.Tensor:
    """Total violation sum_i max(0, g_i) of constraint values g[..., m]."""
    return g.clamp(min=0).sum(-1)


class Constrained(ProblemWrapper):
    """`problem` with its constraints folded into the objective."""

    def __init__(self, problem: Problem, method: str = "penalty", weight: float = 1e5, offset: float | None = None):
        if problem.n_constraints < 1:
            raise ValueError(f"problem {problem.name!r} declares no constraints to handle")
        if method not in ("penalty", "deb"):
            raise ValueError(f"constraint handling must be 'penalty' or 'deb', got {method!r}")
        if not is_real(weight) or not weight > 0:
            raise ValueError(f"penalty weight must be > 0 (a finite number), got {weight!r}")
        if offset is not None and not is_real(offset):
            raise ValueError(f"deb offset must be a finite number, got {offset!r}")
        super().__init__(problem)
        self.method = method
        self.weight = float(weight)
        if method == "deb" and offset is None:
            g = torch.Generator().manual_seed(0)
            sample = problem.lower + (problem.upper - problem.lower) * torch.rand(4096, problem.dim, generator=g, dtype=torch.float64)
            offset = 2.0 * float(problem.to("cpu", torch.float64).evaluate(sample).abs().max())
        self.offset = offset

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        f = self.inner.evaluate(x)
        v = violation(self.inner.constraints(x))
        if self.method == "penalty":  # feasible points keep f exactly (even when weight * 0 would be NaN)
            return torch.where(v > 0, f + self.weight * v, f)
        return torch.where(v > 0, self.offset + v, f)

    def objective(self, x: torch.Tensor) -> torch.Tensor:
        """The raw objective, without penalty."""
        return self.inner.evaluate(x)
