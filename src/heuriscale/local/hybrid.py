"""`Hybrid`: any algorithm's global search, then batched local refinement of its best points.

Paper 002's Firefly + BFGS is `Hybrid(Firefly(...), refine=BFGS(...))`; the wrapper works
with every algorithm. The engine calls `finish` after the last step; the result then
reports the refined best values, and the global phase's in `result.extra["global_best_f"]`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch

from ..algorithms.base import Algorithm, Proposal, State, take_rows
from ..problems.base import Problem
from .bfgs import BFGS


@dataclass(kw_only=True)
class Hybrid(Algorithm):
    """Run `algorithm`, then refine each run's best point (and the `top_k` best of its
    final population) with `refine`."""

    algorithm: Algorithm
    refine: BFGS = field(default_factory=BFGS)
    top_k: int = 0

    name = "hybrid"

    def __post_init__(self) -> None:
        if not isinstance(self.algorithm, Algorithm):
            raise ValueError(f"Hybrid needs an Algorithm to wrap, got {type(self.algorithm).__name__}")
        self.pop_size = self.algorithm.pop_size
        most = self.pop_size if self.pop_size is not None else self.top_k  # None: from the dimension, later
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or not 0 <= self.top_k <= most:
            raise ValueError(f"hybrid: top_k must be an integer in 0..pop_size={self.pop_size}, got {self.top_k!r}")

    def init(self, problem: Problem, runs: int) -> State:  # the wrapped one's, halves or whole
        return self.algorithm.init(problem, runs)

    def step(self, problem: Problem, state: State) -> State:
        return self.algorithm.step(problem, state)

    def ask_init(self, problem: Problem, runs: int) -> Proposal:
        return self.algorithm.ask_init(problem, runs)

    def tell_init(self, problem: Problem, proposal: Proposal, f: torch.Tensor) -> State:
        return self.algorithm.tell_init(problem, proposal, f)

    def ask(self, problem: Problem, state: State) -> Proposal:
        return self.algorithm.ask(problem, state)

    def tell(self, problem: Problem, state: State, proposal: Proposal, f: torch.Tensor) -> State:
        return self.algorithm.tell(problem, state, proposal, f)

    def stepping(self) -> Algorithm:
        return self.algorithm.stepping()

    @property
    def state_type(self) -> type[State]:
        """The wrapped algorithm's state: a hybrid's steps are its steps."""
        return self.algorithm.state_type

    def evals_per_init(self) -> int:
        return self.algorithm.evals_per_init()

    def evals_per_step(self) -> int:
        return self.algorithm.evals_per_step()

    def rows_used(self, state: State | None) -> int | None:
        return self.algorithm.rows_used(state)

    def evals_after(self, steps: int) -> int:
        return self.algorithm.evals_after(steps)

    def steps_within(self, evals: int) -> int:
        return self.algorithm.steps_within(evals)

    def for_run(self, dim: int, evals: int | None) -> Hybrid:
        return dataclasses.replace(self, algorithm=self.algorithm.for_run(dim, evals))

    def with_population(self, pop_size: int) -> Hybrid:
        return dataclasses.replace(self, algorithm=self.algorithm.with_population(pop_size))

    def emigrants(self, state: State, k: int) -> torch.Tensor:
        return self.algorithm.emigrants(state, k)

    def immigrate(self, state: State, rows: dict) -> State:
        return self.algorithm.immigrate(state, rows)

    def individual_fields(self, state: State) -> list[str]:
        return self.algorithm.individual_fields(state)

    def with_horizon(self, steps: float) -> Hybrid:
        return dataclasses.replace(self, algorithm=self.algorithm.with_horizon(steps))

    def check_ready(self) -> None:
        self.algorithm.check_ready()

    def params(self) -> dict:
        return {
            "algorithm": {"name": self.algorithm.name, **self.algorithm.params()},
            "refine": {"name": self.refine.name, **dataclasses.asdict(self.refine)},
            "top_k": self.top_k,
        }

    def finish(self, problem: Problem, state: State, best_x: torch.Tensor, best_f: torch.Tensor):
        starts = best_x[:, None]
        if self.top_k:
            rows = self.algorithm.rows_used(state)  # L-SHADE: only the individuals still in its population
            k = self.top_k if rows is None else min(self.top_k, rows)
            top = state.f[:, : rows or state.f.shape[1]].topk(k, dim=-1, largest=False).indices
            starts = torch.cat([starts, state.x.gather(1, top[..., None].expand(-1, -1, state.x.shape[-1]))], 1)
        refined = self.refine.refine(problem, starts)
        f, at = refined.f.min(-1)
        better = f < best_f
        info = {
            "global_best_f": best_f.detach().cpu().double().tolist(),
            "refine": self.refine.name,
            "refine_iterations": refined.iterations,
            "refine_converged": refined.converged.any(-1).cpu().tolist(),
            "refine_evals": refined.evals * starts.shape[1],
        }
        return (
            torch.where(better[:, None], take_rows(refined.x, at), best_x),
            torch.where(better, f, best_f),
            info,
        )
