"""Adapters that turn a user's objective into a `Problem`.

- `TorchFunction`: a torch function of `x[..., D]`; runs on the device, compiles.
- `NumpyFunction`: a NumPy function of a `(n, D)` array returning `(n,)`; points are copied
  to the host, evaluated there and the values moved back (paper 002's "GPU with CPU
  fitness" mode).
- `ScalarFunction`: a Python function of one point returning one number; looped, or
  spread over worker processes for expensive objectives.

A user function that raises is reported as a `ValueError` naming the objective and the
points it was given, chained to the original exception (`raise ... from exc`); one that
returns the wrong type, shape or dtype (a list, shape (n, 1), complex values, ...) gets an
error saying what it returned and what to return instead.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor

import numpy as np
import torch

from .base import BoundLike, Problem, check_fitness, count_points, fitness_error
from .parallel import BadValue, Workers, check_workers, real_number

class ObjectiveError(ValueError):
    """An objective's own one-line error that says all there is (e.g. it does not compile)."""


#: Failures that are the machine's, not the objective's, or already say what went wrong:
#: passed on as they are.
_PASS_THROUGH = (MemoryError, torch.cuda.OutOfMemoryError, ObjectiveError)


def _raised(who: str, exc: Exception, x_shape: tuple[int, ...]) -> ValueError:
    """The error for an objective that raised: its name, the points, the original exception."""
    return ValueError(
        f"objective {who!r} raised {type(exc).__name__} on points of shape {tuple(x_shape)} "
        f"({count_points(x_shape)}): {exc}"
    )


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
        try:
            f = self.fn(x)
        except _PASS_THROUGH:
            raise
        except Exception as exc:
            raise _raised(self.name, exc, tuple(x.shape)) from exc
        return check_fitness(f, x, self.name)


class _HostFunction(Problem):
    """Shared host round trip: flatten the batch, evaluate on the host, move back."""

    host_bound = True

    def __init__(self, fn, dim, lower, upper, *, name, optimum_f, optimum_x) -> None:
        super().__init__(dim, lower, upper, optimum_f=optimum_f, optimum_x=optimum_x)
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")
        self._pinned_buffers: dict = {}  # the device round trip's host buffers, by shape

    def _evaluate_rows(self, rows: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type == "cuda":
            return self._evaluate_from_the_device(x)
        values = self.values_of_rows(x.detach().reshape(-1, self.dim).numpy())
        return torch.from_numpy(values).to(dtype=x.dtype).reshape(x.shape[:-1])

    def _evaluate_from_the_device(self, x: torch.Tensor) -> torch.Tensor:
        """Points on a GPU through pinned host buffers (kept between calls): one asynchronous
        copy down, a wait for it, the evaluation, one asynchronous copy up. The next call's
        wait also covers this call's copy up, so its buffer is never overwritten early."""
        points, values = self._pinned(x)
        points.copy_(x.detach().reshape(-1, self.dim), non_blocking=True)
        torch.cuda.current_stream(x.device).synchronize()
        values.copy_(torch.from_numpy(self.values_of_rows(points.numpy())))
        return values.to(x.device, non_blocking=True).reshape(x.shape[:-1])

    def _pinned(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n, key = x.numel() // self.dim, (x.numel(), x.dtype, x.device)
        buffers = self._pinned_buffers
        if key not in buffers:
            buffers.clear()  # one size at a time: a run set evaluates one shape
            buffers[key] = (torch.empty(n, self.dim, dtype=x.dtype, pin_memory=True),
                            torch.empty(n, dtype=x.dtype, pin_memory=True))
        return buffers[key]

    def values_of_rows(self, rows: np.ndarray) -> np.ndarray:
        """The objective of the points `rows` (n, D), a NumPy array on the host, as float64
        values (n,): what `evaluate` does without torch (the native CPU kernels call it
        between their calls, on views of their own buffers)."""
        try:
            raw = self._evaluate_rows(rows)
        except _PASS_THROUGH:
            raise
        except BadValue as bad:
            raise fitness_error(self.name, bad.what, rows.shape, "one real number per point") from None
        except Exception as exc:
            raise _raised(self.name, exc, rows.shape) from exc
        return _real_array(raw, self.name, rows.shape)


def _real_array(raw, who: str, rows_shape: tuple[int, int]) -> np.ndarray:
    """A host objective's output as float64 values of shape (n,), or a clear error."""
    if isinstance(raw, torch.Tensor):
        raw = raw.detach().cpu().numpy()
    try:
        values = np.asarray(raw)
    except Exception:  # ragged nested lists and the like
        raise fitness_error(who, f"a value of type {type(raw).__name__} that is not an array", rows_shape) from None
    if values.shape != rows_shape[:1]:
        raise fitness_error(who, f"shape {values.shape}", rows_shape)
    if values.dtype.kind not in "fiu":
        raise fitness_error(who, f"{values.dtype} values", rows_shape, "real numbers (a float array)")
    return values.astype(np.float64, copy=False)


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

    With `workers=k` (k > 1) the points are spread over k worker processes (`Workers`, the
    pool an ask/tell loop uses too; the function must then be picklable: defined at module
    level). Pass `executor=` to reuse your own `concurrent.futures` executor instead.
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
        self.workers = workers if workers is None else check_workers(workers)
        self._pool = Workers(executor=executor) if executor is not None else (
            Workers(workers) if (workers or 1) > 1 else None)

    def _evaluate_rows(self, rows: np.ndarray) -> np.ndarray:
        if self._pool is None:
            return np.array([real_number(self.fn(row)) for row in rows])
        return self._pool.map(self.fn, rows)

    def close(self) -> None:
        """Shut down worker processes this problem started."""
        if self._pool is not None:
            self._pool.close()
