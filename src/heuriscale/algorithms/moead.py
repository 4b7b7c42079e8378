"""MOEA/D (Zhang & Li 2007) with the Tchebycheff decomposition, batched over a generation.

Q. Zhang and H. Li, "MOEA/D: A Multiobjective Evolutionary Algorithm Based on
Decomposition", IEEE Trans. Evol. Comput. 11(6), 2007, 712-731.

The paper's Tchebycheff approach (Section II-B) and algorithm (Section III-A), in its order:

    g^te(x | lambda, z*) = max_i lambda_i |f_i(x) - z*_i|                   (scalar subproblem)
    Step 1.1  EP (external population): not kept here; the engine reports the final
              population's non-dominated set (pymoo's choice)
    Step 1.2  N weight vectors lambda^1..lambda^N; B(i): the indices of the T closest
              weight vectors to lambda^i (Euclidean distance, lambda^i itself included)
    Step 1.3  x^1..x^N uniform in the box, FV^i = F(x^i)
    Step 1.4  z = the best value found so far in each objective
    Step 2, for i = 1..N:
      2.1 reproduction: two indices k, l from B(i); a new solution y from x^k and x^l by
          genetic operators (Section V: SBX and polynomial mutation, eta = 20 both,
          crossover rate 1, mutation rate 1/D)
      2.2 improvement: none (a problem-specific repair, which the paper's tests do not use)
      2.3 update z: z_j = min(z_j, f_j(y))
      2.4 update neighbouring solutions: for each j in B(i), if g^te(y | lambda^j, z) <=
          g^te(x^j | lambda^j, z), then x^j = y and FV^j = F(y)
      2.5 EP update: none (Step 1.1)

Choices:
- weights: Das and Dennis's simplex-lattice, every lambda with components in {0, 1/H, ...,
  1} summing to 1 (C(H + M - 1, M - 1) vectors, the paper's Section V), and N the number of
  them. H defaults to the paper's: 99 for two objectives (N = 100) and 23 for three
  (N = 300); for more, the smallest H with N >= 100 (the paper has none). `partitions=H`
  chooses H; `pop_size` may instead name N when it is such a count;
- the mating pool of 2.1 is B(i) with probability `neighbour_mating` = 0.9, the whole
  population otherwise (pymoo's `prob_neighbor_mating`, from MOEA/D-DE, Li & Zhang 2009;
  1.0 is the 2007 paper's); k and l are distinct;
- SBX and PM as pymoo's MOEAD applies them (`genetic.py`): SBX(prob=1.0, eta=20), one of its
  two children kept at random; PM(eta=20) per variable with probability 1/D in an
  individual drawn with probability 0.9;
- batched generations: the paper handles subproblems one after another, so a child bred for
  subproblem i may have parents that children of subproblems < i replaced in the same
  generation, and z moves after every child. Here all N children of a generation are bred
  from the population as it was at the generation's start and evaluated together (one
  evaluation of N points, as every algorithm of the library evaluates), then z takes all
  of them (2.3, once), then 2.4 runs for every child in index order. With z fixed, that
  order's outcome has a closed form, which is what the tensors compute: x^j becomes the
  child with the least g^te(. | lambda^j, z) among the children whose B(i) holds j (the last
  of them on ties, as "<=" in order leaves it), when that value is <= g^te(x^j | lambda^j, z).
  This is pymoo's `ParallelMOEAD` up to pymoo's strict "<" and its random order;
- a point with a NaN or infinite objective has every objective +inf (never an improvement);
- constraints: neither the paper nor pymoo's MOEA/D handles them; a constrained problem is
  refused (NSGA-II handles them).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Proposal, State, check_count, check_positive, uniform
from .genetic import polynomial_mutation, sbx
from .nsga2 import objectives_of, unit_fraction
from .pareto import finite_rows
from .registry import register_algorithm

#: The paper's H (divisions of the simplex) for two and three objectives (N = 100 and 300).
PAPER_PARTITIONS = {2: 99, 3: 23}


def das_dennis_count(partitions: int, objectives: int) -> int:
    return math.comb(partitions + objectives - 1, objectives - 1)


def das_dennis(partitions: int, objectives: int) -> torch.Tensor:
    """The C(H + M - 1, M - 1) weight vectors (float64, (N, M)) with components in
    {0, 1/H, ..., 1} summing to 1, in lexicographic order of their bar positions."""
    rows = []
    for bars in itertools.combinations(range(partitions + objectives - 1), objectives - 1):
        edges = (-1, *bars, partitions + objectives - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(objectives)])
    return torch.tensor(rows, dtype=torch.float64) / partitions


@dataclass
class MOEADState(State):
    ideal: torch.Tensor  # (runs, M) z: the best value seen in each objective
    weights: torch.Tensor  # (runs, N, M) lambda^i (the same in every run)
    neighbours: torch.Tensor  # (runs, N, T) B(i), int64


@register_algorithm
@dataclass(kw_only=True)
class MOEAD(Algorithm):
    """MOEA/D with the Tchebycheff decomposition: N = the number of Das-Dennis weight vectors
    (`partitions` H, or `pop_size` naming such a count), `neighbours` T = 20, mating in the
    neighbourhood with probability `neighbour_mating`, SBX (`eta_c`) and polynomial mutation
    (`eta_m`, per-variable rate `p_m`, None: 1/D)."""

    pop_size: int | None = None
    partitions: int | None = None
    neighbours: int = 20
    neighbour_mating: float = 0.9
    eta_c: float = 20.0
    eta_m: float = 20.0
    p_m: float | None = None
    p_individual: float = 0.9

    name = "moead"
    paper = "Zhang & Li 2007"
    min_pop = 2
    state_type = MOEADState
    multi_objective = True
    islands_offered = False  # the weight vectors are the population

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.partitions is not None:
            check_count(self.name, "partitions", self.partitions)
        check_count(self.name, "neighbours", self.neighbours, minimum=2)
        check_positive(self.name, eta_c=self.eta_c, eta_m=self.eta_m)
        unit_fraction(self.name, neighbour_mating=self.neighbour_mating, p_individual=self.p_individual)
        if self.p_m is not None:
            unit_fraction(self.name, p_m=self.p_m)

    def default_pop(self, dim: int) -> int | None:
        return None  # from the number of objectives: for_objectives

    def for_objectives(self, objectives: int) -> MOEAD:
        if objectives < 2:
            raise ValueError(f"moead decomposes several objectives; this problem has {objectives}: "
                             "use a single-objective algorithm (de, pso, cmaes, ...) or nsga2")
        H = self._partitions(objectives)
        n = das_dennis_count(H, objectives)
        if n < self.min_pop:
            raise ValueError(f"moead: partitions={H} gives {n} weight vector(s) for {objectives} objectives; "
                             f"use partitions >= 2")
        if self.pop_size == n and self.partitions == H:
            return self
        return dataclasses.replace(self, pop_size=n, partitions=H)

    def _partitions(self, M: int) -> int:
        if self.partitions is not None:
            n = das_dennis_count(self.partitions, M)
            if self.pop_size is not None and self.pop_size != n:
                raise ValueError(f"moead: pop_size={self.pop_size} disagrees with partitions={self.partitions} "
                                 f"({n} weight vectors for {M} objectives): give one of them")
            return self.partitions
        if self.pop_size is None:
            if M in PAPER_PARTITIONS:
                return PAPER_PARTITIONS[M]
            return next(h for h in itertools.count(1) if das_dennis_count(h, M) >= 100)
        H = 1
        while das_dennis_count(H, M) < self.pop_size:
            H += 1
        if das_dennis_count(H, M) != self.pop_size:
            below = das_dennis_count(H - 1, M) if H > 1 else None
            near = f"{below} (partitions={H - 1}) or " if below and below >= self.min_pop else ""
            raise ValueError(f"moead: pop_size={self.pop_size} is not a number of Das-Dennis weight vectors for "
                             f"{M} objectives: use {near}{das_dennis_count(H, M)} (partitions={H}), "
                             "or leave pop_size out")
        return H

    def check_ready(self) -> None:
        super().check_ready()
        if self.pop_size is None:
            raise ValueError("moead sizes its population from the problem's objectives: call "
                             "for_objectives(M) first (minimize, Runner and AskTell do)")

    def ask_init(self, problem: Problem, runs: int) -> Proposal:
        self.check_dtype(problem.lower.dtype)
        M = objectives_of(problem)
        if problem.n_constraints:
            raise ValueError(f"moead does not handle constraints (problem {problem.name!r} has "
                             f"{problem.n_constraints}): use nsga2 (Deb's constrained domination)")
        if das_dennis_count(self._partitions(M), M) != self.pop_size:
            raise ValueError(f"moead: pop_size={self.pop_size} was set for another number of objectives "
                             f"than this problem's {M}: call for_objectives({M})")
        return Proposal(uniform(problem.lower, problem.upper, (runs, self.pop_size)))

    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> MOEADState:
        runs, n, _ = p.x.shape
        F = finite_rows(f)
        M = F.shape[-1]
        w = das_dennis(self._partitions(M), M)  # Step 1.2
        T = min(self.neighbours, n)
        B = torch.cdist(w, w).argsort(dim=-1, stable=True)[:, :T]  # itself first (distance 0)
        on = dict(device=p.x.device)
        return MOEADState(x=p.x, f=F, ideal=F.amin(1),  # Step 1.4
                          weights=w.to(dtype=p.x.dtype, **on).expand(runs, n, M).clone(),
                          neighbours=B.to(**on).expand(runs, n, T).clone())

    def ask(self, problem: Problem, s: MOEADState) -> Proposal:
        runs, n, dim = s.x.shape
        T = s.neighbours.shape[-1]
        dev = s.x.device
        # 2.1: two distinct members of the mating pool: B(i) (probability delta) or the population
        local = torch.rand(runs, n, 1, device=dev) < self.neighbour_mating
        size = torch.where(local, T, n)
        u = torch.rand(runs, n, 2, device=dev, dtype=torch.float64)
        k = (u[..., :1] * size).floor().long()
        l_ = (u[..., 1:] * (size - 1)).floor().long()
        picks = torch.cat([k, l_ + (l_ >= k).long()], -1)  # (runs, n, 2) places in the pool
        parents = torch.where(local, s.neighbours.gather(2, picks.clamp(max=T - 1)), picks)
        rows = lambda i: s.x.gather(1, i[..., None].expand(-1, -1, dim))  # noqa: E731
        c1, c2 = sbx(rows(parents[..., 0]), rows(parents[..., 1]), problem.lower, problem.upper,
                     eta=self.eta_c, p_c=1.0)
        first = torch.rand(runs, n, 1, device=dev) < 0.5  # pymoo keeps one child at random
        y = torch.where(first, c1, c2)
        p_m = 1.0 / dim if self.p_m is None else self.p_m
        return Proposal(polynomial_mutation(y, problem.lower, problem.upper, eta=self.eta_m, p_var=p_m,
                                            p_individual=self.p_individual))

    def tell(self, problem: Problem, s: MOEADState, p: Proposal, f: torch.Tensor) -> MOEADState:
        runs, n, dim = s.x.shape
        F = finite_rows(f)
        z = torch.minimum(s.ideal, F.amin(1))  # 2.3 (every child of the generation)
        B = s.neighbours  # (runs, n, T): child i competes for subproblems B(i)
        T = B.shape[-1]
        w_B = s.weights.gather(1, B.reshape(runs, n * T, 1).expand(-1, -1, F.shape[-1])).reshape(runs, n, T, -1)
        g_child = (w_B * (F[:, :, None, :] - z[:, None, None, :]).abs()).amax(-1)  # g^te(y_i | lambda^j, z)
        g_now = (s.weights * (s.f - z[:, None, :]).abs()).amax(-1)  # g^te(x^j | lambda^j, z)
        # a row of +inf is never better (0 * inf would be NaN where a weight is 0)
        g_child = torch.where(torch.isfinite(F).all(-1)[..., None], g_child, torch.inf)
        g_now = torch.where(torch.isfinite(s.f).all(-1), g_now, torch.inf)
        flat_j, flat_g = B.reshape(runs, n * T), g_child.reshape(runs, n * T)
        best = g_now.new_full((runs, n), torch.inf).scatter_reduce(1, flat_j, flat_g, "amin")
        child = torch.arange(n, device=s.x.device).repeat_interleave(T).expand(runs, -1)
        attains = (flat_g == best.gather(1, flat_j)) & torch.isfinite(flat_g)
        winner = torch.full((runs, n), -1, dtype=torch.long, device=s.x.device).scatter_reduce(
            1, flat_j, torch.where(attains, child, -1), "amax")  # the last child on ties
        take = (winner >= 0) & (best <= g_now)  # 2.4, "<=" as the paper writes it
        w = winner.clamp(min=0)
        x = torch.where(take[..., None], p.x.gather(1, w[..., None].expand(-1, -1, dim)), s.x)
        F_new = torch.where(take[..., None], F.gather(1, w[..., None].expand(-1, -1, F.shape[-1])), s.f)
        return MOEADState(x=x, f=F_new, ideal=z, weights=s.weights, neighbours=s.neighbours)
