"""The `Problem` base class: a search box plus a vectorised objective.

A problem is what is optimised. It holds the dimension, the bounds as 1-D tensors and,
when known, the optimum. `evaluate(x)` takes points of shape `(..., dim)` on any device
and returns fitness values of shape `(...)` on the same device: every built-in problem
is torch code vectorised over all leading dimensions, so one call evaluates a whole
batch of populations. A problem with several objectives declares `objectives = M` and
returns `(..., M)`; its `pareto_front()` is what its optimum is for one objective.
"""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Sequence

import numpy as np
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
    #: True when `evaluate` draws random numbers of its own (a noisy objective such as Yao's
    #: f7): its generator cannot be captured in a CUDA graph, so the engine steps eagerly.
    stochastic: bool = False
    #: A problem that holds one instance per run (bbob's `instance=[1, ..., 15]`): how many
    #: runs. Its `evaluate` then takes points with the runs axis first, (runs, ..., dim), and
    #: run r is its r-th instance; the engine checks that a run set has that many runs.
    #: None: one problem for every run (any leading shape).
    runs_held: int | None = None
    #: How many objectives `evaluate` returns, all minimised: 1 gives values of shape (...),
    #: M > 1 gives (..., M). A problem with several objectives has no `optimum_f` (None); its
    #: `pareto_front()` plays that part.
    objectives: int = 1

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

    def run_optima(self, runs: int) -> list[float] | None:
        """Each run's known optimum value (a problem holding one instance per run has one per
        run), or None where unknown."""
        return None if self.optimum_f is None else [self.optimum_f] * runs

    def pareto_front(self, n: int | None = None) -> torch.Tensor | None:
        """The true Pareto front (or a reference set sampled on it) as an (n_points, objectives)
        float64 CPU tensor, the reference for IGD and for a hypervolume's reference point;
        `n` asks for about that many points (each problem says how it reads it). None where
        unknown (the default, and for every problem with one objective)."""
        return None

    def select_runs(self, runs: Sequence[int]) -> Problem:
        """The problem of these runs of a run set (a study running some repeats of a
        configuration): a problem holding one instance per run keeps those runs' instances;
        any other is the same for every run and returns itself."""
        return self

    def constraints(self, x: torch.Tensor) -> torch.Tensor:
        """Constraint values g[..., n_constraints]; the point is feasible where all g <= 0."""
        raise NotImplementedError(f"problem {self.name!r} has no constraints")

    def decode(self, x: torch.Tensor) -> dict:
        """A readable form of one solution x[dim] (thresholds, a design, ...)."""
        return {"x": [float(v) for v in x]}

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> Problem:
        """A shallow copy whose tensor attributes live on `device` (floats cast to `dtype`)."""
        if dtype is not None and dtype.is_floating_point:
            self._check_box_fits(dtype)
        moved = copy.copy(self)
        for key, value in vars(self).items():
            if isinstance(value, torch.Tensor):
                cast = dtype if (dtype is not None and value.is_floating_point()) else value.dtype
                setattr(moved, key, value.to(device=device, dtype=cast))
        return moved

    def _check_box_fits(self, dtype: torch.dtype) -> None:
        """The box, and its width, must be finite numbers in `dtype` (or sampling it gives inf/NaN)."""
        lo, hi = self.lower.to(dtype), self.upper.to(dtype)
        if not (torch.isfinite(lo).all() and torch.isfinite(hi).all() and torch.isfinite(hi - lo).all()):
            raise ValueError(
                f"problem {self.name!r}: the box {self.describe()['bounds']} does not fit in "
                f"{str(dtype).removeprefix('torch.')} (largest {torch.finfo(dtype).max:.3g}, also for upper - lower): "
                "use dtype float64 or a smaller box"
            )

    def describe(self) -> dict:
        """Plain description for listings, results and JSON."""
        lo, hi = self.lower, self.upper
        same = bool((lo == lo[0]).all() and (hi == hi[0]).all())
        bounds = [float(lo[0]), float(hi[0])] if same else [lo.tolist(), hi.tolist()]
        described = {"name": self.name, "dim": self.dim, "bounds": bounds, "optimum_f": self.optimum_f}
        if self.objectives > 1:  # one objective keeps the description it always had
            described["objectives"] = self.objectives
        return described

    def __repr__(self) -> str:
        d = self.describe()
        return f"{type(self).__name__}(name={d['name']!r}, dim={d['dim']}, bounds={d['bounds']})"


class ProblemWrapper(Problem):
    """A problem that wraps another: same box, optimum, name and flags; `inner` does the work."""

    def __init__(self, inner: Problem) -> None:
        self.__dict__.update(vars(inner))
        self.name, self.host_bound, self.n_constraints = inner.name, inner.host_bound, inner.n_constraints
        self.stochastic, self.runs_held = inner.stochastic, inner.runs_held
        self.objectives = inner.objectives
        self.inner = inner

    def pareto_front(self, n: int | None = None) -> torch.Tensor | None:
        return self.inner.pareto_front(n)

    def constraints(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner.constraints(x)

    def run_optima(self, runs: int) -> list[float] | None:
        return self.inner.run_optima(runs)

    def decode(self, x: torch.Tensor) -> dict:
        return self.inner.decode(x)

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> ProblemWrapper:
        moved = super().to(device, dtype)
        moved.inner = self.inner.to(device, dtype)
        return moved


#: Sizes (dimensions, populations, iterations) past this cannot shape or count a tensor.
MAX_SIZE = 2**63 - 1


def is_integer(value) -> bool:
    """An int (or NumPy integer), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value) -> bool:
    """A finite real number (int, float or NumPy scalar) that a float64 holds, not a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past float64
        return False


def check_dim(dim: int) -> int:
    if not is_integer(dim) or dim < 1:
        raise ValueError(f"dimension must be a positive integer, got {dim!r}")
    if dim > MAX_SIZE:
        raise ValueError(f"dimension {dim} is too large: at most 2**63 - 1 (a 64-bit integer)")
    return int(dim)


def _as_vector(dim: int, value: BoundLike, what: str) -> torch.Tensor:
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{what} must be a number or {dim} numbers, got {value!r}")
    try:
        t = torch.as_tensor(value, dtype=torch.float64).detach().cpu()
    except (TypeError, ValueError, RuntimeError, OverflowError):
        raise ValueError(f"{what} must be a number or {dim} numbers, got {value!r}") from None
    if t.ndim == 0:
        try:
            return t.expand(dim).clone()
        except RuntimeError:  # the allocator's "can't allocate memory"
            raise ValueError(
                f"dimension {dim} is too large for this machine: the {what} alone needs {8 * dim / 2**30:.3g} GiB"
            ) from None
    if t.ndim != 1 or t.shape[0] != dim:
        raise ValueError(
            f"{what} has {t.numel()} entries (shape {tuple(t.shape)}) but the dimension is "
            f"{dim}: give one number or exactly {dim}"
        )
    return t.clone()


def split_bounds(bounds) -> tuple[BoundLike, BoundLike]:
    """`bounds=(lower, upper)` as its two parts, or a clear error for anything else."""
    try:
        pair = isinstance(bounds, (tuple, list, torch.Tensor, np.ndarray)) and len(bounds) == 2
    except TypeError:  # a 0-d tensor or array
        pair = False
    if not pair:
        raise ValueError(
            f"bounds must be a pair (lower, upper) of numbers (or of one number per coordinate), "
            f"got {bounds!r}: e.g. bounds=(-5, 10), -P bounds=-5,10 on the command line"
        )
    return bounds[0], bounds[1]


def make_bounds(dim: int, lower: BoundLike, upper: BoundLike) -> tuple[torch.Tensor, torch.Tensor]:
    """Validated float64 bound vectors of length `dim` (scalars are broadcast)."""
    lo = _as_vector(dim, lower, "lower bound")
    hi = _as_vector(dim, upper, "upper bound")
    if not (torch.isfinite(lo).all() and torch.isfinite(hi).all()):
        raise ValueError("bounds must be finite numbers: the algorithms sample the search box")
    if not torch.isfinite(hi - lo).all():
        raise ValueError("the box is too wide: upper - lower overflows float64; use smaller bounds")
    bad = (lo > hi).nonzero().flatten()
    if bad.numel():
        i = int(bad[0])
        raise ValueError(
            f"lower bound > upper bound at coordinate {i} ({float(lo[i])} > {float(hi[i])}): "
            "swap them or fix the bounds"
        )
    return lo, hi


def count_points(x_shape: tuple[int, ...]) -> str:
    """'10 points of dim 3' for points of shape (..., 3) numbering 10."""
    n = 1
    for size in x_shape[:-1]:
        n *= size
    return f"{n} point{'s' if n != 1 else ''} of dim {x_shape[-1]}"


def fitness_error(who: str, what: str, x_shape: tuple[int, ...], expected: str | None = None) -> ValueError:
    """The error for an objective whose output is unusable: names the objective, what it
    returned, for which points, and what to return instead."""
    expected = expected or f"one real value per point, shape {tuple(x_shape[:-1])}"
    return ValueError(
        f"objective {who!r} returned {what} for points of shape {tuple(x_shape)} "
        f"({count_points(x_shape)}): return {expected}"
    )


def check_fitness(f: torch.Tensor, x: torch.Tensor, who: str, objectives: int = 1) -> torch.Tensor:
    """Raise a clear error when an objective returns the wrong type, shape, dtype or device
    (static checks: no synchronisation, nothing compiled depends on them). With
    `objectives = M > 1` the values must have shape (..., M).

    Integer values are accepted (the engine casts them to the run's dtype); complex and
    boolean ones are not.
    """
    shape = tuple(x.shape[:-1]) + ((objectives,) if objectives > 1 else ())
    per_point = "one real value per point" if objectives == 1 else f"{objectives} real values per point"
    if not isinstance(f, torch.Tensor):
        what = "None" if f is None else f"a value of type {type(f).__name__}"
        raise fitness_error(who, what, tuple(x.shape), f"a torch tensor, {per_point}, shape {shape}")
    if tuple(f.shape) != shape:
        raise fitness_error(who, f"shape {tuple(f.shape)}", tuple(x.shape), f"{per_point}, shape {shape}")
    if f.dtype.is_complex or f.dtype == torch.bool:
        raise fitness_error(who, f"{str(f.dtype).removeprefix('torch.')} values", tuple(x.shape),
                            "real numbers (a float tensor)")
    if f.device != x.device:
        raise fitness_error(who, f"values on {f.device}", tuple(x.shape), f"them on the points' device, {x.device}")
    return f
