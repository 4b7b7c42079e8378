"""`Runner` (one step at a time) and `minimize` (budgets, stopping, progress) — the front door.

The engine owns everything around an algorithm's pure steps: device placement, the seeded
random stream, the NaN policy, best-so-far per run over every evaluated point, evaluation
counting, history, stop criteria and wall-clock timing with device synchronisation.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import time
from pathlib import Path

import torch

from ..algorithms import Algorithm, State, get_algorithm
from ..algorithms.base import phase, take_rows
from ..problems import Problem, check_fitness, get_problem
from ..problems.base import ProblemWrapper
from ..interrupt import Interrupted, interruptible
from . import auto
from . import checkpoint as checkpoints
from .fused import fused_advance, native_advance, why_not_fused, why_not_native
from .graph import DEFAULT_CHUNK, GraphStepper, clone_carry
from .profile import PhaseTimer
from .device import check_memory, device_name, dtype_name, memory_errors, resolve_device, resolve_dtype, synchronize
from . import distributed
from .islands import Islands
from .result import Result
from .rng import MAX_SEED, RngStream

#: History keeps at most about this many samples per run (it thins itself as it grows).
HISTORY_SIZE = 1000
#: On devices that need a sync to check stop criteria, a chunk of steps lasts about this long.
CHUNK_SECONDS = 0.05
#: Steps per call of a native CPU kernel at most (a call's history rows are kept in one buffer).
NATIVE_STEPS = 1024


class _Guarded(ProblemWrapper):
    """The problem as the algorithm sees it inside the engine.

    It checks the objective's output shape (a static check, free at run time), counts NaN
    values per run in a device tensor and hands them on as +inf, so a NaN never compares
    as better than a number and never becomes a best.
    """

    def __init__(self, inner: Problem, runs: int) -> None:
        super().__init__(inner)
        self.nan_evals = torch.zeros(runs, dtype=torch.int64, device=inner.lower.device)

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        with phase("evaluation"):
            f = check_fitness(self.inner.evaluate(x), x, self.inner.name).to(x.dtype)
        nan = torch.isnan(f)
        self.nan_evals += nan.reshape(nan.shape[0], -1).sum(1)
        return torch.where(nan, torch.inf, f)


def as_problem(problem: Problem | str, dim: int | None = None) -> Problem:
    if isinstance(problem, str):
        return get_problem(problem, dim=dim)
    if not isinstance(problem, Problem):
        raise ValueError(
            f"problem must be a heuriscale Problem or a registered name, got {type(problem).__name__}; "
            "wrap a function with TorchFunction, NumpyFunction or ScalarFunction"
        )
    if dim is not None and dim != problem.dim:
        raise ValueError(f"dim={dim} was given but problem {problem.name!r} has dimension {problem.dim}")
    return problem


def as_algorithm(algorithm: Algorithm | str) -> Algorithm:
    if isinstance(algorithm, str):
        return get_algorithm(algorithm)
    if not isinstance(algorithm, Algorithm):
        raise ValueError(f"algorithm must be a heuriscale Algorithm or a registered name, got {type(algorithm).__name__}")
    return algorithm


ENGINES = ("auto", "eager", "graph", "compiled", "fused", "native")


def _check_engine(engine: str, device: torch.device, problem: Problem, algorithm: Algorithm) -> str:
    """Which stepping engine a runner uses ('auto': the fastest one available)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    if engine == "auto":
        if device.type == "cpu":
            return "native" if why_not_native(algorithm, problem, device) is None else "eager"
        if device.type != "cuda" or problem.host_bound or problem.stochastic:
            return "eager"
        return "fused" if why_not_fused(algorithm, problem, device) is None else "compiled"
    if engine in ("fused", "native"):
        reason = (why_not_fused if engine == "fused" else why_not_native)(algorithm, problem, device)
        if reason is not None:
            raise ValueError(f"engine {engine!r} is not available: {reason}")
        return engine
    if engine != "eager" and device.type != "cuda":
        raise ValueError(f"engine {engine!r} replays CUDA graphs and needs a CUDA device; use engine='eager' on {device}")
    if engine != "eager" and problem.host_bound:
        raise ValueError(f"problem {problem.name!r} is evaluated on the host and cannot be graph-captured; use engine='eager'")
    if engine != "eager" and problem.stochastic:
        raise ValueError(f"problem {problem.name!r} draws its own noise, which a CUDA graph cannot capture; use engine='eager'")
    return engine


def _check_count(name: str, value, minimum: int = 1, required: bool = False) -> int | None:
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def _check_real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


class Runner:
    """Advance `runs` independent runs of `algorithm` on `problem`, one step at a time.

    >>> runner = Runner("sphere", "pso", dim=5, runs=3, seed=0)
    >>> runner.step(50)
    >>> runner.best_f.shape
    torch.Size([3])
    """

    def __init__(
        self,
        problem: Problem | str,
        algorithm: Algorithm | str,
        *,
        dim: int | None = None,
        runs: int = 1,
        device: str | torch.device = "auto",
        dtype: str | torch.dtype = "float32",
        seed: int | None = None,
        target: float | None = None,
        engine: str = "eager",
        chunk: int = DEFAULT_CHUNK,
        islands: bool | None = None,
        migrate_every: int | None = None,
        migrants: int = 1,
    ) -> None:
        self.runs = _check_count("runs", runs, required=True)
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype)
        self.algorithm = as_algorithm(algorithm)
        self.algorithm.check_ready()
        self.problem = as_problem(problem, dim)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        self.seed = secrets.randbits(63) if seed is None else seed
        self.target = None if target is None else _check_real("target", target)
        self.engine = _check_engine(engine, self.device, self.problem, self.algorithm)
        self.chunk = _check_count("chunk", chunk)
        self.islands = self._join_islands(islands, migrate_every, migrants)
        self._stepper: GraphStepper | None = None
        self.setup_time = 0.0  # compile + capture, seconds
        self._rng = RngStream(self.device, self.seed if self.islands is None else self.islands.seed)
        self.what = (f"{self.algorithm.name} with {self.runs:,} run(s) x {self.algorithm.pop_size:,} x "
                     f"{self.problem.dim:,} ({dtype_name(self.dtype)})")
        check_memory(self.algorithm.memory_bytes(self.runs, self.problem.dim, self.dtype.itemsize), self.device,
                     self.dtype, self.what)
        self._guarded = _Guarded(self.problem.to(self.device, self.dtype), self.runs)

        self._extra: dict = {}
        self._extra_evals = 0
        synchronize(self.device)
        self._t0 = time.perf_counter()
        with self._rng, torch.no_grad(), memory_errors(self.device, self.dtype, self.what):
            self.state = self.algorithm.init(self._guarded, self.runs)
        self._check_state(self.state)
        self.iteration = 0
        self._it = torch.zeros((), device=self.device, dtype=torch.int64)
        best_f = torch.full((self.runs,), torch.inf, device=self.device, dtype=self.dtype)
        hit = torch.full((self.runs,), -1, device=self.device, dtype=torch.int64)
        self.best_x, self._hit_iter, self.best_f = self._track(self.state, self.state.x[:, 0], hit, self._it, best_f)
        self._history: list[torch.Tensor] = []
        self._history_iter: list[int] = []
        self._history_stride = 1
        self._record()
        self._fused = None  # the fused (CUDA) or native (CPU) iteration, when the engine is one of them
        if self.engine in ("fused", "native"):
            self._prepare_fused()
        if engine == "auto":
            self._extra["engine_reason"] = "Runner(engine='auto') has no step budget: the fastest path there is"

    def _join_islands(self, islands: bool | None, migrate_every: int | None, migrants: int) -> Islands | None:
        """Under torchrun with several ranks (unless islands=False): this rank's island of the
        run set, whose population becomes the island's share; else None (one device)."""
        if islands is not None and not isinstance(islands, bool):
            raise ValueError(f"islands must be True, False or None (automatic under torchrun), got {islands!r}")
        every = _check_count("migrate_every", migrate_every)
        migrants = _check_count("migrants", migrants, required=True)
        if islands is False or not distributed.launched():
            return None
        if self.device.type == "cuda" and self.device.index != distributed.local_rank():
            raise ValueError(f"under torchrun each rank steps its islands on its own GPU, cuda:LOCAL_RANK; "
                             f"device={str(self.device)!r} names another: use device='cuda' or 'auto'")
        group = distributed.join(self.device)
        self.seed = group.broadcast(self.seed, "agreeing on the seed")  # seed=None draws on each rank
        group.agree("the run set (problem, algorithm, runs, dtype, seed, engine, migration)",
                    json.dumps([self.config(), every, migrants], sort_keys=True, default=str))
        found = Islands(group, self.algorithm, self.seed, every or self.chunk, migrants)
        self.algorithm = found.algorithm
        self.islands = found
        self._align_chunk()
        return found

    def _align_chunk(self) -> None:
        """Graph engines replay whole chunks: make migrations fall on chunk boundaries."""
        islands = getattr(self, "islands", None)
        if islands is not None and self.engine != "eager" and islands.every % self.chunk:
            self.chunk = math.gcd(islands.every, self.chunk)

    def _migrate(self) -> None:
        self.state = self.islands.migrate(self.state)
        if self._fused is not None:  # the kernels write their own buffers in place
            self.state = self._fused.prepare(self.state)

    def stop_reason(self, interrupted: bool = False, time_limit: float | None = None) -> str | None:
        """Why the run set should stop now ("interrupted", "target", "time_limit"), or None;
        with islands, the same answer on every rank (one small all_reduce)."""
        reached = None if self.target is None else self._hit_iter >= 0
        if self.islands is not None:  # host time: reading the device's would stall it every chunk
            elapsed = time.perf_counter() - self._t0
            interrupted, elapsed, all_reached = self.islands.agree_stop(interrupted, elapsed, reached)
        else:
            all_reached = self.target_reached()
            elapsed = self.elapsed() if time_limit is not None and not (interrupted or all_reached) else 0.0
        if interrupted:
            return "interrupted"
        if all_reached:
            return "target"
        if time_limit is not None and elapsed >= time_limit:
            return "time_limit"
        return None

    def _prepare_fused(self) -> None:
        with self._rng:  # the kernels' Philox key: one draw from the run set's stream
            key = int(torch.randint(0, 2**62, (), device=self.device))
        build = fused_advance if self.engine == "fused" else native_advance
        self._fused = build(self.algorithm, self._guarded, self.runs, self.target, key)
        self.state = self._fused.prepare(self.state)
        if self.engine == "native":  # compile, or load from the disk cache: setup, not steps
            self.setup_time += self._fused.warm_up(self.state, self.best_x, self._hit_iter, self._it, self.best_f)

    def use_engine(self, engine: str, reason: str | None = None) -> None:
        """Switch to another engine before the first step: the runs then go exactly as if
        the runner had been made with it."""
        if self.iteration:
            raise ValueError(f"the engine can only change before the first step (this runner is at {self.iteration})")
        self.engine = _check_engine(engine, self.device, self.problem, self.algorithm)
        self._align_chunk()
        if self._fused is not None and self._fused.engine != self.engine:
            self._fused = None
        if self.engine in ("fused", "native") and self._fused is None:
            self._prepare_fused()
        if reason is not None:
            self._extra["engine_reason"] = reason

    def time_eager_step(self) -> tuple[float, float]:
        """(seconds, host seconds) of one eager iteration of this run set, timed on a copy of
        it (the faster of two tries): the runs, their random stream and NaN counts stay as
        they were. Host seconds: launching the step, i.e. what capturing it would cost."""
        carry = clone_carry((self.state, self.best_x, self._hit_iter, self._it, self.best_f))
        nan_evals = self._guarded.nan_evals.clone()
        tries = []
        with self._rng, torch.no_grad():
            rng = self._rng.generator.get_state()
            for _ in range(2):
                synchronize(self.device)
                started = time.perf_counter()
                carry = self._advance(*carry)
                launched = time.perf_counter()
                synchronize(self.device)
                tries.append((time.perf_counter() - started, launched - started))
            self._rng.generator.set_state(rng)
        self._guarded.nan_evals.copy_(nan_evals)
        return min(tries)

    def _check_state(self, state: State) -> None:
        pop = state.x.shape[1] if state.x.ndim == 3 else None
        if state.x.shape != (self.runs, pop, self.problem.dim) or state.f.shape != (self.runs, pop):
            raise ValueError(
                f"{self.algorithm.name}.init returned x {tuple(state.x.shape)} and f {tuple(state.f.shape)}; "
                f"expected (runs={self.runs}, pop, dim={self.problem.dim}) and (runs, pop)"
            )

    # -- stepping -------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance every run by `n` iterations (no host synchronisation).

        On CUDA, the graph engines replay whole chunks from the captured CUDA graph and run
        any remainder shorter than a chunk step by step (fused kernels stay fused). Islands
        exchange migrants every `migrate_every` iterations (chunk boundaries).
        """
        graphs = self.engine != "eager" and self.device.type == "cuda"
        with self._rng, torch.no_grad():
            while n > 0:
                if graphs and n >= self.chunk:
                    self._replay_chunk()
                    n -= self.chunk
                elif self.engine == "native":  # many steps per kernel call
                    n -= self._native_steps(min(n, NATIVE_STEPS))
                else:
                    carry = self._advance_fn(self.state, self.best_x, self._hit_iter, self._it, self.best_f)
                    self.state, self.best_x, self._hit_iter, self._it, self.best_f = carry
                    self.iteration += 1
                    n -= 1
                    if self.iteration % self._history_stride == 0:
                        self._record()
                if self.islands is not None and self.iteration % self.islands.every == 0:
                    self._migrate()

    def _native_steps(self, n: int) -> int:
        record = torch.empty(n, self.runs, dtype=self.dtype)
        self.state = self._fused.advance(self.state, self.best_x, self._hit_iter, self._it, self.best_f, n, record)
        first = self.iteration + 1
        self.iteration += n
        self._record_block(record, first)
        return n

    @property
    def builds_next_step(self) -> bool:
        """True while a graph engine has yet to build its kernels and capture its chunk."""
        return self.engine != "eager" and self.device.type == "cuda" and self._stepper is None

    @property
    def _advance_fn(self):
        """The iteration the engine steps with (looked up each time, not stored: a bound
        method kept on the runner would make a reference cycle, and runners would then
        wait for the cyclic garbage collector to free their GPU memory)."""
        return self._advance if self._fused is None else self._fused

    def _replay_chunk(self) -> None:
        carry = (self.state, self.best_x, self._hit_iter, self._it, self.best_f)
        if self._stepper is None:
            started = time.perf_counter()
            counters = (self._guarded.nan_evals,) + (() if self._fused is None else self._fused.counters)
            self._stepper = GraphStepper(self._advance_fn, carry, self.chunk, compile_step=self.engine == "compiled",
                                         counters=counters)
            self.setup_time += time.perf_counter() - started
        self._stepper.load(carry)
        self.state, self.best_x, self._hit_iter, self._it, self.best_f = self._stepper.replay()
        first = self.iteration + 1
        self.iteration += self.chunk
        self._record_block(self._stepper.history, first)

    def _advance(self, state, best_x, hit, it, best_f, record=None):
        """One iteration as a pure function: the algorithm's step, then best-so-far tracking
        (copied into `record` when given: a graph's per-step history row)."""
        state = self.algorithm.step(self._guarded, state)
        it = it + 1
        best_x, hit, best_f = self._track(state, best_x, hit, it, best_f)
        if record is not None:
            record.copy_(best_f)
        return state, best_x, hit, it, best_f

    def _track(self, state: State, best_x, hit, it, best_f):
        fmin, idx = state.f.min(-1)
        better = fmin < best_f
        best_f = torch.where(better, fmin, best_f)
        best_x = torch.where(better[:, None], take_rows(state.x, idx), best_x)
        if self.target is not None:
            hit = torch.where((best_f <= self.target) & (hit < 0), it, hit)
        return best_x, hit, best_f

    def _record(self) -> None:
        """Keep the current best-so-far in the history (a copy: graph buffers are reused)."""
        if self._history_iter and self._history_iter[-1] == self.iteration:
            return
        self._history.append(self.best_f.clone()[None])
        self._history_iter.append(self.iteration)
        self._thin()

    def _record_block(self, values: torch.Tensor, first: int) -> None:
        """Keep the rows of a chunk's per-step best values (iterations first, first+1, ...)
        that fall on the history stride, with one copy."""
        stride = self._history_stride
        start = (-first) % stride
        if start < values.shape[0]:
            self._history.append(values[start::stride].clone())
            self._history_iter.extend(range(first + start, first + values.shape[0], stride))
            self._thin()

    def _thin(self) -> None:
        if len(self._history_iter) > 2 * HISTORY_SIZE:  # keep every other sample
            rows = torch.cat(self._history)
            keep = [i for i, it in enumerate(self._history_iter) if it % (2 * self._history_stride) == 0]
            self._history = [rows[keep]]
            self._history_iter = [self._history_iter[i] for i in keep]
            self._history_stride *= 2

    def finish(self) -> None:
        """Let the algorithm improve on the best points once the steps are done (e.g. refine)."""
        with self._rng:
            out = self.algorithm.finish(self._guarded, self.state, self.best_x, self.best_f)
        if out is not None:
            self.best_x, self.best_f, info = out
            self._extra_evals += info.get("refine_evals", 0)
            self._extra.update(info)

    # -- checkpoints ----------------------------------------------------------------------
    def config(self) -> dict:
        """What a checkpoint must agree on to continue this run set."""
        return {"problem": self.problem.describe(), "algorithm": {"name": self.algorithm.name, **self.algorithm.params()},
                "runs": self.runs, "dtype": dtype_name(self.dtype), "seed": self.seed, "target": self.target,
                "chunk": self.chunk, "engine": self.engine, "device_type": self.device.type}

    def state_dict(self) -> dict:
        """Everything needed to continue these runs (tensors on the CPU); see `load_state_dict`."""
        cpu = lambda t: t.detach().cpu().clone()  # noqa: E731
        fused = self._fused
        return {
            "heuriscale_checkpoint": checkpoints.FORMAT, "version": checkpoints.version(), "config": self.config(),
            "device": str(self.device), "iteration": self.iteration, "elapsed": self.elapsed(),
            "setup_time": self.setup_time, "extra_evals": self._extra_evals,
            "extra": json.dumps(self._extra, default=str),
            "state": {k: cpu(v) for k, v in vars(self.state).items()},
            "best_x": cpu(self.best_x), "best_f": cpu(self.best_f), "hit_iter": cpu(self._hit_iter), "it": cpu(self._it),
            "nan_evals": cpu(self._guarded.nan_evals),
            "history": cpu(torch.cat(self._history)), "history_iter": list(self._history_iter),
            "history_stride": self._history_stride,
            "rng": self._rng.get_state(),
            "fused": None if fused is None else {"seed": fused.seed, "counters": [cpu(c) for c in fused.counters]},
        }

    def load_state_dict(self, saved: dict, source: str = "checkpoint") -> None:
        """Continue the runs of `saved` (a `state_dict`, e.g. from `checkpoint.load`) on this
        runner, made with the same configuration and not yet stepped. On the same device type
        and engine the runs go on bit for bit; on another device type, with a warning, they
        go on with a fresh random stream."""
        if self.iteration:
            raise ValueError(f"load a checkpoint into a new runner (this one is at iteration {self.iteration})")
        same_device = checkpoints.check_compatible(saved["config"], self.config(), source)
        on_device = lambda t: t.to(self.device)  # noqa: E731
        state = type(self.state)(**{k: on_device(v) for k, v in saved["state"].items()})
        self.state = state if self._fused is None else self._fused.prepare(state)
        self.best_x, self.best_f = on_device(saved["best_x"]), on_device(saved["best_f"])
        self._hit_iter, self._it = on_device(saved["hit_iter"]), on_device(saved["it"])
        self._guarded.nan_evals.copy_(saved["nan_evals"])
        self.iteration = saved["iteration"]
        self._history, self._history_iter = [on_device(saved["history"])], list(saved["history_iter"])
        self._history_stride = saved["history_stride"]
        self._extra_evals = saved["extra_evals"]
        self._extra.update(json.loads(saved["extra"]))
        self.setup_time = saved["setup_time"]
        self._stepper = None
        if same_device:
            self._rng.set_state(saved["rng"])
            if self._fused is not None:
                self._fused.seed = saved["fused"]["seed"]
                for counter, value in zip(self._fused.counters, saved["fused"]["counters"]):
                    counter.copy_(value)
        else:  # a stream of its own from here, still fixed by the seed and the iteration
            self._rng = RngStream(self.device, (self.seed + self.iteration) % MAX_SEED)
        self._t0 = time.perf_counter() - saved["elapsed"]

    # -- queries --------------------------------------------------------------------------
    @property
    def evals(self) -> int:
        """Evaluations per run so far."""
        algo = self.algorithm
        return algo.evals_per_init() + self.iteration * algo.evals_per_step() + self._extra_evals

    def target_reached(self) -> bool:
        """True when every run has reached the target (synchronises with the device)."""
        return self.target is not None and bool((self._hit_iter >= 0).all())

    def elapsed(self) -> float:
        synchronize(self.device)
        return time.perf_counter() - self._t0

    def result(self, stop_reason: str = "stopped") -> Result:
        """Collect the runs so far into a `Result` (one device synchronisation)."""
        self._record()
        wall = self.elapsed()
        best_x, best_f, hit, history = self.best_x, self.best_f, self._hit_iter, torch.cat(self._history)
        nan_evals = self._guarded.nan_evals
        evals = torch.tensor([self.evals, self.algorithm.evals_per_init(), self.algorithm.evals_per_step()],
                             device=self.islands.group.device if self.islands else "cpu")
        islands, whole = {}, self.algorithm
        if self.islands is not None:  # the run set's global answer, the same on every rank
            whole = self.islands.whole
            self.islands.settle()
            best_x, best_f = self.islands.agree_best(best_x, best_f)
            hit, history = self.islands.agree_first_hit(hit), self.islands.agree_min(history)
            nan_evals, evals = self.islands.agree_sum(nan_evals), self.islands.agree_sum(evals)
            wall = self.islands.agree_max(wall)
            islands = {"islands": self.islands.describe()}
        total, per_init, per_step = (int(v) for v in evals.cpu())
        evals_to_target = None
        if self.target is not None:
            hit = hit.cpu()
            evals_to_target = torch.where(hit >= 0, per_init + hit * per_step, -1)
        return Result(
            best_f=best_f.detach().cpu().double(),
            best_x=best_x.detach().cpu().double(),
            evals=total,
            nan_evals=nan_evals.cpu(),
            iterations=self.iteration,
            history_iter=torch.tensor(self._history_iter),
            history_f=history.T.detach().cpu().double(),
            wall_time=wall,
            device=str(self.device),
            device_name=device_name(self.device),
            dtype=dtype_name(self.dtype),
            seed=self.seed,
            problem=self.problem.describe(),
            algorithm={"name": whole.name, **whole.params()},
            stop_reason=stop_reason,
            evals_to_target=evals_to_target,
            extra={
                "torch": torch.__version__, "target": self.target, "engine": self._engine_used(),
                "setup_time": self.setup_time, **self._threads(), **self._extra, **islands, **self._solution_report(best_x, best_f),
            },
        )

    def _threads(self) -> dict:
        """How many CPU threads the native kernels used (what a CPU timing depends on)."""
        if self.engine != "native":
            return {}
        from .fused.native import threads

        return {"cpu_threads": threads()}

    def _engine_used(self) -> str:
        if self.engine == "native":
            return "native"
        if self._fused is not None:
            return "fused" if self._stepper is None else "fused+graph"
        if self._stepper is None:
            return "eager"
        return "compiled+graph" if self._stepper.compiled else "graph"

    def _solution_report(self, best_x: torch.Tensor, best_f: torch.Tensor) -> dict:
        """Feasibility of each run's best point (constrained problems) and a readable best solution."""
        problem = self.problem.to("cpu", torch.float64)
        x = best_x.detach().cpu().double()
        report = {"solution": problem.decode(x[int(torch.argmin(best_f))])}
        if problem.n_constraints:
            g = problem.constraints(x)
            report["max_violation"] = g.clamp(min=0).amax(-1).tolist()
            report["feasible"] = (g <= 0).all(-1).tolist()
            if hasattr(problem, "objective"):
                report["objective"] = problem.objective(x).tolist()
        return report


def minimize(
    problem: Problem | str,
    algorithm: Algorithm | str,
    *,
    dim: int | None = None,
    iters: int | None = None,
    evals: int | None = None,
    time_limit: float | None = None,
    target: float | None = None,
    runs: int = 1,
    device: str | torch.device = "auto",
    dtype: str | torch.dtype = "float32",
    seed: int | None = None,
    progress: bool = False,
    profile: bool = False,
    engine: str = "auto",
    chunk: int = DEFAULT_CHUNK,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: float = 60.0,
    resume: str | os.PathLike | None = None,
    handle_signals: bool = True,
    islands: bool | None = None,
    migrate_every: int | None = None,
    migrants: int = 1,
) -> Result:
    """Minimise `problem` with `algorithm` in `runs` independent runs advancing together.

    Stops at the first budget reached: `iters` iterations, `evals` evaluations per run,
    `time_limit` seconds, or `target` reached by every run (a target needs another budget).
    With `profile=True`, `result.extra["phases"]` holds the seconds spent in each marked
    phase of the steps (`evaluation` and the algorithm's own, e.g. FEP's `mutation`).

    `engine`: "eager" runs each step as it is written (the reference); "graph" replays
    chunks of `chunk` steps from a captured CUDA graph; "compiled" also compiles the step
    with torch.compile first; "fused" replays hand-fused Triton kernels instead (PSO, PRS,
    FEP and synchronous Firefly, see `engine/fused`); "auto" (default) weighs the fast path on
    CUDA ("fused" where it exists, else "compiled") against "eager" from one timed eager step
    of this run set and the fast path's setup, and says why in `result.extra["engine_reason"]`
    (see `engine/auto.py`).
    Stop criteria are checked between chunks.

    Under torchrun with several ranks (`islands=None`, the default, or True), each run's
    population of `pop_size` is split over the ranks as islands that exchange their
    `migrants` best individuals every `migrate_every` iterations (default: one chunk), and
    every rank returns the same global result (see `engine/islands.py`); `islands=False`
    keeps the runs on this rank alone. Outside torchrun there is one island: today's path.

    Long runs: `checkpoint=PATH` saves the run set there (atomically) every
    `checkpoint_every` seconds between chunks and when it stops; `resume=PATH` continues a
    saved run set (same configuration; the seed and engine default to the saved ones), bit
    for bit on the same device and engine. With `handle_signals` (default; main thread
    only), SIGINT and SIGTERM end the current chunk, save the checkpoint and raise
    `heuriscale.interrupt.Interrupted` (a KeyboardInterrupt) whose `.result` holds the runs
    so far; a second signal ends the process at once.

    >>> r = minimize("sphere", "pso", dim=10, iters=300, runs=5, seed=1, device="cpu")
    >>> bool((r.best_f < 1e-6).all())
    True
    """
    iters = _check_count("iters", iters)
    evals = _check_count("evals", evals)
    if time_limit is not None and not 0 < _check_real("time_limit", time_limit) < math.inf:
        raise ValueError(f"time_limit must be > 0 seconds (and finite), got {time_limit!r}")
    if iters is None and evals is None and time_limit is None:
        raise ValueError("give a budget: iters=..., evals=... or time_limit=... (a target alone may never be reached)")

    algo = as_algorithm(algorithm)
    max_steps = math.inf if iters is None else iters
    if evals is not None:
        if evals < algo.evals_per_init():
            raise ValueError(
                f"evals={evals} is less than one initial population ({algo.evals_per_init()} evaluations "
                f"for pop_size={algo.pop_size}): raise evals or lower pop_size"
            )
        max_steps = min(max_steps, (evals - algo.evals_per_init()) // algo.evals_per_step())
    algo = algo.with_horizon(max_steps)
    saved = None
    if resume is not None:
        saved = checkpoints.load(resume)
        seed = saved["config"]["seed"] if seed is None else seed
        if engine == "auto" and saved["config"]["device_type"] == resolve_device(device).type:
            engine = saved["config"]["engine"]  # the engine that wrote it continues it
    elif checkpoint is not None and Path(checkpoint).exists():
        raise ValueError(f"checkpoint {checkpoint} exists already: continue that run with resume={str(checkpoint)!r} "
                         "(--resume), or remove the file to start anew")
    if not _check_real("checkpoint_every", checkpoint_every) > 0:
        raise ValueError(f"checkpoint_every must be > 0 seconds, got {checkpoint_every!r}")
    runner = Runner(problem, algo, dim=dim, runs=runs, device=device, dtype=dtype, seed=seed, target=target,
                    engine="eager" if engine == "auto" else engine, chunk=chunk, islands=islands,
                    migrate_every=migrate_every, migrants=migrants)
    if runner.islands is not None and (checkpoint is not None or resume is not None):
        raise ValueError("checkpoints of a run set split into islands over several ranks are not supported yet: "
                         "drop checkpoint/resume (--checkpoint/--resume), or run with islands=False")
    if engine == "auto":
        with memory_errors(runner.device, runner.dtype, runner.what):  # the timed step runs on a copy
            choice = auto.choose(runner, max_steps, profile, time_limit)
        if runner.islands is not None:  # every island steps with rank 0's choice
            choice = runner.islands.group.broadcast(choice, "agreeing on the engine")
        runner.use_engine(choice.engine, f"auto chose {choice.engine}: {choice.reason}")
    if profile and runner.engine != "eager":
        raise ValueError("profile=True times each phase with synchronisations: use engine='eager' (or 'auto')")
    if saved is not None:
        runner.load_state_dict(saved, str(resume))
    saver = _Checkpointer(runner, checkpoint, checkpoint_every) if checkpoint is not None else None

    bar = _ProgressBar(runner, max_steps, time_limit) if progress else None
    timer = PhaseTimer(runner.device)
    signals = interruptible(poll=True) if handle_signals else contextlib.nullcontext(None)
    try:
        with timer.active() if profile else contextlib.nullcontext(), signals as stop, \
                memory_errors(runner.device, runner.dtype, runner.what):
            # Stop checks, signals, checkpoints and progress need the device's answer between
            # chunks; without them, steps queue freely.
            needs_sync = target is not None or time_limit is not None or progress or saver is not None \
                or bool(stop is not None and stop.active) or runner.islands is not None
            reason = _run_chunks(runner, max_steps, time_limit, needs_sync, bar, stop, saver)
            if reason == "budget":
                reason = "iters" if iters is not None and max_steps == iters else "evals"
    finally:
        if bar is not None:
            bar.close()
    if saver is not None:
        saver.save()
    if reason != "interrupted":  # an interrupted run ends at once: no refinement
        runner.finish()
    result = runner.result(reason)
    result.extra["max_steps"] = None if math.isinf(max_steps) else int(max_steps)
    if reason == "interrupted":
        raise Interrupted(stop.signum, result, None if saver is None else saver.path)
    if profile:
        result.extra["phases"] = dict(timer.seconds)
    return result


def _run_chunks(runner: Runner, max_steps: float, time_limit: float | None, needs_sync: bool, bar,
                stop=None, saver=None) -> str:
    """Step in chunks until a budget is spent, checking stop criteria (and `stop`, a signal
    flag) between chunks, saving checkpoints as due; returns why it stopped: "interrupted",
    "target", "time_limit" or "budget" (the step budget)."""
    graphs = runner.engine != "eager" and runner.device.type == "cuda"
    unit = runner.chunk if graphs else 1  # graph engines step whole chunks
    chunk = unit if needs_sync else max_steps
    while True:
        if saver is not None and not stop:
            saver.due()
        reason = runner.stop_reason(bool(stop), time_limit)
        if reason is not None:
            return reason
        left = max_steps - runner.iteration
        if left <= 0:
            return "budget"
        if runner.islands is not None:  # every rank the same steps between collectives: to the next migration
            chunk = runner.islands.every - runner.iteration % runner.islands.every
        n = int(min(chunk, left))
        if bar is not None and runner.builds_next_step:
            bar.status("building kernels (takes seconds on the first run on this machine; cached afterwards)")
        started = time.perf_counter()
        runner.step(n)
        if needs_sync and unit == 1 and runner.islands is None:  # eager: grow the chunk to about CHUNK_SECONDS
            synchronize(runner.device)
            chunk = _next_chunk(n, time.perf_counter() - started)
        if bar is not None:
            bar.update(runner)


class _Checkpointer:
    """Saves a runner's state_dict to `path` at most every `every` seconds."""

    def __init__(self, runner: Runner, path, every: float) -> None:
        self.runner, self.path, self.every = runner, Path(path), every
        self.last = time.perf_counter()

    def due(self) -> None:
        if time.perf_counter() - self.last >= self.every:
            self.save()

    def save(self) -> None:
        checkpoints.save(self.runner.state_dict(), self.path)
        self.last = time.perf_counter()


def _next_chunk(n: int, seconds: float) -> int:
    """Steps per chunk so that a chunk lasts about CHUNK_SECONDS (grow at most 2x)."""
    if seconds <= 0:
        return 2 * n
    return max(1, min(2 * n, int(n * CHUNK_SECONDS / seconds)))


class _ProgressBar:
    def __init__(self, runner: Runner, max_steps: float, time_limit: float | None) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.by_time = math.isinf(max_steps)
        self.total = time_limit if self.by_time else max_steps
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), transient=False,
        )
        label = f"{runner.algorithm.name} on {runner.problem.name}"
        self.task = self.progress.add_task(label, total=self.total, status="")
        self.last = 0.0
        self.progress.start()

    def update(self, runner: Runner) -> None:
        now = time.perf_counter()
        if now - self.last < 0.1:  # redraw at most 10 times a second
            return
        self.last = now
        done = runner.elapsed() if self.by_time else runner.iteration
        best = float(runner.best_f.min())
        self.progress.update(self.task, completed=min(done, self.total), status=f"it {runner.iteration}  best {best:.4g}")

    def status(self, text: str) -> None:
        """Show `text` now (the bar redraws itself while the caller blocks, e.g. compiling)."""
        self.progress.update(self.task, status=text)
        self.progress.refresh()

    def close(self) -> None:
        self.progress.stop()
