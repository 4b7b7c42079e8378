"""Differential Evolution, DE/rand/1/bin (Storn & Price 1997), and JADE's current-to-pbest/1.

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
- bounds: the paper leaves them to the user. By default (`repair="midpoint"`) a coordinate
  of u_i outside the box is set to the midpoint of x_ij and the bound it crossed (the repair
  of JADE and L-SHADE), so trials stay inside without piling onto the boundary;
  `repair="random"` draws it uniformly in the box instead (K. Price, R. Storn and
  J. Lampinen, "Differential Evolution: A Practical Approach to Global Optimization",
  Springer 2005; also what scipy.optimize.differential_evolution does, against
  which docs/validation.md checks this file).

`strategy="current-to-pbest/1"` takes JADE's mutation instead (J. Zhang and A. C. Sanderson,
"JADE: Adaptive Differential Evolution With Optional External Archive", IEEE Trans. Evol.
Comput. 13(5), 2009, 945-958), with its archive, at the fixed F and CR given here:

    v_i = x_i + F (x_pbest - x_i) + F (x_r1 - x~_r2)
          x_pbest uniform among the max(1, round(p NP)) best (p = 0.05, JADE's), x_r1 from the
          population without x_i, x~_r2 from the population and the archive A without x_i, x_r1;
          the parents a trial replaced enter A, of at most NP members (random ones leave)

JADE's own adaptation of F and CR (mu_F, mu_CR) is algorithm `jade` (`jade.py`); L-SHADE
(`lshade.py`) and jSO (`jso.py`) adapt them from a memory of successes. All three use the
mutation and archive below (`current_to_pbest`, `archive_keep`).

This file is the algorithm's whole specification: the engine runs it eagerly on the CPU and
eagerly, graph-replayed or compiled on CUDA; its native CPU kernel (engine/kernels/de/cpu.py)
computes the same generations and is tested against it. It is also the worked example of
docs/adding-an-algorithm.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Kernels, Proposal, State, check_positive, is_real
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


def rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x (runs, n, dim) at row indices (runs, n) -> (runs, n, dim)."""
    return x.gather(1, index[..., None].expand(-1, -1, x.shape[-1]))


def below(count: torch.Tensor, shape) -> torch.Tensor:
    """Integers uniform in [0, count), shaped (runs, n); count (runs,) per run or (runs, n)."""
    count = count[:, None] if count.ndim == 1 else count
    u = torch.rand(shape, device=count.device, dtype=torch.float64)
    return (u * count.double()).floor().long().clamp(max=(count - 1).clamp(min=0))


def current_to_pbest(x, order, n, best, archive, archive_n, F, Fw, avoid=None) -> torch.Tensor:
    """JADE's current-to-pbest/1 with an archive (SHADE's and jSO's too, with Fw):

        v_i = x_i + Fw_i (x_pbest - x_i) + F_i (x_r1 - x_r2)

    x (runs, n0, dim), the first `n` (runs,) rows of `order` (runs, n0) the population best
    first (rows beyond n: individuals that left, never drawn); x_pbest uniform among the
    `best` (runs,) first of them (not i itself where `avoid` (runs, n0)), x_r1 from the
    population without i, x_r2 from the population and the archive's first `archive_n`
    (runs,) rows without i and r1."""
    runs, n0, _ = x.shape
    i = torch.arange(n0, device=x.device).expand(runs, n0)
    rank = order.argsort(-1)  # each row's place in the order
    avoid = torch.zeros_like(i, dtype=torch.bool) if avoid is None else avoid
    avoid = avoid & (rank < best[:, None])
    k = below(best[:, None] - avoid.long(), (runs, n0))
    pbest = order.gather(1, k + (avoid & (k >= rank)).long())
    r1 = below(n - 1, (runs, n0))
    r1 = r1 + (r1 >= rank).long()  # a place in the order other than i's
    r2 = below(n + archive_n - 2, (runs, n0))
    low, high = torch.minimum(rank, r1), torch.maximum(rank, r1)
    r2 = r2 + (r2 >= low).long()
    r2 = r2 + (r2 >= high).long()  # from P ∪ A without i and r1
    r1 = order.gather(1, r1)
    in_pop = r2 < n[:, None]
    pool = torch.cat([x, archive], 1)
    r2 = torch.where(in_pop, order.gather(1, r2.clamp(max=n0 - 1)), n0 + r2 - n[:, None]).clamp(max=pool.shape[1] - 1)
    return x + Fw[..., None] * (rows(x, pbest) - x) + F[..., None] * (rows(x, r1) - rows(pool, r2))


def archive_keep(archive, archive_n, parents, joined, capacity):
    """The archive after the `joined` (runs, n) rows of `parents` enter it: a uniformly random
    subset of its members and the newcomers, at most `capacity` (runs,) of them, first."""
    size = archive.shape[1]
    member = torch.cat([torch.arange(size, device=archive.device) < archive_n[:, None], joined], 1)
    key = torch.where(member, torch.rand(member.shape, device=archive.device), 2.0)
    pick = key.argsort(-1)[:, :size]
    return rows(torch.cat([archive, parents], 1), pick), torch.minimum(member.sum(-1), capacity)


def binomial_crossover(x: torch.Tensor, v: torch.Tensor, CR, moving=None) -> torch.Tensor:
    """u_ij = v_ij where rand_ij <= CR (a number or (runs, n)) or j = jrand_i, else x_ij (4);
    rows where `moving` (runs, n) is False stay x."""
    runs, n, dim = x.shape
    CR = CR[..., None] if isinstance(CR, torch.Tensor) else CR
    take = torch.rand_like(x) <= CR
    j_rand = torch.randint(0, dim, (runs, n, 1), device=x.device)
    take = take | (torch.arange(dim, device=x.device) == j_rand)
    if moving is not None:
        take = take & moving[..., None]
    return torch.where(take, v, x)


def midpoint_repair(problem: Problem, u: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A coordinate of u outside the box: the midpoint of x's and the bound it crossed (JADE,
    L-SHADE), so trials stay inside without piling onto the boundary."""
    u = torch.where(u < problem.lower, (problem.lower + x) / 2, u)
    return torch.where(u > problem.upper, (problem.upper + x) / 2, u)


def random_repair(problem: Problem, u: torch.Tensor) -> torch.Tensor:
    """A coordinate of u outside the box: drawn anew, uniformly between the bounds (Price,
    Storn & Lampinen's random reinitialisation)."""
    fresh = problem.lower + torch.rand_like(u) * (problem.upper - problem.lower)
    return torch.where((u < problem.lower) | (u > problem.upper), fresh, u)


REPAIRS = ("midpoint", "random")


@dataclass
class DEState(State):
    archive: torch.Tensor  # (runs, A, dim): parents replaced by better trials, the first archive_n
    archive_n: torch.Tensor  # (runs,)


STRATEGIES = ("rand/1", "current-to-pbest/1")


@register_algorithm
@dataclass(kw_only=True)
class DE(Algorithm):
    """Differential Evolution with mutation factor `F`, crossover rate `CR` and `strategy`
    "rand/1" (Storn & Price) or "current-to-pbest/1" (JADE's, with p-best rate `p` and an
    archive of up to pop_size replaced parents); `repair` "midpoint" or "random" brings
    trial coordinates outside the box back in."""

    F: float = 0.5
    CR: float = 0.9
    strategy: str = "rand/1"
    p: float = 0.05
    repair: str = "midpoint"

    name = "de"
    paper = "Storn & Price 1997"
    min_pop = 4  # the target and three other, mutually different vectors
    state_type = DEState
    kernels = Kernels(cpu=True, folder="de")  # engine/kernels/de/ (subclasses too; no fused CUDA kernels: CUDA compiles this step)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self.name, F=self.F)
        if not (is_real(self.CR) and 0 <= self.CR <= 1):
            raise ValueError(f"de: CR must lie in [0, 1], got {self.CR!r}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"de: strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")
        if not (is_real(self.p) and 0 < self.p <= 1):
            raise ValueError(f"de: p must lie in (0, 1], got {self.p!r}")
        if self.repair not in REPAIRS:
            raise ValueError(f"de: repair must be one of {', '.join(REPAIRS)}, got {self.repair!r}")

    def individual_fields(self, state: DEState) -> list[str]:
        return ["x", "f"]  # the archive is the island's own (its rows are not individuals)

    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> DEState:
        runs, n, dim = p.x.shape
        size = n if self.strategy == "current-to-pbest/1" else 0  # JADE: |A| <= NP
        return DEState(x=p.x, f=f, archive=p.x.new_zeros(runs, size, dim),
                       archive_n=torch.zeros(runs, dtype=torch.long, device=p.x.device))

    def ask(self, problem: Problem, s: DEState) -> Proposal:
        runs, n, dim = s.x.shape
        if self.strategy == "rand/1":
            r = distinct_others(runs, n, 3, s.x.device)
            v = rows(s.x, r[..., 0]) + self.F * (rows(s.x, r[..., 1]) - rows(s.x, r[..., 2]))  # (2)
        else:  # JADE's current-to-pbest/1 with archive, F and CR fixed
            count = torch.full((runs,), n, device=s.x.device)
            best = count.new_full((runs,), max(1, math.floor(self.p * n + 0.5)))  # C's round, as L-SHADE's
            F = s.x.new_full((runs, n), self.F)
            v = current_to_pbest(s.x, s.f.argsort(-1), count, best, s.archive, s.archive_n, F, F)
        u = binomial_crossover(s.x, v, self.CR)  # (4)
        inside = midpoint_repair(problem, u, s.x) if self.repair == "midpoint" else random_repair(problem, u)
        return Proposal(inside)

    def tell(self, problem: Problem, s: DEState, p: Proposal, f: torch.Tensor) -> DEState:
        better = f < s.f  # selection: strictly better replaces
        archive, archive_n = s.archive, s.archive_n
        if archive.shape[1]:  # the replaced parents join the archive (random ones leave when full)
            archive, archive_n = archive_keep(archive, archive_n, s.x, better, torch.full_like(archive_n, archive.shape[1]))
        return DEState(x=torch.where(better[..., None], p.x, s.x), f=torch.where(better, f, s.f),
                       archive=archive, archive_n=archive_n)
