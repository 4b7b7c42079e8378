"""Artificial Protozoa Optimizer (Wang et al. 2024), as parallelised in paper 003 (P-APO).

Follows the official MATLAB code, synchronously within an iteration. Each iteration sorts
the protozoa by fitness (rank i = 1 is the best), then every protozoan computes one
candidate, all in the same tensors:

    pf  = pf_max * rand                                   (11)  ceil(N pf) ranks do (1)/(2)
    pdr = 1/2 (1 + cos((1 - i/N) pi))                     (13)  dormancy vs reproduction
    X_new = X_min + Rand (X_max - X_min)                  (1)   dormancy
    X_new = X_i + s rand (X_min + Rand (X_max - X_min)) Mr  (2) reproduction, Mr as (3)
    f   = rand (1 + cos(t/T pi))                          (4)
    pah = 1/2 (1 + cos(t/T pi))                           (12)  autotroph vs heterotroph
    X_new = X_i + f (X_j - X_i + mean_k wa (X_k- - X_k+)) Mf     (6), wa as (7)
    X_new = X_i + f (X_near - X_i + mean_k wh (X_i-k - X_i+k)) Mf (8), X_near (9), wh (10)

then clips to the bounds, evaluates, and keeps a candidate only where it is strictly
better (greedy selection).

Choices (official code over paper text, see ALGORITHMS.md):
- (13) is `1 + cos`, as in the official code (paper 003 prints `1 - cos`);
- `Mr` has exactly `ceil(rand D)` ones and `Mf` exactly `ceil(D i / N)` ones at distinct
  random coordinates (a rank test on random keys, for the whole population at once);
- `s = +-1` is one sign per protozoan (in (2) and in (9)); `f` one number per protozoan;
- autotroph pairs: `i = 1: k- = 1, k+ ~ U{2..N}`; `i = N: k- ~ U{1..N-1}, k+ = N`;
  otherwise `k- ~ U{1..i-1}, k+ ~ U{i+1..N}`, drawn independently for each of `np` pairs;
  heterotroph neighbours `(i-k, i+k)` clamped into `1..N`; `eps` is the dtype's epsilon;
- a pair's weight (7)/(10) is 0 where both its values are infinite (the ratio is undefined;
  NaN objective values count as +inf), so no candidate is ever NaN;
- the iteration counter runs `t = 1..T` (the MATLAB loop), `T = max_iters` (taken from the
  engine's budget when not set); past `T` the ratio `t/T` stays at 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Kernels, Proposal, State, check_count, is_real, uniform
from .registry import register_algorithm


DORMANCY, REPRODUCTION, AUTOTROPH, HETEROTROPH = 0, 1, 2, 3


@dataclass
class APOState(State):
    t: torch.Tensor  # iterations done, a 0-d tensor (keeps the step free of Python ints)


def exact_ones(count: torch.Tensor, dim: int) -> torch.Tensor:
    """Masks (..., dim) with exactly `count[...]` ones at distinct uniformly random coordinates."""
    keys = torch.rand(*count.shape, dim, device=count.device)
    rank = keys.argsort(-1).argsort(-1)
    return rank < count[..., None]


def autotroph_pairs(runs: int, n: int, pairs: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """0-based (k-, k+) of shape (runs, n, pairs) for ranks 0..n-1 (the rules of Eq. 6)."""
    r = torch.arange(n, device=device)[None, :, None]
    # float64 draws: floor(u * r) stays below r for any population size
    u_minus, u_plus = torch.rand(2, runs, n, pairs, device=device, dtype=torch.float64)
    below = (u_minus * r).floor().long()  # U{0..r-1}
    above = r + 1 + (u_plus * (n - 1 - r)).floor().long()  # U{r+1..n-1}
    return torch.where(r == 0, 0, below), torch.where(r == n - 1, n - 1, above)


def heterotroph_pairs(n: int, pairs: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """0-based (i-k, i+k) of shape (n, pairs), k = 1..pairs, clamped into 0..n-1 (Eq. 8)."""
    i = torch.arange(n, device=device)[:, None]
    k = torch.arange(1, pairs + 1, device=device)[None, :]
    return (i - k).clamp(min=0), (i + k).clamp(max=n - 1)


def pair_weights(f_minus: torch.Tensor, f_plus: torch.Tensor, eps: float) -> torch.Tensor:
    """exp(-|f(X_k-) / (f(X_k+) + eps)|) of (7) and (10); 0 where the ratio is undefined (both
    values infinite: NaN objective values count as +inf), so that pair pulls nowhere instead
    of making a NaN candidate."""
    w = torch.exp(-(f_minus / (f_plus + eps)).abs())
    return torch.where(w.isnan(), 0.0, w)


def _gather_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x (runs, n, dim) at row indices (runs, n, pairs) -> (runs, n, pairs, dim)."""
    runs, n, pairs = index.shape
    flat = index.reshape(runs, n * pairs, 1).expand(-1, -1, x.shape[-1])
    return x.gather(1, flat).reshape(runs, n, pairs, x.shape[-1])


def _sign(shape, like: torch.Tensor) -> torch.Tensor:
    return torch.where(torch.rand(shape, device=like.device) < 0.5, 1.0, -1.0).to(like.dtype)


@register_algorithm
@dataclass(kw_only=True)
class APO(Algorithm):
    """Artificial Protozoa Optimizer with `pf_max` and `np` neighbour pairs."""

    pf_max: float = 0.1
    np: int = 1
    max_iters: int | None = None

    name = "apo"
    min_pop = 3
    population_copies = 14
    paper = "Wang et al. 2024; Soliya & Jain, P-APO, arXiv 2510.14982 (reproduce apo)"
    presets = {"paper003": {"pf_max": 0.1, "np": 1}}
    state_type = APOState
    kernels = Kernels(cuda=True, cpu=True)  # engine/kernels/apo/

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (is_real(self.pf_max) and 0 <= self.pf_max <= 1):
            raise ValueError(f"apo: pf_max must lie in [0, 1], got {self.pf_max!r}")
        self.np = check_count(self.name, "np", self.np, what=" (neighbour pairs)")

    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> APOState:
        return APOState(x=p.x, f=f, t=torch.zeros((), device=p.x.device, dtype=p.x.dtype))

    def ask(self, problem: Problem, s: APOState) -> Proposal:
        x, f_sorted, x_new, _ = self.candidates(problem, s)
        return Proposal(torch.clamp(x_new, problem.lower, problem.upper), parents=x, parents_f=f_sorted)

    def tell(self, problem: Problem, s: APOState, p: Proposal, f: torch.Tensor) -> APOState:
        better = f < p.parents_f  # greedy: strictly better replaces
        return APOState(
            x=torch.where(better[..., None], p.x, p.parents),
            f=torch.where(better, f, p.parents_f),
            t=s.t + 1,
        )

    def candidates(self, problem: Problem, s: APOState):
        """Sorted population, its fitness, the unclipped candidates and each one's operator.

        The operator code per protozoan is DORMANCY, REPRODUCTION, AUTOTROPH or HETEROTROPH.
        """
        lb, ub = problem.lower, problem.upper
        runs, n, dim = s.x.shape
        dev, dt = s.x.device, s.x.dtype
        t = s.t + 1
        progress = (t / self.max_iters).clamp(max=1.0)

        # Sort by fitness: rank i = 1 (index 0) is the best.
        order = s.f.argsort(-1)
        f_sorted = s.f.gather(1, order)
        x = s.x.gather(1, order[..., None].expand(-1, -1, dim))
        i = torch.arange(1, n + 1, device=dev, dtype=dt)

        # (11): ceil(N pf) distinct ranks do dormancy or reproduction, the rest forage.
        pf = self.pf_max * torch.rand(runs, device=dev, dtype=dt)
        dr = exact_ones(torch.ceil(n * pf).long(), n)  # (runs, n)

        # (13), (1), (2), (3)
        pdr = 0.5 * (1 + torch.cos((1 - i / n) * math.pi))
        dormant = torch.rand(runs, n, device=dev, dtype=dt) < pdr
        x_dormancy = uniform(lb, ub, (runs, n))  # (1)
        m_r = exact_ones(torch.ceil(torch.rand(runs, n, device=dev) * dim).long().clamp(min=1), dim)  # (3)
        s_r = _sign((runs, n, 1), x)
        x_reproduction = x + s_r * torch.rand(runs, n, 1, device=dev, dtype=dt) * uniform(lb, ub, (runs, n)) * m_r  # (2)

        # (4), (5), (12)
        f_forage = torch.rand(runs, n, 1, device=dev, dtype=dt) * (1 + torch.cos(progress * math.pi))  # (4)
        ones_f = (dim * torch.arange(1, n + 1, device=dev) + n - 1) // n  # ceil(D i / N), exactly
        m_f = exact_ones(ones_f.expand(runs, n), dim)  # (5)
        pah = 0.5 * (1 + torch.cos(progress * math.pi))  # (12)
        autotroph = torch.rand(runs, n, device=dev, dtype=dt) < pah
        eps = torch.finfo(dt).eps

        # (6), (7): towards a random protozoan j, plus weighted differences of rank pairs.
        j = torch.randint(0, n, (runs, n, 1), device=dev)
        k_minus, k_plus = autotroph_pairs(runs, n, self.np, dev)
        w_a = pair_weights(f_sorted.gather(1, k_minus.reshape(runs, -1)), f_sorted.gather(1, k_plus.reshape(runs, -1)),
                           eps).reshape(runs, n, self.np, 1)  # (7)
        pull_a = (w_a * (_gather_rows(x, k_minus) - _gather_rows(x, k_plus))).mean(2)
        x_autotroph = x + f_forage * (_gather_rows(x, j).squeeze(2) - x + pull_a) * m_f  # (6)

        # (8), (9), (10): towards a nearby point, plus weighted differences of neighbours.
        i_minus, i_plus = heterotroph_pairs(n, self.np, dev)
        w_h = pair_weights(f_sorted[:, i_minus], f_sorted[:, i_plus], eps)[..., None]  # (10)
        pull_h = (w_h * (x[:, i_minus] - x[:, i_plus])).mean(2)
        x_near = (1 + _sign((runs, n, 1), x) * torch.rand_like(x) * (1 - progress)) * x  # (9)
        x_heterotroph = x + f_forage * (x_near - x + pull_h) * m_f  # (8)

        foraging = torch.where(autotroph[..., None], x_autotroph, x_heterotroph)
        renewal = torch.where(dormant[..., None], x_dormancy, x_reproduction)
        x_new = torch.where(dr[..., None], renewal, foraging)
        kind = torch.where(dr, torch.where(dormant, DORMANCY, REPRODUCTION), torch.where(autotroph, AUTOTROPH, HETEROTROPH))
        return x, f_sorted, x_new, kind
