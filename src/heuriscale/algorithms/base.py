"""The algorithm contract: hyper-parameters in a dataclass, pure `init` and `step`.

```python
state = algo.init(problem, runs)     # tensors with a leading `runs` axis
state = algo.step(problem, state)    # one iteration: pure tensor code, no host sync
```

Each is two halves around one evaluation, which is what an algorithm writes:

```python
proposal = algo.ask(problem, state)              # the points to evaluate, proposal.x
state = algo.tell(problem, state, proposal, f)   # their values f taken: the next state
```

(`ask_init` / `tell_init` for the initial population: by default a uniform population in
the box, and the state of it and its values). `step` is ask, evaluate, tell, so
the same code serves `minimize`, `AskTell` (objectives evaluated outside the process) and
the engine's fast paths, as evosax and pycma structure it.

Everything else an algorithm brings is declared once, on its class, and read from there by
the engine, `auto`, warm-up, the studies, `heuriscale list` and the shared tests:

    name, paper        registry name, the paper it follows
    state_type         its State dataclass: the fields a checkpoint holds
    min_pop            the smallest population it works with
    presets            named parameter sets (the papers' settings)
    population_copies  its memory model (or override `memory_bytes`)
    kernels            its fast paths: `Kernels(cuda=..., cpu=...)`, or None (the torch
                       step then runs everywhere: eager, graph and compiled on CUDA, eager on
                       the CPU)
    migration_key      what ranks individuals for migration between islands

See docs/adding-an-algorithm.md for the path from a paper's equations to a registered,
tested algorithm and its kernels.

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

from ..problems.base import MAX_SIZE, Problem, is_integer, is_real  # noqa: F401 - re-exported for algorithms


@dataclass(frozen=True)
class Kernels:
    """Which fast paths an algorithm has, by name: the engine finds them in
    `engine/kernels/<folder>/cuda.py` (fused Triton kernels, `engine="fused"`) and
    `engine/kernels/<folder>/cpu.py` (native Numba kernels, `engine="native"`), where
    `folder` defaults to the algorithm's name. Names only: an algorithm never imports the
    engine, and its kernels are tested against its torch step."""

    cuda: bool = False
    cpu: bool = False
    folder: str | None = None

    def has(self, device_type: str) -> bool:
        """True when there are kernels for this device type ("cuda" or "cpu")."""
        return bool(getattr(self, device_type, False))


class Proposal:
    """What `ask` proposes: the points to evaluate, `x` (runs, n, dim), and by name whatever
    `tell` needs to take their values (PSO: the new velocities; APO: the sorted parents)."""

    def __init__(self, x: torch.Tensor, **carry: torch.Tensor) -> None:
        self.x = x
        for name, value in carry.items():  # (not __dict__.update, where torch.compile of torch 2.11 breaks its graph)
            setattr(self, name, value)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={tuple(v.shape)}" for k, v in vars(self).items())
        return f"Proposal({fields})"


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

    #: registry name, the paper it follows (a short citation; the five papers `heuriscale
    #: reproduce` follows are cited in full in studies/papers.py), the smallest population it
    #: works with, named parameter sets
    name: ClassVar[str] = "algorithm"
    paper: ClassVar[str] = ""
    min_pop: ClassVar[int] = 1
    presets: ClassVar[dict[str, dict]] = {}
    #: The State dataclass `init` and `step` return: its fields are what a checkpoint holds.
    state_type: ClassVar[type[State]] = State
    #: Population-sized tensors (runs, pop, dim) alive at a step's peak, state and temporaries
    #: together (measured on the CPU's eager step: peak memory / one population's bytes).
    population_copies: ClassVar[int] = 12
    #: Why a CUDA graph cannot capture the step ("": it can), e.g. CMA-ES's torch.linalg.eigh,
    #: which synchronises with the host; the engines then run it eagerly on CUDA.
    uncapturable: ClassVar[str] = ""
    #: False where splitting a run's population into islands makes no sense (L-SHADE: its
    #: population shrinks as a whole over the budget); under torchrun use islands=False.
    islands_offered: ClassVar[bool] = True
    #: Its fast paths (None: the torch step only, which every engine but the kernels' runs).
    kernels: ClassVar[Kernels | None] = None
    #: True when it optimises several objectives at once (`Problem.objectives` > 1: values
    #: (runs, n, M)); the engine refuses a problem of several objectives to any other.
    multi_objective: ClassVar[bool] = False

    def __post_init__(self) -> None:
        sized_by_dim = type(self).default_pop is not Algorithm.default_pop  # pop_size=None: from the dimension
        if self.pop_size is not None or not sized_by_dim:
            if not is_integer(self.pop_size):
                raise ValueError(f"{self.name}: pop_size must be an integer >= {self.min_pop}, got {self.pop_size!r}")
            if self.pop_size < self.min_pop:
                raise ValueError(
                    f"{self.name} needs a population of at least {self.min_pop}, got pop_size={self.pop_size}: "
                    "raise pop_size (--pop)"
                )
            self.pop_size = check_size(self.name, "pop_size", self.pop_size)
        if getattr(self, "max_iters", None) is not None:
            if not is_integer(self.max_iters) or self.max_iters < 1:
                raise ValueError(
                    f"{self.name}: max_iters must be > 0 (a whole number of iterations), got {self.max_iters!r}"
                )
            self.max_iters = check_size(self.name, "max_iters", self.max_iters)

    # -- one iteration: two halves around one evaluation -------------------------------------
    def ask_init(self, problem: Problem, runs: int) -> Proposal:
        """The initial population's points (and what `tell_init` needs with their values):
        by default `pop_size` points uniform in the box."""
        self.check_dtype(problem.lower.dtype)
        return Proposal(uniform(problem.lower, problem.upper, (runs, self.pop_size)))

    def tell_init(self, problem: Problem, proposal: Proposal, f: torch.Tensor) -> State:
        """The first state, given the values `f` (runs, n) of `proposal.x`: by default the
        population and its values (override when the state carries more)."""
        return State(x=proposal.x, f=f)

    def ask(self, problem: Problem, state: State) -> Proposal:
        """The points this iteration evaluates (and what `tell` needs with their values)."""
        raise NotImplementedError(f"{self.name} defines no ask(); see docs/adding-an-algorithm.md")

    def tell(self, problem: Problem, state: State, proposal: Proposal, f: torch.Tensor) -> State:
        """The next state, given the values `f` (runs, n) of `proposal.x`."""
        raise NotImplementedError(f"{self.name} defines no tell(); see docs/adding-an-algorithm.md")

    def init(self, problem: Problem, runs: int) -> State:
        """The first state: ask_init, evaluate, tell_init."""
        proposal = self.ask_init(problem, runs)
        return self.tell_init(problem, proposal, problem.evaluate(proposal.x))

    def step(self, problem: Problem, state: State) -> State:
        """One iteration: ask, evaluate, tell."""
        proposal = self.ask(problem, state)
        return self.tell(problem, state, proposal, problem.evaluate(proposal.x))

    def asks_and_tells(self) -> bool:
        """True when the algorithm is written as ask/tell halves (what `AskTell` drives); an
        algorithm may instead override `init` and `step` whole, which `minimize` still runs."""
        cls = type(self.stepping())
        halves = cls.ask is not Algorithm.ask and cls.tell is not Algorithm.tell
        return halves and cls.init is Algorithm.init and cls.step is Algorithm.step  # no whole step overriding them

    # The engine's evaluation budget: how many points init and each step evaluate per run.
    def evals_per_init(self) -> int:
        return self.pop_size

    def evals_per_step(self) -> int:
        """Evaluations of one step (per run); algorithms whose steps evaluate varying numbers of
        points (L-SHADE's shrinking population) override `evals_after` and `steps_within`."""
        return self.pop_size

    def evals_after(self, steps: int) -> int:
        """Evaluations per run after the initial population and `steps` steps."""
        return self.evals_per_init() + steps * self.evals_per_step()

    def steps_within(self, evals: int) -> int:
        """The most steps whose evaluations (`evals_after`) fit in `evals` per run; -1 when not
        even the initial population does."""
        if evals < self.evals_per_init():
            return -1
        return (evals - self.evals_per_init()) // self.evals_per_step()

    def memory_bytes(self, runs: int, dim: int, itemsize: int) -> int:
        """About how many bytes a run set of this algorithm needs at a step's peak."""
        return self.population_copies * runs * self.pop_size * (dim + 2) * itemsize

    def params(self) -> dict:
        return dataclasses.asdict(self)

    def rows_used(self, state: State | None) -> int | None:
        """How many leading rows of the next proposal the step uses (None: all). Ask/tell loops
        ask only these (L-SHADE: the individuals still in its shrinking population); the other
        engines evaluate every row, to keep shapes fixed, and `evals_after` counts only the
        used ones, as the algorithm's paper does. Host code: it may read the state."""
        return None

    def default_pop(self, dim: int) -> int | None:
        """The population for a problem of `dim` dimensions when `pop_size` is left None (L-SHADE:
        18 D); None (the default) where `pop_size` must be given."""
        return None

    def for_run(self, dim: int, evals: int | None) -> Algorithm:
        """This algorithm for a run on `dim` dimensions of `evals` evaluations per run (None: no
        evaluation budget): `pop_size=None` becomes `default_pop(dim)`, and `max_evals=None`
        (declared by algorithms whose schedule spans the evaluation budget, e.g. L-SHADE's
        population reduction) becomes `evals`."""
        changes = {}
        if self.pop_size is None:
            changes["pop_size"] = self.default_pop(dim)
        if getattr(self, "max_evals", 0) is None and evals is not None:
            changes["max_evals"] = evals
        return dataclasses.replace(self, **changes) if changes else self

    def for_objectives(self, objectives: int) -> Algorithm:
        """This algorithm for a problem of `objectives` objectives (MOEA/D: its population is
        the number of its weight vectors); the engine calls it after `for_run`."""
        return self

    def check_problem(self, problem: Problem) -> None:
        """Raise a one-line ValueError, before any work, where this algorithm cannot search
        `problem` (e.g. a box it cannot scale its steps to); every problem passes by default.
        Host code, called once by the engine with the problem's bounds on the host."""

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
        # A budget of no step at all (evals = one population) still needs a valid schedule,
        # and one past 2**63 steps (never reached) is as good as 2**63 - 1.
        return dataclasses.replace(self, max_iters=max(1, min(int(steps), MAX_SIZE)))

    # -- islands: how migrants leave and enter a population (the engine moves them) ------------
    #: The per-individual fitness that ranks individuals for migration.
    migration_key: ClassVar[str] = "f"

    def with_population(self, pop_size: int) -> Algorithm:
        """This algorithm with another population size (an island's share of the population)."""
        return dataclasses.replace(self, pop_size=pop_size)

    def individual_fields(self, state: State) -> list[str]:
        """The state's per-individual tensors, shaped (runs, pop, ...): what a migrant carries."""
        shape = state.f.shape
        return [k for k, v in vars(state).items() if isinstance(v, torch.Tensor) and v.shape[:2] == shape]

    def emigrants(self, state: State, k: int) -> torch.Tensor:
        """Indices (runs, k) of the individuals that leave a copy of themselves: the k best."""
        return getattr(state, self.migration_key).topk(k, dim=-1, largest=False).indices

    def immigrate(self, state: State, rows: dict[str, torch.Tensor]) -> State:
        """Take in migrants: `rows[field]` holds m newcomers per run, (runs, m, ...), for every
        per-individual field; they replace the island's m worst individuals."""
        key = getattr(state, self.migration_key)
        m = min(rows[self.migration_key].shape[1], key.shape[1] // 2)  # never more than half the island
        newcomers = rows[self.migration_key].topk(m, dim=-1, largest=False).indices
        worst = key.topk(m, dim=-1, largest=True).indices
        changes = {}
        for name, new in rows.items():
            old = getattr(state, name)
            pick = lambda i: i.reshape(i.shape + (1,) * (old.ndim - 2)).expand(*i.shape, *old.shape[2:])  # noqa: E731
            changes[name] = old.scatter(1, pick(worst), new.gather(1, pick(newcomers)))
        return state.replace(**changes)

    def stepping(self) -> Algorithm:
        """The algorithm whose `step` this one takes: itself, or a wrapper's inner one (the
        engine's fast paths look its kernels up by it)."""
        return self

    def finish(self, problem: Problem, state: State, best_x: torch.Tensor, best_f: torch.Tensor):
        """After the last step: improved `(best_x, best_f, info)`, or None (the default).

        Wrappers such as `heuriscale.local.Hybrid` refine the best points here.
        """
        return None

    def check_ready(self) -> None:
        if getattr(self, "max_iters", 0) is None:
            raise ValueError(f"{self.name} needs max_iters (the length of its schedule): set max_iters=...")
        if getattr(self, "max_evals", 0) is None:
            raise ValueError(f"{self.name} needs max_evals (the evaluation budget its schedule spans): "
                             "give evals=... or set max_evals=...")

    def check_dtype(self, dtype: torch.dtype) -> None:
        """Raise a clear error for a real hyper-parameter too large for the run's `dtype`.

        Called by `ask_init`, the first place that knows the dtype: a float32 run cannot hold
        eta0=1e300 (it would be inf, and the search garbage) or fill a tensor with it.
        """
        largest = torch.finfo(dtype).max
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if "float" in str(f.type) and is_real(value) and abs(value) > largest:
                raise ValueError(
                    f"{self.name}: {f.name}={value!r} does not fit in {str(dtype).removeprefix('torch.')} "
                    f"(largest {largest:.3g}): use a smaller {f.name} or dtype float64"
                )


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
    """Points uniform in the box, shape `shape + (dim,)`, on the bounds' device and dtype
    (never past `upper`: in float32, `lower + span * r` can round an ulp above it)."""
    r = torch.rand(*shape, lower.shape[-1], device=lower.device, dtype=lower.dtype)
    return torch.minimum(lower + (upper - lower) * r, upper)


def take_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """`x[r, index[r]]` for x of shape (runs, n, dim) and index of shape (runs,)."""
    return x.gather(1, index[:, None, None].expand(-1, 1, x.shape[-1])).squeeze(1)


def check_size(name: str, key: str, value: int) -> int:
    """An integer hyper-parameter as a plain int, below the largest tensor size."""
    if value > MAX_SIZE:
        raise ValueError(f"{name}: {key}={value} is too large: at most 2**63 - 1 (a 64-bit integer)")
    return int(value)


def check_count(name: str, key: str, value, minimum: int = 1, what: str = "") -> int:
    """Raise a clear error unless `value` is an integer >= minimum; return it as an int."""
    if not is_integer(value) or value < minimum:
        raise ValueError(f"{name}: {key}{what} must be an integer >= {minimum}, got {value!r}")
    return check_size(name, key, value)


def _check_reals(name: str, values: dict, ok, rule: str) -> None:
    for key, value in values.items():
        if not (is_real(value) and ok(value)):
            raise ValueError(f"{name}: {key} must be {rule}, got {value!r}")


def check_positive(name: str, **values: float) -> None:
    """Raise a clear error for hyper-parameters that must be finite numbers > 0."""
    _check_reals(name, values, lambda v: v > 0, "> 0 (a finite number)")


def check_nonnegative(name: str, **values: float) -> None:
    """Raise a clear error for hyper-parameters that must be finite numbers >= 0."""
    _check_reals(name, values, lambda v: v >= 0, ">= 0 (a finite number)")


def check_finite(name: str, **values: float) -> None:
    """Raise a clear error for hyper-parameters that must be finite real numbers."""
    _check_reals(name, values, lambda v: True, "a finite number")
