"""The `Problem` base class: a search box plus a vectorised objective.

A problem is what is optimised. It holds the dimension, the bounds as 1-D tensors and,
when known, the optimum. `evaluate(x)` takes points of shape `(..., dim)` on any device
and returns fitness values of shape `(...)` on the same device: every built-in problem
is torch code vectorised over all leading dimensions, so one call evaluates a whole
batch of populations.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch

BoundLike = float | int | Sequence[float] | torch.Tensor


class Problem:
    """Minimise `evaluate(x)` over the box `lower <= x <= upper`.

    Subclasses implement `evaluate`; they set `name` and may set `optimum_f` (the known
    minimum value) and `optimum_x` (a minimiser). Tensors stored as attributes move with
    `to(device, dtype)`, so a subclass keeps its data (shift vectors, histograms, ...) as
    tensor attributes and never thinks about devices.
    """

    name: str = "problem"
    #: True when `evaluate` leaves the device (NumPy or Python objectives): the engine
    #: then never compiles or graph-captures a step that calls it.
    host_bound: bool = False
    #: How many constraints g(x) <= 0 `constraints` returns (0: unconstrained).
    n_constraints: int = 0

    def __init__(
        self,
        dim: int,
        lower: BoundLike,
        upper: BoundLike,
        *,
        optimum_f: float | None = None,
        optimum_x: BoundLike | None = None,
    ) -> None:
        self.dim = check_dim(dim)
        self.lower, self.upper = make_bounds(self.dim, lower, upper)
        self.optimum_f = None if optimum_f is None else float(optimum_f)
        self.optimum_x = None if optimum_x is None else _as_vector(self.dim, optimum_x, "optimum_x")

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement evaluate(x)")

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.evaluate(x)

    def constraints(self, x: torch.Tensor) -> torch.Tensor:
        """Constraint values g[..., n_constraints]; the point is feasible where all g <= 0."""
        raise NotImplementedError(f"problem {self.name!r} has no constraints")

    def decode(self, x: torch.Tensor) -> dict:
        """A readable form of one solution x[dim] (thresholds, a design, ...)."""
        return {"x": [float(v) for v in x]}

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> Problem:
        """A shallow copy whose tensor attributes live on `device` (floats cast to `dtype`)."""
        moved = copy.copy(self)
        for key, value in vars(self).items():
            if isinstance(value, torch.Tensor):
                cast = dtype if (dtype is not None and value.is_floating_point()) else value.dtype
                setattr(moved, key, value.to(device=device, dtype=cast))
        return moved

    def describe(self) -> dict:
        """Plain description for listings, results and JSON."""
        lo, hi = self.lower, self.upper
        same = bool((lo == lo[0]).all() and (hi == hi[0]).all())
        bounds = [float(lo[0]), float(hi[0])] if same else [lo.tolist(), hi.tolist()]
        return {"name": self.name, "dim": self.dim, "bounds": bounds, "optimum_f": self.optimum_f}

    def __repr__(self) -> str:
        d = self.describe()
        return f"{type(self).__name__}(name={d['name']!r}, dim={d['dim']}, bounds={d['bounds']})"


class ProblemWrapper(Problem):
    """A problem that wraps another: same box, optimum, name and flags; `inner` does the work."""

    def __init__(self, inner: Problem) -> None:
        self.__dict__.update(vars(inner))
        self.name, self.host_bound, self.n_constraints = inner.name, inner.host_bound, inner.n_constraints
        self.inner = inner

    def constraints(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner.constraints(x)

    def decode(self, x: torch.Tensor) -> dict:
        return self.inner.decode(x)

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> ProblemWrapper:
        moved = super().to(device, dtype)
        moved.inner = self.inner.to(device, dtype)
        return moved


def check_dim(dim: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dimension must be a positive integer, got {dim!r}")
    return dim


def _as_vector(dim: int, value: BoundLike, what: str) -> torch.Tensor:
    t = torch.as_tensor(value, dtype=torch.float64).detach().cpu()
    if t.ndim == 0:
        return t.expand(dim).clone()
    if t.ndim != 1 or t.shape[0] != dim:
        raise ValueError(
            f"{what} has {t.numel()} entries (shape {tuple(t.shape)}) but the dimension is "
            f"{dim}: give one number or exactly {dim}"
        )
    return t.clone()


def make_bounds(dim: int, lower: BoundLike, upper: BoundLike) -> tuple[torch.Tensor, torch.Tensor]:
    """Validated float64 bound vectors of length `dim` (scalars are broadcast)."""
    lo = _as_vector(dim, lower, "lower bound")
    hi = _as_vector(dim, upper, "upper bound")
    if not (torch.isfinite(lo).all() and torch.isfinite(hi).all()):
        raise ValueError("bounds must be finite numbers: the algorithms sample the search box")
    bad = (lo > hi).nonzero().flatten()
    if bad.numel():
        i = int(bad[0])
        raise ValueError(
            f"lower bound > upper bound at coordinate {i} ({float(lo[i])} > {float(hi[i])}): "
            "swap them or fix the bounds"
        )
    return lo, hi


def check_fitness(f: torch.Tensor, x: torch.Tensor, who: str) -> torch.Tensor:
    """Raise a clear error when an objective returns the wrong shape (a static check)."""
    if not isinstance(f, torch.Tensor):
        raise ValueError(f"objective {who!r} returned {type(f).__name__}, expected a tensor")
    if f.shape != x.shape[:-1]:
        raise ValueError(
            f"objective {who!r} returned shape {tuple(f.shape)} for points of shape "
            f"{tuple(x.shape)}; it must return one value per point, shape {tuple(x.shape[:-1])}"
        )
    return f
