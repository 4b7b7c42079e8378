"""Several objectives: the engine's bookkeeping of a run set whose values are (runs, n, M).

With one objective the engine keeps each run's best-so-far; with several, "best" is a set.
This module keeps, for a problem of `objectives = M > 1`:

- each run's final front: the non-dominated points of its final population (pymoo's
  convention, `Algorithm.opt`), among the points that count: every objective finite (a
  NaN or infinite value never fronts a run) and, for a constrained problem, feasible
  (pymoo: with no feasible point, the least violating ones; here the front is then empty);
- the history: the population's objective values sampled after iterations 0, s, 2s, ...
  (the stride doubles as the run grows, at most 2 x FRONT_SAMPLES samples, kept on the
  runs' device without a host synchronisation: eager steps hand each iteration's values,
  CUDA-graph replays a chunk's values at once, copied inside the graph, `record_block`),
  turned into an indicator per run and sample when the result is collected: the hypervolume of the sample's valid points (dominated
  points add nothing to it) against the reference point, and the IGD to the problem's
  Pareto front where the problem has one;
- the reference point: `ref` as given, else the problem's Pareto front's nadir (the worst
  value of each objective on the front) times 1.1 (for a nadir coordinate <= 0: the nadir
  plus a tenth of the front's extent in that objective), else none (no hypervolume).
"""

from __future__ import annotations

import torch

from ..algorithms.pareto import non_dominated
from ..problems import Problem

#: The objective-value history keeps between this many and twice as many samples per run.
FRONT_SAMPLES = 64


def reference_point(problem: Problem, ref) -> torch.Tensor | None:
    """The hypervolume's reference point (M,) float64, or None (no `ref`, no known front)."""
    M = problem.objectives
    if ref is not None:
        try:
            point = torch.as_tensor(ref, dtype=torch.float64).reshape(-1).cpu()
        except (TypeError, ValueError, RuntimeError):
            point = None
        if point is None or point.numel() != M or not torch.isfinite(point).all():
            raise ValueError(f"ref must be {M} finite numbers, one per objective of {problem.name!r}, got {ref!r}")
        return point
    front = problem.pareto_front()
    if front is None:
        return None
    nadir, ideal = front.amax(0).double(), front.amin(0).double()
    return torch.where(nadir > 0, 1.1 * nadir, nadir + 0.1 * (nadir - ideal))


def valid_points(problem: Problem, x: torch.Tensor, F: torch.Tensor) -> torch.Tensor:
    """Mask (runs, n) of the points that may front a run: finite objectives, and feasible."""
    valid = torch.isfinite(F).all(-1)
    if problem.n_constraints:
        g = problem.constraints(x)
        valid = valid & (g <= 0).all(-1)
    return valid


class FrontSamples:
    """The populations' objective values (and which points count) after iterations 0, s,
    2s, ..., for a stride s that doubles whenever more than 2 x FRONT_SAMPLES are kept."""

    def __init__(self) -> None:
        self.F: list[torch.Tensor] = []  # (runs, n, M) each
        self.valid: list[torch.Tensor] = []  # (runs, n) each
        self.iterations: list[int] = []
        self.stride = 1

    def due(self, iteration: int) -> bool:
        return iteration % self.stride == 0

    def record(self, iteration: int, F: torch.Tensor, valid: torch.Tensor) -> None:
        if self.iterations and self.iterations[-1] == iteration:
            return
        self.F.append(F.clone())
        self.valid.append(valid.clone())
        self.iterations.append(iteration)
        if len(self.iterations) > 2 * FRONT_SAMPLES:  # keep every other sample
            keep = [i for i, it in enumerate(self.iterations) if it % (2 * self.stride) == 0]
            self.F = [self.F[i] for i in keep]
            self.valid = [self.valid[i] for i in keep]
            self.iterations = [self.iterations[i] for i in keep]
            self.stride *= 2

    def record_block(self, first: int, F: torch.Tensor, valid: torch.Tensor) -> None:
        """Iterations first, first + 1, ... of a chunk: F (chunk, runs, n, M) and valid (chunk,
        runs, n), the buffers of a CUDA-graph replay; the due ones are kept (copies)."""
        for k in range(F.shape[0]):
            if self.due(first + k):
                self.record(first + k, F[k], valid[k])

    def indicators(self, ref: torch.Tensor | None, front: torch.Tensor | None) -> dict:
        """{"hv": (runs, T) or None, "igd": (runs, T) or None}, float64 on the CPU."""
        from .. import metrics  # numpy and moocore: only when a run set has several objectives

        hv = igd = None
        if ref is not None:
            hv = torch.stack([metrics.hypervolume(F.double(), ref, mask=v).cpu()
                              for F, v in zip(self.F, self.valid)], 1)
        if front is not None:
            igd = torch.stack([metrics.igd(F.double(), front, mask=v).cpu() for F, v in zip(self.F, self.valid)], 1)
        return {"hv": hv, "igd": igd}


def final_fronts(x: torch.Tensor, F: torch.Tensor, valid: torch.Tensor) -> tuple[list, list]:
    """Each run's non-dominated valid points: (front_x, front_f), lists of one CPU float64
    tensor per run, (k_r, D) and (k_r, M)."""
    keep = non_dominated(F, valid).cpu()
    x, F = x.detach().cpu().double(), F.detach().cpu().double()
    return [x[r][keep[r]] for r in range(x.shape[0])], [F[r][keep[r]] for r in range(x.shape[0])]
