"""JADE: adaptive differential evolution with optional external archive.

J. Zhang and A. C. Sanderson, "JADE: Adaptive Differential Evolution With Optional External
Archive", IEEE Transactions on Evolutionary Computation 13(5), 2009, 945-958.

Each generation g, with mu_CR = mu_F = 0.5 and A = {} at the start, S_CR = S_F = {}, and for
every target x_i of the NP in the population:

    CR_i = randn_i(mu_CR, 0.1), truncated to [0, 1]                        crossover probability
    F_i  = randc_i(mu_F, 0.1), drawn again where <= 0, 1 where >= 1        mutation factor
    v_i  = x_i + F_i (x_pbest - x_i) + F_i (x_r1 - x~_r2)                  DE/current-to-pbest/1
           x_pbest uniform among the 100p % best of the population, x_r1 from the population
           without x_i, x~_r2 from P ∪ A without x_i and x_r1 (from P alone without archive)
    u_ij = v_ij if rand_ij <= CR_i or j = jrand_i, else x_ij               binomial crossover
    x_i <- u_i if f(u_i) < f(x_i); then x_i goes to A, CR_i to S_CR, F_i to S_F   selection

then random members leave A until |A| <= NP, and, where S is not empty,

    mu_CR <- (1 - c) mu_CR + c mean_A(S_CR)        mean_A the arithmetic mean
    mu_F  <- (1 - c) mu_F  + c mean_L(S_F)         mean_L(S_F) = sum F^2 / sum F, the Lehmer mean

The paper's settings are the defaults: p = 0.05, c = 0.1, the archive on (`archive=False`
is JADE without archive), NP = 100 at D = 30 (the paper: 30, 100, 400 for D <= 10, 30, 100).

Choices where the paper leaves room, or where runs batched in tensors need one:
- 100p % best: max(1, round(p NP)) individuals (C's round, as `de.py`'s current-to-pbest/1);
- where S is empty (no trial succeeded), mu_CR and mu_F stay as they are (the means are
  undefined there);
- F is drawn again up to 16 times where it is <= 0 (a draw from randc(mu_F, 0.1) is <= 0 with
  probability at most 1/2), then taken as the smallest positive normal of the dtype;
- a coordinate of the trial outside the box goes to the midpoint of the parent's coordinate
  and the bound it crossed (the repair JADE's mutant vectors get; coordinates taken from x_i
  are inside already, so repairing u_i is the same);
- runs are independent: each has its own mu_CR, mu_F and archive.

Its torch step is its whole implementation (eager on the CPU, eager, graph-replayed or
compiled on CUDA); there is no native CPU kernel: DE's (engine/kernels/de/cpu.py) draws fixed
F and CR and keeps no memory, so JADE's would be a new kernel, not an option of that one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Proposal, State, is_real
from .de import archive_keep, binomial_crossover, current_to_pbest, midpoint_repair
from .lshade import lehmer, randc
from .registry import register_algorithm


@dataclass
class JADEState(State):
    archive: torch.Tensor  # (runs, NP, dim): parents replaced by better trials, the first archive_n
    archive_n: torch.Tensor  # (runs,)
    mu_cr: torch.Tensor  # (runs,)
    mu_f: torch.Tensor  # (runs,)


def draw_f(mu_f: torch.Tensor) -> torch.Tensor:
    """F_i = randc(mu_F, 0.1): drawn again where <= 0 (up to 16 times, then the smallest positive
    normal), 1 where >= 1."""
    F = randc(mu_f, 0.1)
    for _ in range(16):
        F = torch.where(F <= 0, randc(mu_f, 0.1), F)
    return torch.where(F <= 0, torch.finfo(F.dtype).tiny, F).clamp(max=1.0)


def adapt(mu_cr: torch.Tensor, mu_f: torch.Tensor, CR: torch.Tensor, F: torch.Tensor, success: torch.Tensor,
          c: float) -> tuple[torch.Tensor, torch.Tensor]:
    """mu_CR, mu_F (runs,) after a generation whose `success` (runs, NP) trials replaced their
    parents with CR and F (runs, NP): (1 - c) mu + c mean(S), arithmetic for CR, Lehmer for F;
    unchanged in a run without success."""
    w = success.to(CR.dtype)
    count = w.sum(-1)
    mean_cr = (w * CR).sum(-1) / count.clamp(min=1)
    mean_f, _ = lehmer(F, w)  # sum F^2 / sum F over S_F (F > 0, so the denominator is > 0 where S is not empty)
    any_success = count > 0
    return (torch.where(any_success, (1 - c) * mu_cr + c * mean_cr, mu_cr),
            torch.where(any_success, (1 - c) * mu_f + c * mean_f, mu_f))


@register_algorithm
@dataclass(kw_only=True)
class JADE(Algorithm):
    """JADE with p-best rate `p`, adaptation rate `c` and the external `archive` (of up to
    pop_size replaced parents) on or off."""

    p: float = 0.05
    c: float = 0.1
    archive: bool = True

    name = "jade"
    paper = "Zhang & Sanderson 2009"
    min_pop = 4  # the target, a p-best and two others
    state_type = JADEState
    presets = {"paper": {"p": 0.05, "c": 0.1, "archive": True}}  # the defaults

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (is_real(self.p) and 0 < self.p <= 1):
            raise ValueError(f"jade: p must lie in (0, 1], got {self.p!r}")
        if not (is_real(self.c) and 0 < self.c <= 1):
            raise ValueError(f"jade: c must lie in (0, 1], got {self.c!r}")
        if not isinstance(self.archive, bool):
            raise ValueError(f"jade: archive must be True or False, got {self.archive!r}")

    def individual_fields(self, state: JADEState) -> list[str]:
        return ["x", "f"]  # the archive and mu_CR, mu_F belong to the run, not to individuals

    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> JADEState:
        runs, n, dim = p.x.shape
        size = n if self.archive else 0  # |A| <= NP
        half = p.x.new_full((runs,), 0.5)
        return JADEState(x=p.x, f=f, archive=p.x.new_zeros(runs, size, dim),
                         archive_n=torch.zeros(runs, dtype=torch.long, device=p.x.device),
                         mu_cr=half, mu_f=half.clone())

    def ask(self, problem: Problem, s: JADEState) -> Proposal:
        runs, n, _ = s.x.shape
        CR = (s.mu_cr[:, None] + 0.1 * torch.randn(runs, n, device=s.x.device, dtype=s.x.dtype)).clamp(0.0, 1.0)
        F = draw_f(s.mu_f[:, None].expand(runs, n))
        count = torch.full((runs,), n, device=s.x.device)
        best = count.new_full((runs,), max(1, math.floor(self.p * n + 0.5)))
        v = current_to_pbest(s.x, s.f.argsort(-1), count, best, s.archive, s.archive_n, F, F)
        u = binomial_crossover(s.x, v, CR)
        return Proposal(midpoint_repair(problem, u, s.x), F=F, CR=CR)

    def tell(self, problem: Problem, s: JADEState, p: Proposal, f: torch.Tensor) -> JADEState:
        better = f < s.f  # selection: the trial replaces its parent when strictly better
        archive, archive_n = s.archive, s.archive_n
        if archive.shape[1]:  # the replaced parents join the archive (random members leave when full)
            capacity = torch.full_like(archive_n, archive.shape[1])
            archive, archive_n = archive_keep(archive, archive_n, s.x, better, capacity)
        mu_cr, mu_f = adapt(s.mu_cr, s.mu_f, p.CR, p.F, better, self.c)
        return JADEState(x=torch.where(better[..., None], p.x, s.x), f=torch.where(better, f, s.f),
                         archive=archive, archive_n=archive_n, mu_cr=mu_cr, mu_f=mu_f)
