"""Fast Evolutionary Programming (Yao, Liu & Lin 1999), as run on the GPU in paper 004.

Individuals are pairs `(x_i, eta_i)`. Each generation, every parent makes one offspring
(paper 004, section 3, steps 3-6):

    x_i'(j)   = x_i(j) + eta_i(j) delta_j                              (mutation)
    eta_i'(j) = eta_i(j) exp(tau' N(0,1) + tau N_j(0,1))
    tau = 1 / sqrt(2 sqrt(D)),  tau' = 1 / sqrt(2 D)

with `delta_j` standard Cauchy (FEP) or standard normal (`mutation="gaussian"`, classical
EP, paper 004's formula as printed); `N(0,1)` is drawn once per individual, `N_j(0,1)` per
coordinate, and `x'` uses the old `eta`. Then every individual of the union of parents and
offspring meets `q` opponents drawn uniformly (with replacement) from the union and wins
when its fitness is `<=` the opponent's; the `N` with the most wins survive (ties broken by
fitness). All on the device: one top-k over a wins-then-fitness key, no host round trip.

Choices (see ALGORITHMS.md): offspring are clipped to the bounds; `eta' >= eta_min`
(default 1e-3; `None` disables it) because without a floor the step sizes collapse long
before the optimum; `eta0 = 3.0`. The phases paper 004 times separately are marked as
`mutation` and `selection` (fitness evaluation is marked by the engine).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Kernels, Proposal, State, check_count, check_positive, phase
from .registry import register_algorithm


@dataclass
class FEPState(State):
    eta: torch.Tensor  # (runs, pop, dim) self-adaptive step sizes


def learning_rates(dim: int) -> tuple[float, float]:
    """(tau, tau') = (1 / sqrt(2 sqrt(D)), 1 / sqrt(2 D))."""
    return 1.0 / math.sqrt(2.0 * math.sqrt(dim)), 1.0 / math.sqrt(2.0 * dim)


def tournament_wins(f: torch.Tensor, q: int) -> torch.Tensor:
    """Wins of each of the (runs, m) individuals against q opponents drawn from all m."""
    runs, m = f.shape
    opponents = torch.randint(0, m, (runs, m * q), device=f.device)
    return (f[:, :, None] <= f.gather(1, opponents).reshape(runs, m, q)).sum(-1)


def survivors(wins: torch.Tensor, f: torch.Tensor, n: int) -> torch.Tensor:
    """Indices of the n individuals with most wins, ties broken by lower fitness."""
    m = f.shape[1]
    fitness_rank = f.argsort(-1).argsort(-1)  # 0 = best
    key = wins.to(torch.float64) + (m - fitness_rank).to(torch.float64) / (m + 1)
    return key.topk(n, dim=-1).indices


@register_algorithm
@dataclass(kw_only=True)
class FEP(Algorithm):
    """Evolutionary programming with Cauchy (fast) or Gaussian (classical) mutation."""

    q: int = 10
    eta0: float = 3.0
    mutation: str = "cauchy"
    eta_min: float | None = 1e-3

    name = "fep"
    min_pop = 2
    paper = "Yao, Liu & Lin 1999; Fok, Wong & Wong, IEEE Intell. Syst. 2007 (reproduce fep)"
    presets = {"paper004": {"q": 10, "eta0": 3.0, "mutation": "cauchy"}}
    state_type = FEPState
    kernels = Kernels(cuda=True, cpu=True)  # engine/kernels/fep/

    def __post_init__(self) -> None:
        super().__post_init__()
        self.q = check_count(self.name, "q", self.q, what=" (tournament opponents)")
        if self.mutation not in ("cauchy", "gaussian"):
            raise ValueError(f"fep: mutation must be 'cauchy' or 'gaussian', got {self.mutation!r}")
        check_positive(self.name, eta0=self.eta0)
        if self.eta_min is not None:
            check_positive(self.name, eta_min=self.eta_min)

    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> FEPState:
        return FEPState(x=p.x, f=f, eta=torch.full_like(p.x, self.eta0))

    def ask(self, problem: Problem, s: FEPState) -> Proposal:
        tau, tau_prime = learning_rates(s.x.shape[2])
        with phase("mutation"):
            if self.mutation == "cauchy":
                delta = torch.empty_like(s.x).cauchy_()
            else:
                delta = torch.randn_like(s.x)
            x_child = torch.clamp(s.x + s.eta * delta, problem.lower, problem.upper)
            common = torch.randn_like(s.x[..., :1])  # N(0,1), once per individual
            eta_child = s.eta * torch.exp(tau_prime * common + tau * torch.randn_like(s.x))
            if self.eta_min is not None:
                eta_child = eta_child.clamp(min=self.eta_min)
        return Proposal(x_child, eta=eta_child)

    def tell(self, problem: Problem, s: FEPState, p: Proposal, f: torch.Tensor) -> FEPState:
        n, dim = s.x.shape[1], s.x.shape[2]
        with phase("selection"):
            x_all = torch.cat([s.x, p.x], 1)
            f_all = torch.cat([s.f, f], 1)
            eta_all = torch.cat([s.eta, p.eta], 1)
            keep = survivors(tournament_wins(f_all, self.q), f_all, n)
            rows = keep[..., None].expand(-1, -1, dim)
            return FEPState(x=x_all.gather(1, rows), f=f_all.gather(1, keep), eta=eta_all.gather(1, rows))
