"""Differential Evolution, DE/rand/1/bin (Storn & Price 1997).

R. Storn and K. Price, "Differential Evolution - A Simple and Efficient Heuristic for Global
Optimization over Continuous Spaces", Journal of Global Optimization 11 (1997) 341-359.

Each generation, every target vector x_i of the population makes one trial vector, with
r1, r2, r3 drawn uniformly from the population, mutually different and different from i:

    v_i  = x_r1 + F (x_r2 - x_r3)                                   (2)  mutation
    u_ij = v_ij  if rand_ij <= CR or j = jrand_i,  else x_ij       (4)  binomial crossover
    x_i  <- u_i  if f(u_i) < f(x_i)                                      selection

with rand_ij ~ U[0, 1) per coordinate and jrand_i ~ U{1..D} per vector, so every trial takes
at least one coordinate of v_i. Every vector of the generation is evaluated once.

Choices:
- defaults F = 0.5 and CR = 0.9: the paper's "good initial choice" for F and its advice to
  try a large CR first ("CR = 0.9 or CR = 1.0 ... to see if a quick solution is possible");
  it suggests a population of 5 D to 10 D, which `pop_size` leaves to the caller;
- selection keeps the trial only when it is strictly better, as the paper states it;
- bounds: the paper leaves them to the user. A coordinate of u_i outside the box is set to
  the midpoint of x_ij and the bound it crossed (the repair of JADE and L-SHADE), so trials
  stay inside without piling onto the boundary.

This file is the algorithm's whole specification (it has no kernels of its own): the engine
runs it eagerly on the CPU and eagerly, graph-replayed or compiled on CUDA. It is also the
worked example of docs/adding-an-algorithm.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Proposal, State, check_positive, is_real
from .registry import register_algorithm


def distinct_others(runs: int, n: int, k: int, device) -> torch.Tensor:
    """Indices (runs, n, k): for each member i of a population of n, k members drawn
    uniformly without replacement from the others (all different, none equal to i).

    Draw m (m = 0..k-1) is uniform over the n - 1 - m members not excluded yet: a number
    u in 0..n-2-m skips past each excluded index e, in ascending order, where u >= e."""
    excluded = torch.arange(n, device=device)[None, :, None].expand(runs, n, 1)
    picks = []
    for m in range(k):
        # float64 draws: floor(r * count) stays below count for any population size
        u = (torch.rand(runs, n, 1, device=device, dtype=torch.float64) * (n - 1 - m)).floor().long()
        for e in range(m + 1):
            u = u + (u >= excluded[..., e:e + 1]).long()
        picks.append(u)
        excluded = torch.sort(torch.cat([excluded, u], -1), -1).values
    return torch.cat(picks, -1)


def _rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x (runs, n, dim) at row indices (runs, n) -> (runs, n, dim)."""
    return x.gather(1, index[..., None].expand(-1, -1, x.shape[-1]))


@register_algorithm
@dataclass(kw_only=True)
class DE(Algorithm):
    """Differential Evolution DE/rand/1/bin with mutation factor `F` and crossover rate `CR`."""

    F: float = 0.5
    CR: float = 0.9

    name = "de"
    paper = "Storn & Price 1997"
    min_pop = 4  # the target and three other, mutually different vectors
    state_type = State

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self.name, F=self.F)
        if not (is_real(self.CR) and 0 <= self.CR <= 1):
            raise ValueError(f"de: CR must lie in [0, 1], got {self.CR!r}")

    def ask(self, problem: Problem, s: State) -> Proposal:
        runs, n, dim = s.x.shape
        r = distinct_others(runs, n, 3, s.x.device)
        v = _rows(s.x, r[..., 0]) + self.F * (_rows(s.x, r[..., 1]) - _rows(s.x, r[..., 2]))  # (2)

        take = torch.rand_like(s.x) <= self.CR  # (4)
        j_rand = torch.randint(0, dim, (runs, n, 1), device=s.x.device)
        take = take | (torch.arange(dim, device=s.x.device) == j_rand)
        u = torch.where(take, v, s.x)
        u = torch.where(u < problem.lower, (problem.lower + s.x) / 2, u)  # the midpoint repair
        u = torch.where(u > problem.upper, (problem.upper + s.x) / 2, u)
        return Proposal(u)

    def tell(self, problem: Problem, s: State, p: Proposal, f: torch.Tensor) -> State:
        better = f < s.f  # selection: strictly better replaces
        return State(x=torch.where(better[..., None], p.x, s.x), f=torch.where(better, f, s.f))
