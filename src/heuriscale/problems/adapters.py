"""Adapters that turn a user's objective into a `Problem`.

- `TorchFunction`: a torch function of `x[..., D]`; runs on the device, compiles.
- `NumpyFunction`: a NumPy function of a `(n, D)` array returning `(n,)`; points are copied
  to the host, evaluated there and the values moved back (paper 002's "GPU with CPU
  fitness" mode).
- `ScalarFunction`: a Python function of one point returning one number; looped, or
  spread over worker processes for expensive objectives.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor

import numpy as np
import torch

from .base import BoundLike, Problem, check_fitness


class TorchFunction(Problem):
    """`fn(x[..., D]) -> f[...]` written in torch."""

    def __init__(
        self,
        fn: Callable[[torch.Tensor], torch.Tensor],
        dim: int,
        lower: BoundLike,
        upper: BoundLike,
        *,
        name: str | None = None,
        optimum_f: float | None = None,
        optimum_x: BoundLike | None = None,
    ) -> None:
        super().__init__(dim, lower, upper, optimum_f=optimum_f, optimum_x=optimum_x)
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "torch-function")

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        return check_fitness(self.fn(x), x, self.name)


class _HostFunction(Problem):
    """Shared host round trip: flatten the batch, evaluate on the host, move back."""

    host_bound = True

    def __init__(self, fn, dim, lower, upper, *, name, optimum_f, optimum_x) -> None:
        super().__init__(dim, lower, upper, optimum_f=optimum_f, optimum_x=optimum_x)
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")

    def _evaluate_rows(self, rows: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.detach().reshape(-1, self.dim).cpu().numpy()
        values = np.asarray(self._evaluate_rows(rows), dtype=np.float64)
        if values.shape != (rows.shape[0],):
            raise ValueError(
                f"objective {self.name!r} returned shape {values.shape} for {rows.shape[0]} "
                f"points of dimension {self.dim}; it must return shape ({rows.shape[0]},)"
            )
        f = torch.from_numpy(values).to(device=x.device, dtype=x.dtype)
        return f.reshape(x.shape[:-1])


class NumpyFunction(_HostFunction):
    """`fn(X[n, D]) -> f[n]` written in NumPy, evaluated on the host."""

    def __init__(
        self,
        fn: Callable[[np.ndarray], np.ndarray],
        dim: int,
        lower: BoundLike,
        upper: BoundLike,
        *,
        name: str | None = None,
        optimum_f: float | None = None,
        optimum_x: BoundLike | None = None,
    ) -> None:
        super().__init__(fn, dim, lower, upper, name=name, optimum_f=optimum_f, optimum_x=optimum_x)

    def _evaluate_rows(self, rows: np.ndarray) -> np.ndarray:
        return self.fn(rows)


class ScalarFunction(_HostFunction):
    """`fn(x[D]) -> float`, called once per point.

    With `workers=k` (k > 1) the points are spread over k worker processes (the function
    must then be picklable: defined at module level). Pass `executor=` to reuse your own
    `concurrent.futures` executor instead.
    """

    def __init__(
        self,
        fn: Callable[[np.ndarray], float],
        dim: int,
        lower: BoundLike,
        upper: BoundLike,
        *,
        name: str | None = None,
        optimum_f: float | None = None,
        optimum_x: BoundLike | None = None,
        workers: int | None = None,
        executor: Executor | None = None,
    ) -> None:
        super().__init__(fn, dim, lower, upper, name=name, optimum_f=optimum_f, optimum_x=optimum_x)
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers
        self._executor = executor

    def _evaluate_rows(self, rows: np.ndarray) -> np.ndarray:
        if self._executor is None and (self.workers or 1) > 1:
            # forkserver: workers never inherit a CUDA context (fork after CUDA init is unsafe)
            context = multiprocessing.get_context("forkserver" if sys.platform == "linux" else "spawn")
            self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=context)
        if self._executor is None:
            return np.array([float(self.fn(row)) for row in rows])
        chunk = max(1, len(rows) // (4 * (self.workers or 4)))
        return np.fromiter(self._executor.map(self.fn, rows, chunksize=chunk), float, len(rows))

    def close(self) -> None:
        """Shut down worker processes this problem started."""
        if self._executor is not None and self.workers:
            self._executor.shutdown()
            self._executor = None
