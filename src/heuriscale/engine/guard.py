"""The engine's NaN policy: the problem as the algorithm sees it inside the engine."""

from __future__ import annotations

import torch

from ..algorithms.base import phase
from ..problems import Problem, check_fitness
from ..problems.base import ProblemWrapper


class Guarded(ProblemWrapper):
    """`inner`, with its output checked and its NaN values counted and handed on as +inf.

    It checks the objective's output shape (a static check, free at run time), counts NaN
    values per run (points with a NaN objective, with several) in a device tensor and hands them on as +inf, so a NaN never compares
    as better than a number and never becomes a best.
    """

    def __init__(self, inner: Problem, runs: int) -> None:
        super().__init__(inner)
        self.nan_evals = torch.zeros(runs, dtype=torch.int64, device=inner.lower.device)

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        with phase("evaluation"):
            f = self.inner.evaluate(x)
        return self.take(f, x, self.inner.name)

    def take(self, f: torch.Tensor, x: torch.Tensor, who: str) -> torch.Tensor:
        """The values `f` of the points `x`, checked (an error naming `who` and changing
        nothing if they are unusable), in x's dtype, NaN counted per run and made +inf."""
        f = check_fitness(f, x, who, self.objectives).to(x.dtype)
        nan = torch.isnan(f)
        per_point = nan.any(-1) if self.objectives > 1 else nan  # several objectives: a point counts once
        self.nan_evals += per_point.reshape(nan.shape[0], -1).sum(1)
        return torch.where(nan, torch.inf, f)
