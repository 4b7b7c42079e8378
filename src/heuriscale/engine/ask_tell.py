"""`AskTell`: the engine turned inside out, for objectives that live outside the process.

The caller evaluates the points `ask()` returns, wherever it likes (a simulation, a lab, a
program in another language, a pool of workers), and hands their values to `tell()`:

    opt = hs.AskTell("pso", dim=2, lower=-5, upper=5, evals=5_000, seed=0)
    while not opt.done:
        x = opt.ask()                       # (n, D) for one run, (runs, n, D) for several
        opt.tell(my_objective(x))           # a tensor, a NumPy array or a list: (n,) / (runs, n)
    print(opt.best_f, opt.best_x, opt.result())

Several objectives (`objectives=M` with a box, or a problem that declares them; `nsga2` or
`moead`): `tell()` takes (n, M) / (runs, n, M) values, and `result()` holds the fronts.

It drives the algorithm's own halves (`ask_init`/`tell_init`, `ask`/`tell`) on a `Runner`
that never evaluates anything itself, inside the run set's random stream: with the same
seed, an ask/tell loop over a problem computes exactly the numbers of
`minimize(problem, algorithm, evals=opt.evals, seed=seed, engine="eager")`. Values are
checked as an objective's would be (shape, real numbers); NaN values are counted and never
become a best. `save(path)` writes the run set and any points asked and not yet told,
atomically; `AskTell.load(path)` continues it (and `ask()` then returns those same points).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from ..algorithms import Algorithm, get_algorithm
from ..algorithms.base import Proposal
from ..problems import Problem, rebuild
from ..problems.base import BoundLike
from . import checkpoint as checkpoints
from .arguments import as_algorithm, as_problem, check_count, for_problem, steps_allowed
from .progress import EvaluationsBar
from .result import Result
from .runner import Runner


class AskedProblem(Problem):
    """The box of an ask/tell run without a problem: its points are evaluated by the caller."""

    name = "asked"
    host_bound = True

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("this problem is evaluated by the caller of AskTell: evaluate the points ask() returns "
                         "and pass their values to tell()")


class AskTell:
    """Ask for points, evaluate them yourself, tell their values.

    The same numbers as `minimize` for the same seed; `save(path)` and `AskTell.load(path)`
    checkpoint the loop between any two calls.

    Args:
        algorithm: a name (with `**algorithm_options`) or an `Algorithm`.
        problem: a `Problem` or a registered name, or None with `dim`, `lower` and `upper`
            (the box; the caller evaluates).
        dim: the dimension of the box, or of a problem given by name.
        lower: the box's lower bound, a number or one per coordinate.
        upper: the box's upper bound, a number or one per coordinate.
        runs: independent runs advancing together; `ask()` then gives (runs, n, D).
        seed: as for `minimize`.
        device: as for `minimize`.
        dtype: as for `minimize`.
        evals: the budget in evaluations per run: `ask()` refuses past it, and algorithms
            that schedule their steps over the run's length (PRS, APO, L-SHADE) take it as
            theirs.
        iters: the budget in iterations, instead of `evals`.
        progress: show a bar with evaluations per second.
        objectives: with a box (no problem), how many values each point has (M); `tell()`
            then takes (n, M) / (runs, n, M). A problem brings its own.
        **algorithm_options: the algorithm's parameters, e.g. `pop_size=50, preset="paper001"`.

    Examples:
        >>> opt = AskTell("pso", dim=2, lower=-5, upper=5, evals=200, seed=0, device="cpu", pop_size=10)
        >>> while not opt.done:
        ...     x = opt.ask()
        ...     opt.tell((x ** 2).sum(-1))
        >>> opt.result().evals
        200
    """

    def __init__(self, algorithm: Algorithm | str, problem: Problem | str | None = None, *, dim: int | None = None,
                 lower: BoundLike | None = None, upper: BoundLike | None = None, runs: int = 1, seed: int | None = None, device: str | torch.device = "auto",
                 dtype: str | torch.dtype = "float32", evals: int | None = None, iters: int | None = None,
                 progress: bool = False, objectives: int | None = None, **algorithm_options: object) -> None:
        problem = _the_problem(problem, dim, lower, upper, objectives)
        algo = _the_algorithm(algorithm, algorithm_options)
        algo = for_problem(algo.for_run(problem.dim, check_count("evals", evals)), problem)
        self.max_steps = steps_allowed(algo, check_count("iters", iters), evals)
        self.budget = {"evals": evals, "iters": iters}
        algo = algo.with_horizon(self.max_steps)
        self._runner = Runner(problem, algo, runs=runs, device=device, dtype=dtype, seed=seed, engine="eager",
                              islands=False, start=False)
        self._pending: Proposal | None = None
        self._rows: int | None = None  # of the pending proposal, the rows its step uses
        self._bar = EvaluationsBar(self) if progress else None

    # -- the loop ---------------------------------------------------------------------------
    def ask(self) -> torch.Tensor:
        """The points to evaluate next, on the run's device: (n, D) for one run, (runs, n, D)
        for several. Asking again before telling returns the same points."""
        runner = self._runner
        if self._pending is None:
            if self.done:
                raise ValueError(f"the budget is spent ({self._spent()}): read result(), or make a new AskTell "
                                 "with a larger budget")
            with runner._rng, torch.no_grad():
                if runner.state is None:
                    proposal = runner.algorithm.ask_init(runner._guarded, runner.runs)
                else:
                    proposal = runner.algorithm.ask(runner._guarded, runner.state)
            self._pending = proposal
            # the rows the step uses (L-SHADE's shrinking population), read once per ask: on CUDA
            # a read of the state is a host synchronisation
            self._rows = None if runner.state is None else runner.algorithm.rows_used(runner.state)
        return self._of_runs(self._asked().clone())  # the caller's copy: what it does to it changes no run

    def tell(self, values) -> None:
        """The values of the points of the last `ask()`, in their order: a tensor, a NumPy array
        or a list of shape (n,) for one run or (runs, n) (with M objectives: (n, M) or
        (runs, n, M)). NaN is counted and never a best (nor in a front)."""
        runner = self._runner
        if self._pending is None:
            if self.done:
                raise ValueError(f"tell() after the budget ({self._spent()}): nothing was asked; read result()")
            raise ValueError("tell() without ask(): call ask() for the points to evaluate, then tell() their values")
        asked = self._asked()
        f = runner._guarded.take(self._values(values), asked, "tell()")  # checked before it counts
        if asked.shape[1] < self._pending.x.shape[1]:  # rows the step does not use: never asked, never best
            f = torch.cat([f, f.new_full((f.shape[0], self._pending.x.shape[1] - asked.shape[1], *f.shape[2:]),
                                         torch.inf)], 1)
        proposal, self._pending = self._pending, None
        with runner._rng, torch.no_grad():
            if runner.state is None:
                runner.start(runner.algorithm.tell_init(runner._guarded, proposal, f))
            else:
                runner.accept(runner.algorithm.tell(runner._guarded, runner.state, proposal, f))
        if self._bar is not None:
            self._bar.update()

    def _asked(self) -> torch.Tensor:
        """The pending proposal's points the algorithm uses (all, or its leading rows)."""
        return self._pending.x if self._rows is None else self._pending.x[:, :self._rows]

    def _values(self, values) -> torch.Tensor:
        """`values` as a (runs, n) tensor on the run's device, or a one-line error."""
        runner, x = self._runner, self._asked()
        per_point = (runner.objectives,) if runner.objectives > 1 else ()
        want = (tuple(x.shape[:-1]) if runner.runs > 1 else (x.shape[1],)) + per_point
        try:
            f = torch.as_tensor(np.asarray(values) if not isinstance(values, torch.Tensor) else values)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"tell() takes numbers (a tensor, NumPy array or list) of shape {want}, "
                             f"got a {type(values).__name__} that is not one") from None
        if tuple(f.shape) != want:
            each = "one value" if not per_point else f"{runner.objectives} values (one per objective)"
            raise ValueError(f"tell() expects {each} per point of the last ask(), shape {want}, "
                             f"got shape {tuple(f.shape)}")
        return f.reshape(*x.shape[:-1], *per_point).to(x.device)

    # -- where it stands ------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        """True once the initial population's values were told."""
        return self._runner.state is not None

    @property
    def done(self) -> bool:
        """True when the budget is spent (never without one)."""
        return self.started and self._runner.iteration >= self.max_steps

    @property
    def evals(self) -> int:
        """Evaluations per run told so far."""
        return self._runner.evals if self.started else 0

    @property
    def iteration(self) -> int:
        return self._runner.iteration

    @property
    def runs(self) -> int:
        return self._runner.runs

    @property
    def algorithm(self) -> Algorithm:
        return self._runner.algorithm

    @property
    def problem(self) -> Problem:
        return self._runner.problem

    @property
    def best_f(self) -> torch.Tensor:
        """The best value told so far: a 0-d tensor for one run, (runs,) for several."""
        return self._of_runs(self._single_best().best_f)

    @property
    def best_x(self) -> torch.Tensor:
        """Where it was: (D,) for one run, (runs, D) for several."""
        return self._of_runs(self._single_best().best_x)

    def _single_best(self) -> Runner:
        runner = self._started_runner()
        if runner.objectives > 1:
            raise ValueError(f"best_f and best_x need one objective; these values have {runner.objectives} and no "
                             "single best value: read result().front_x / front_f")
        return runner

    def result(self) -> Result:
        """The runs so far as a `Result`, as `minimize` returns them."""
        reason = next((k for k, v in self.budget.items() if v is not None), "stopped") if self.done else "stopped"
        result = self._started_runner().result(reason)
        result.extra.update(ask_tell=True, max_steps=None if self.max_steps == float("inf") else int(self.max_steps))
        return result

    def close(self) -> None:
        """Close the progress bar (if any)."""
        if self._bar is not None:
            self._bar.close()

    def _of_runs(self, t: torch.Tensor) -> torch.Tensor:
        """`t` (runs, ...) as the caller sees it: without the runs axis for one run."""
        return t[0] if self.runs == 1 else t

    def _started_runner(self) -> Runner:
        if not self.started:
            raise ValueError("nothing told yet: ask() for the initial population and tell() its values first")
        return self._runner

    def _spent(self) -> str:
        return ", ".join(f"{k}={v:,}" for k, v in self.budget.items() if v is not None) + f" per run, {self.evals:,} told"

    # -- checkpoints ------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The run set, its budget and the points asked but not yet told (tensors on the CPU)."""
        runner = self._runner
        if self.started:
            saved = runner.state_dict()
        else:
            saved = {**checkpoints.header(runner.config()), "rng": runner._rng.get_state()}
        pending = None if self._pending is None else {k: v.detach().cpu() for k, v in vars(self._pending).items()}
        saved["ask_tell"] = {"budget": dict(self.budget), "started": self.started, "pending": pending}
        return saved

    def load_state_dict(self, saved: dict, source: str = "checkpoint") -> None:
        """Continue the run set of `saved` (`state_dict`, or `checkpoint.load`) on this AskTell,
        made with the same configuration and not yet told anything."""
        if self.started or self._pending is not None:
            raise ValueError("load a checkpoint into a new AskTell (this one has asked already)")
        mine = _ask_tell_part(saved, source)
        if mine["budget"] != self.budget:
            raise ValueError(f"checkpoint {source} is for another budget: {mine['budget']}, now {self.budget}; "
                             "make the AskTell with the same evals/iters (or use AskTell.load)")
        runner = self._runner
        if mine["started"]:
            runner.load_state_dict(saved, source)
        else:
            checkpoints.check_compatible(saved["config"], runner.config(), source)
            runner._rng.set_state(saved["rng"])
        if mine["pending"] is not None:
            self._pending = Proposal(**{k: v.to(runner.device) for k, v in mine["pending"].items()})
            self._rows = None if runner.state is None else runner.algorithm.rows_used(runner.state)

    def save(self, path: str | os.PathLike) -> Path:
        """Write `state_dict()` to `path` atomically (a crash leaves the old file or the new one)."""
        return checkpoints.save(self.state_dict(), path)

    @classmethod
    def load(cls, path: str | os.PathLike, problem: Problem | str | None = None, *, device=None,
             progress: bool = False) -> AskTell:
        """The AskTell saved at `path`, continued: its algorithm from the registry, its problem
        rebuilt (a box without a problem, or a registered name), or `problem` as you give it."""
        saved = checkpoints.load(path)
        budget = _ask_tell_part(saved, path)["budget"]
        config = saved["config"]
        described = config["problem"]
        if problem is None:
            lower, upper = described["bounds"]
            problem = (AskedProblem(described["dim"], lower, upper) if described["name"] == AskedProblem.name
                       else rebuild(described))
        params = dict(config["algorithm"])
        algorithm = get_algorithm(params.pop("name"), **params)
        opt = cls(algorithm, problem, runs=config["runs"], seed=config["seed"], dtype=config["dtype"],
                  device=device or config["device_type"], progress=progress, **budget)
        opt.load_state_dict(saved, str(path))
        return opt


def _the_problem(problem, dim, lower, upper, objectives=None) -> Problem:
    if problem is None:
        if dim is None or lower is None or upper is None:
            raise ValueError("give a problem, or the box of the points to ask for: dim=, lower= and upper=")
        asked = AskedProblem(dim, lower, upper)
        if objectives is not None:
            asked.objectives = check_count("objectives", objectives)
        return asked
    if objectives is not None and objectives != getattr(as_problem(problem, dim), "objectives", 1):
        raise ValueError(f"objectives={objectives} was given but the problem has {as_problem(problem, dim).objectives}: "
                         "a problem brings its own number of objectives")
    if lower is not None or upper is not None:
        raise ValueError("lower= and upper= describe the box when there is no problem: a problem brings its own "
                         "(get_problem(name, bounds=...) changes it)")
    return as_problem(problem, dim)


def _the_algorithm(algorithm, options: dict) -> Algorithm:
    if isinstance(algorithm, str):
        algo = get_algorithm(algorithm, **options)
    else:
        if options:
            raise ValueError(f"options {sorted(options)} are for an algorithm given by name; set them on the "
                             f"{type(algorithm).__name__} you pass instead")
        algo = as_algorithm(algorithm)
    if type(algo).finish is not Algorithm.finish:
        raise ValueError(f"{algo.name} evaluates points itself after the steps (refinement), which ask/tell "
                         "cannot: drive its global algorithm with AskTell, then refine with heuriscale.local")
    if not algo.asks_and_tells():
        raise ValueError(f"{algo.name} is written as a whole step (init/step), not as ask/tell halves: "
                         "minimize() runs it; docs/adding-an-algorithm.md shows the halves AskTell needs")
    return algo


def _ask_tell_part(saved: dict, source) -> dict:
    """What an AskTell adds to a checkpoint, or a clear error for one `minimize` wrote."""
    if "ask_tell" not in saved:
        raise ValueError(f"{source} holds a minimize() run, not an AskTell one: continue it with resume=")
    return saved["ask_tell"]
