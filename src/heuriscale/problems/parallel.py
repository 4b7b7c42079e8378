"""Evaluations spread over worker processes: one way, for `ScalarFunction(workers=k)` and for
an ask/tell loop whose points are expensive (a simulation, a program run as a subprocess).

    with hs.Workers(8) as workers:
        while not opt.done:
            x = opt.ask()
            opt.tell(workers.map(simulate, x))     # simulate(point) -> number, in 8 processes

Workers start with the `forkserver` method on Linux (never inheriting a CUDA context, which
is unsafe after fork; `spawn` elsewhere), so `fn` must be picklable: defined at module
level. They ignore SIGINT: Ctrl-C in a terminal reaches the whole process group, and the
main process decides what a signal means (finish the batch, save, stop), not each worker.
Every value is checked as an objective's would be (one real number per point).
"""

from __future__ import annotations

import math
import multiprocessing
import numbers
import signal
import sys
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor

import numpy as np
import torch


class BadValue(Exception):
    """A point's value that is not one real number (`what` says what it was)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def real_number(value) -> float:
    """One point's value as a float, or `BadValue` saying what it was."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        try:
            return float(value)
        except OverflowError:  # an int past float64
            return math.inf if value > 0 else -math.inf
    raise BadValue(f"{value!r}{'' if value is None else f' (a {type(value).__name__})'} as one point's value")


def check_workers(workers) -> int:
    """`workers` if it is a worker count (an integer >= 1), else a clear error."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    return workers


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Workers:
    """A pool of `workers` processes evaluating one point per call of `fn`; or `executor=`,
    a `concurrent.futures` executor of your own (not shut down by `close`)."""

    def __init__(self, workers: int | None = None, *, executor: Executor | None = None) -> None:
        if executor is None:
            check_workers(workers)
        self.workers = workers or getattr(executor, "_max_workers", 4)
        self._executor, self._own = executor, executor is None

    def map(self, fn: Callable[[np.ndarray], float], points) -> np.ndarray:
        """`fn` of each point of `points` ((n, D), or (runs, n, D) from an ask/tell run: the
        values come back in the same leading shape), as float64 values."""
        rows = points.detach().cpu().numpy() if isinstance(points, torch.Tensor) else np.asarray(points)
        flat = rows.reshape(-1, rows.shape[-1])
        if self._executor is None:
            # forkserver: workers never inherit a CUDA context (fork after CUDA init is unsafe)
            context = multiprocessing.get_context("forkserver" if sys.platform == "linux" else "spawn")
            self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=context,
                                                 initializer=_ignore_interrupts)
        chunk = max(1, len(flat) // (4 * self.workers))
        return np.array([real_number(v) for v in self._executor.map(fn, flat, chunksize=chunk)]).reshape(rows.shape[:-1])

    def close(self) -> None:
        """Shut down the worker processes this pool started."""
        if self._executor is not None and self._own:
            self._executor.shutdown()
            self._executor = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
