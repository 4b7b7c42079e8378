"""NSGA-II (Deb, Pratap, Agarwal & Meyarivan 2002) with pymoo 0.6.2's operators and defaults.

K. Deb, A. Pratap, S. Agarwal and T. Meyarivan, "A Fast and Elitist Multiobjective Genetic
Algorithm: NSGA-II", IEEE Trans. Evol. Comput. 6(2), 2002, 182-197.

The paper's main loop, in its order (Section III), for a population P_t of N and objectives
f (M of them, minimised); `pareto.py` holds the sorting and crowding as tensors:

    P_0: N points uniform in the box, evaluated, sorted into fronts and crowded
    Q_t: N children of P_t by binary tournament selection, recombination and mutation
         tournament: the crowded-comparison operator <_n (III-B): i <_n j if
           rank_i < rank_j, or rank_i = rank_j and distance_i > distance_j
         recombination: SBX, eta_c = 15, on a pair with probability p_c = 0.9
         mutation: polynomial, eta_m = 20, each variable with probability p_m = 1/D
    R_t = P_t ∪ Q_t (2N): fast non-dominated sort into F_1, F_2, ...           (III-A)
    crowding distance within each front                                          (III-B)
    P_t+1: the fronts F_1, F_2, ... while they fit in N, then the best of the
           first front that does not fit by <_n (elitist (mu + mu) survival)     (III-C)
    constraints: Deb's constrained domination replaces domination              (Section V)

Choices (where the paper is silent, pymoo's):
- SBX as pymoo applies it (`genetic.py`): each variable crossed with probability 0.5 and the
  two children exchanged per variable with probability 0.5; PM mutates an individual with
  probability 0.9 (pymoo's `PM(prob=0.9)` default) and then each of its variables with
  probability 1/D. The children of N/2 pairs (N odd: the first N of N + 1) are Q_t;
- tournament: two permutations of P_t give the N x 2 contestants (pymoo's); the winner by
  <_n, a random one on equal rank and distance. pymoo's NSGA2 compares by domination
  between the two contestants before distance (its `comp_by_dom_and_crowding`); this file
  follows the paper's <_n (rank), the crowded comparison of Section III-B;
- crowding distance exactly pymoo's `calc_crowding_distance` (divided by M, ends infinite,
  fronts of <= 2 points infinite); ties on the last front broken at random (pymoo's
  randomized argsort);
- pymoo also removes duplicate children and mates again until N unique ones are found; that
  loop would need the host to decide when to stop, so children are kept as bred;
- constraint violation: sum of max(0, g_i(x)) from `problem.constraints` (read in `tell`,
  not counted as evaluations); a feasible point dominates an infeasible one, and of two
  infeasible points the smaller violation dominates (pymoo: the same order, infeasible
  points sorted by violation after all feasible ones);
- a point with a NaN or infinite objective is worse than every finite one (all its
  objectives +inf);
- the non-dominated sort of R_t stops once N points are ranked (`pareto.py`'s `cover`): P_t+1
  is then decided, and every point of a later front shares the rank after the last one
  peeled; no survivor and no survivor's rank changes (a point's front depends only on
  the points that dominate it, which lie in earlier fronts). O(N^2) memory per run; on CUDA
  the engine's sorting kernel peels inside one launch (a generation is then a fixed
  sequence of launches, which a CUDA graph replays); with one objective the fronts are the
  distinct values, ranked by a sort (NSGA-II is then an elitist GA).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Kernels, Proposal, State, check_positive, is_real, uniform
from .genetic import pm_shapes, polynomial_mutation, sbx, sbx_shapes, uniform_parts
from .pareto import crowding_distance, finite_rows, front_ranks
from .registry import register_algorithm


@dataclass
class NSGA2State(State):
    rank: torch.Tensor  # (runs, N) front index in P_t (0: non-dominated)
    crowding: torch.Tensor  # (runs, N) crowding distance within its front
    violation: torch.Tensor  # (runs, N) total constraint violation (0: feasible)


def objectives_of(problem: Problem) -> int:
    return int(getattr(problem, "objectives", 1))


def total_violation(problem: Problem, x: torch.Tensor) -> torch.Tensor:
    """sum_i max(0, g_i(x)) (runs, n); zeros for an unconstrained problem."""
    if not problem.n_constraints:
        return x.new_zeros(x.shape[:-1])
    v = problem.constraints(x).to(x.dtype).clamp(min=0).sum(-1)
    return torch.where(torch.isnan(v), torch.inf, v)


def unit_fraction(name: str, **values) -> None:
    for key, value in values.items():
        if not (is_real(value) and 0 <= value <= 1):
            raise ValueError(f"{name}: {key} must lie in [0, 1], got {value!r}")


@register_algorithm
@dataclass(kw_only=True)
class NSGA2(Algorithm):
    """NSGA-II: SBX (`eta_c`, pair rate `p_c`, per-variable rate `p_var`, exchange rate
    `p_exchange`), polynomial mutation (`eta_m`, per-variable rate `p_m`, None: 1/D, in an
    individual with probability `p_individual`), binary tournament on rank then crowding,
    elitist survival of the best N of parents and children."""

    eta_c: float = 15.0
    p_c: float = 0.9
    p_var: float = 0.5
    p_exchange: float = 0.5
    eta_m: float = 20.0
    p_m: float | None = None
    p_individual: float = 0.9

    name = "nsga2"
    paper = "Deb, Pratap, Agarwal & Meyarivan 2002"
    min_pop = 2  # a tournament of two
    state_type = NSGA2State
    multi_objective = True
    islands_offered = False  # survival sorts the whole population at once
    population_copies = 16  # plus the (2N)^2 dominance matrices: memory_bytes
    kernels = Kernels(cpu=True)  # engine/kernels/nsga2/ (native CPU kernel)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self.name, eta_c=self.eta_c, eta_m=self.eta_m)
        unit_fraction(self.name, p_c=self.p_c, p_var=self.p_var, p_exchange=self.p_exchange,
                      p_individual=self.p_individual)
        if self.p_m is not None:
            unit_fraction(self.name, p_m=self.p_m)

    def memory_bytes(self, runs: int, dim: int, itemsize: int) -> int:
        n = 2 * self.pop_size  # P_t ∪ Q_t: a few (2N, 2N) matrices (bool and float32)
        return super().memory_bytes(runs, dim, itemsize) + 8 * runs * n * n

    def ask_init(self, problem: Problem, runs: int) -> Proposal:
        self.check_dtype(problem.lower.dtype)
        return Proposal(uniform(problem.lower, problem.upper, (runs, self.pop_size)))

    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> NSGA2State:
        F = finite_rows(as_objectives(f))
        v = total_violation(problem, p.x)
        rank = front_ranks(F, v)
        return NSGA2State(x=p.x, f=F.reshape(f.shape), rank=rank, crowding=crowding_distance(F, rank), violation=v)

    def ask(self, problem: Problem, s: NSGA2State) -> Proposal:
        runs, n, dim = s.x.shape
        pairs = math.ceil(n / 2)
        perms = math.ceil(4 * pairs / n)  # permutations of P_t for the 2 x 2 pairs contestants
        keys, coins = uniform_parts(s.x, (runs, perms, n), (runs, 2 * pairs), dtype=torch.get_default_dtype())
        order = keys.argsort(-1).reshape(runs, perms * n)
        uniforms = uniform_parts(s.x, *sbx_shapes(runs, pairs, dim), *pm_shapes(runs, n, dim))  # one draw
        p_m = 1.0 / dim if self.p_m is None else self.p_m
        rates = [self.eta_c, self.p_c, self.p_var, self.p_exchange, self.eta_m, p_m, self.p_individual]
        return Proposal(offspring(s.x, s.rank, s.crowding, order, coins, problem.lower, problem.upper, uniforms, rates))

    def tell(self, problem: Problem, s: NSGA2State, p: Proposal, f: torch.Tensor) -> NSGA2State:
        runs, n, dim = s.x.shape
        x = torch.cat([s.x, p.x], 1)  # R_t = P_t ∪ Q_t
        F = torch.cat([as_objectives(s.f), finite_rows(as_objectives(f))], 1)
        v = torch.cat([s.violation, total_violation(problem, p.x)], 1)
        # (III-A), until N points are ranked: the points of later fronts share the next rank and
        # are never kept
        rank = front_ranks(F, v, cover=n)
        # (III-B) and (III-C): crowding within each front, then the best N by rank, larger
        # crowding, random order on ties
        tie = torch.rand(runs, 2 * n, device=x.device)
        x, F, rank, crowd, v = survivors(x, F, rank, v, tie, n)
        return NSGA2State(x=x, f=F.reshape(s.f.shape), rank=rank, crowding=crowd, violation=v)


def as_objectives(f: torch.Tensor) -> torch.Tensor:
    """(runs, n, M) values; one objective's (runs, n) become (runs, n, 1) (the state keeps the
    problem's own shape, so that on one objective NSGA-II runs as a plain elitist GA)."""
    return f[..., None] if f.ndim == 2 else f


@torch.library.custom_op("heuriscale::nsga2_offspring", mutates_args=())
def offspring(x: torch.Tensor, rank: torch.Tensor, crowding: torch.Tensor, order: torch.Tensor, coins: torch.Tensor,
              lower: torch.Tensor, upper: torch.Tensor, uniforms: list[torch.Tensor], rates: list[float]) -> torch.Tensor:
    """Q_t (runs, N, D) of P_t = x (runs, N, D) with its `rank` and `crowding` (runs, N): binary
    tournaments between the contestants `order` (runs, >= 2N, int64: concatenated permutations
    of P_t) with `coins` (runs, 2 ceil(N/2)) for equal ones, then SBX and polynomial mutation
    with their `uniforms` (as `NSGA2.ask` cuts them) and `rates` (eta_c, p_c, p_var,
    p_exchange, eta_m, p_m, p_individual). By default `offspring_torch`; on CUDA the engine's
    kernel (`engine/kernels/nsga2/offspring_cuda.py`), one launch, once it is registered."""
    return offspring_torch(x, rank, crowding, order, coins, lower, upper, uniforms, rates)


def offspring_torch(x: torch.Tensor, rank: torch.Tensor, crowding: torch.Tensor, order: torch.Tensor,
                    coins: torch.Tensor, lower: torch.Tensor, upper: torch.Tensor, uniforms: list[torch.Tensor],
                    rates: list[float]) -> torch.Tensor:
    """`offspring` in torch, the specification."""
    runs, n, dim = x.shape
    eta_c, p_c, p_var, p_exchange, eta_m, p_m, p_individual = rates
    parents = tournament(order, coins, rank, crowding)
    rows = lambda i: x.gather(1, i[..., None].expand(-1, -1, dim))  # noqa: E731
    c1, c2 = sbx(rows(parents[:, 0::2]), rows(parents[:, 1::2]), lower, upper, eta=eta_c, p_c=p_c, p_var=p_var,
                 p_exchange=p_exchange, uniforms=uniforms[:4])
    children = torch.cat([c1, c2], 1)[:, :n]  # pymoo's order: every first child, then every second
    return polynomial_mutation(children, lower, upper, eta=eta_m, p_var=p_m, p_individual=p_individual,
                               uniforms=uniforms[4:])


@offspring.register_fake
def _offspring_shape(x, rank, crowding, order, coins, lower, upper, uniforms, rates) -> torch.Tensor:
    return torch.empty_like(x)


def tournament(order: torch.Tensor, coins: torch.Tensor, rank: torch.Tensor, crowding: torch.Tensor) -> torch.Tensor:
    """The winners (runs, k) by <_n of the k binary tournaments between contestants order[:, 2i]
    and order[:, 2i + 1], a coin (< 0.5: the first) deciding between equal ones; k = coins' width."""
    k = coins.shape[1]
    a, b = order[:, 0:2 * k:2], order[:, 1:2 * k:2]
    ra, rb = rank.gather(1, a), rank.gather(1, b)
    ca, cb = crowding.gather(1, a), crowding.gather(1, b)
    a_wins = (ra < rb) | ((ra == rb) & ((ca > cb) | ((ca == cb) & (coins < 0.5))))
    return torch.where(a_wins, a, b)


@torch.library.custom_op("heuriscale::nsga2_survivors", mutates_args=())
def survivors(x: torch.Tensor, F: torch.Tensor, rank: torch.Tensor, violation: torch.Tensor, tie: torch.Tensor,
              n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """P_t+1 of R_t: the n best (x, F, rank, crowding distance, violation) of the points x
    (runs, 2n, D) with objectives F (runs, 2n, M), fronts `rank` and `violation` (runs, 2n), by
    rank, then larger crowding, then smaller `tie` key (runs, 2n). By default
    `survivors_torch`; on CUDA the engine's kernels (`engine/kernels/nsga2/`), once registered."""
    return survivors_torch(x, F, rank, violation, tie, n)


def survivors_torch(x: torch.Tensor, F: torch.Tensor, rank: torch.Tensor, violation: torch.Tensor, tie: torch.Tensor,
                    n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """`survivors` in torch, the specification: three stable sorts."""
    runs = x.shape[0]
    crowd = crowding_distance(F, rank)  # (III-B)
    order = tie.argsort(-1)
    order = order.gather(1, (-crowd).gather(1, order).argsort(dim=-1, stable=True))
    order = order.gather(1, rank.gather(1, order).argsort(dim=-1, stable=True))[:, :n]
    keep = lambda t: t.gather(1, order.reshape(runs, n, *([1] * (t.ndim - 2))).expand(-1, -1, *t.shape[2:]))  # noqa: E731
    return keep(x), keep(F), keep(rank), keep(crowd), keep(violation)


@survivors.register_fake
def _survivors_shape(x, F, rank, violation, tie, n):
    runs = x.shape[0]
    return (x.new_empty(runs, n, x.shape[2]), F.new_empty(runs, n, F.shape[2]), rank.new_empty(runs, n),
            F.new_empty(runs, n), violation.new_empty(runs, n))
