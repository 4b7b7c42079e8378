"""The algorithm contract: hyper-parameters in a dataclass, pure `init` and `step`.

```python
state = algo.init(problem, runs)     # tensors with a leading `runs` axis
state = algo.step(problem, state)    # one iteration: pure tensor code, no host sync
```

Random numbers come from torch's default generator of the state's device (`torch.rand`
without a `generator=` argument). The engine seeds that generator for each run set and
swaps it in and out around every call, so runs are reproducible and isolated from the
caller's own random numbers; this is also the form `torch.compile` and CUDA-graph capture
support, which generator objects are not.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from ..problems.base import Problem


@dataclass
class State:
    """Every state carries the population `x` (runs, pop, dim) and its fitness `f` (runs, pop)."""

    x: torch.Tensor
    f: torch.Tensor

    def replace(self, **changes) -> State:
        return dataclasses.replace(self, **changes)


@dataclass(kw_only=True)
class Algorithm:
    """Base of every algorithm: subclasses are dataclasses of their hyper-parameters."""

    pop_size: int = 100

    #: registry name, the smallest population it works with, named parameter sets
    name: ClassVar[str] = "algorithm"
    min_pop: ClassVar[int] = 1
    presets: ClassVar[dict[str, dict]] = {}
    paper: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if isinstance(self.pop_size, bool) or not isinstance(self.pop_size, int):
            raise ValueError(f"{self.name}: pop_size must be an integer, got {self.pop_size!r}")
        if self.pop_size < self.min_pop:
            raise ValueError(
                f"{self.name} needs a population of at least {self.min_pop}, got pop_size={self.pop_size}"
            )
        if getattr(self, "max_iters", None) is not None:
            check_positive(self.name, max_iters=self.max_iters)

    def init(self, problem: Problem, runs: int) -> State:  # pragma: no cover - abstract
        raise NotImplementedError

    def step(self, problem: Problem, state: State) -> State:  # pragma: no cover - abstract
        raise NotImplementedError

    # The engine's evaluation budget: how many points init and each step evaluate per run.
    def evals_per_init(self) -> int:
        return self.pop_size

    def evals_per_step(self) -> int:
        return self.pop_size

    def params(self) -> dict:
        return dataclasses.asdict(self)

    def with_horizon(self, steps: float) -> Algorithm:
        """This algorithm for a run of `steps` iterations.

        Algorithms whose schedule depends on the run's length declare a field `max_iters`;
        left at None, it is taken from the engine's budget here.
        """
        if getattr(self, "max_iters", 0) is not None:
            return self
        if not math.isfinite(steps):
            raise ValueError(
                f"{self.name} schedules its steps over max_iters: give iters or evals, or set max_iters=..."
            )
        return dataclasses.replace(self, max_iters=int(steps))

    def finish(self, problem: Problem, state: State, best_x: torch.Tensor, best_f: torch.Tensor):
        """After the last step: improved `(best_x, best_f, info)`, or None (the default).

        Wrappers such as `heuriscale.local.Hybrid` refine the best points here.
        """
        return None

    def check_ready(self) -> None:
        if getattr(self, "max_iters", 0) is None:
            raise ValueError(f"{self.name} needs max_iters (the length of its schedule): set max_iters=...")


_phase_hook = None  # set by the engine's profiling mode: name -> context manager


def phase(name: str):
    """Mark a named phase of a step (e.g. paper 004's mutation / selection).

    A no-op unless the engine profiles, in which case the time spent in each phase is
    reported in `result.extra["phases"]`.
    """
    return contextlib.nullcontext() if _phase_hook is None else _phase_hook(name)


def set_phase_hook(hook) -> None:
    global _phase_hook
    _phase_hook = hook


def uniform(lower: torch.Tensor, upper: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Points uniform in the box, shape `shape + (dim,)`, on the bounds' device and dtype."""
    r = torch.rand(*shape, lower.shape[-1], device=lower.device, dtype=lower.dtype)
    return lower + (upper - lower) * r


def take_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """`x[r, index[r]]` for x of shape (runs, n, dim) and index of shape (runs,)."""
    return x.gather(1, index[:, None, None].expand(-1, 1, x.shape[-1])).squeeze(1)


def check_positive(name: str, **values: float) -> None:
    """Raise a clear error for hyper-parameters that must be > 0."""
    for key, value in values.items():
        if not value > 0:
            raise ValueError(f"{name}: {key} must be > 0, got {value!r}")
