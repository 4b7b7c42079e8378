"""`Runner`: a run set advanced one step (or many) at a time.

The engine owns everything around an algorithm's pure steps: device placement, the seeded
random stream, the NaN policy (`guard.py`), best-so-far per run over every evaluated point,
evaluation counting, history (`history.py`), and wall-clock timing with device
synchronisation. A runner steps with one engine: the eager step as written, a CUDA graph
replay of it (`graph.py`, compiled or not), or the algorithm's kernels (`kernels/`).
Budgets, stopping, progress and periodic checkpoints are `minimize`'s (`minimizer.py`).
"""

from __future__ import annotations

import importlib.util
import math
import secrets
import time

import torch

from .. import triton_ahead
from ..algorithms import Algorithm, State
from ..algorithms.base import take_rows
from ..algorithms.pareto import non_dominated
from ..interrupt import deferred
from ..problems import Problem
from . import checkpoint as checkpoints
from . import distributed
from .arguments import as_algorithm, as_problem, check_count, check_real, for_problem
from .auto import check_engine
from .device import check_memory, device_name, dtype_name, memory_errors, resolve_device, resolve_dtype, synchronize
from .fronts import FrontSamples, final_fronts, reference_point, valid_points
from .graph import DEFAULT_CHUNK, GraphStepper, clone_carry
from .guard import Guarded
from .history import History
from .islands import join_islands
from .kernels import fused_iteration, native_iteration
from .progress import announcing_build
from .result import Result, solution_report
from .rng import RngStream
from .threads import default_cpu_threads

#: Steps per call of a native CPU kernel at most (a call's history rows are kept in one buffer).
NATIVE_STEPS = 1024


class Runner:
    """Advance `runs` independent runs of `algorithm` on `problem`, one step at a time.

    Examples:
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
        start: bool = True,
        ref=None,
    ) -> None:
        """`start=False` sets the run set up without evaluating its initial population:
        `start(state)` then takes one made elsewhere (`AskTell`, whose caller evaluates).
        `ref`: with several objectives, the hypervolume's reference point (`fronts.py`)."""
        self.runs = check_count("runs", runs, required=True)
        self.device = resolve_device(device)
        if self.device.type == "cpu":
            default_cpu_threads()  # once per process: a torchrun rank takes its share of the cores
        else:
            triton_ahead.start(engine)  # Triton's one-time work, in a thread, while this run set is made
        self.dtype = resolve_dtype(dtype)
        self.problem = as_problem(problem, dim)
        if self.problem.runs_held not in (None, self.runs):
            raise ValueError(f"problem {self.problem.name!r} holds {self.problem.runs_held} instances, one per run: "
                             f"use runs={self.problem.runs_held} (got runs={self.runs})")
        self.algorithm = for_problem(as_algorithm(algorithm).for_run(self.problem.dim, None), self.problem)
        self.algorithm.check_ready()
        self.objectives = self.problem.objectives
        if self.objectives > 1 and target is not None:
            raise ValueError(f"target stops runs whose best value reaches it; problem {self.problem.name!r} has "
                             f"{self.objectives} objectives and no single best: drop target (--target)")
        self.ref = reference_point(self.problem, ref) if self.objectives > 1 else None
        if ref is not None and self.objectives == 1:
            raise ValueError("ref (the hypervolume's reference point) is for problems of several objectives")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        self.seed = secrets.randbits(63) if seed is None else seed
        self.target = None if target is None else check_real("target", target)
        self.engine = check_engine(engine, self.device, self.problem, self.algorithm)
        self.chunk = check_count("chunk", chunk)
        if self.objectives > 1 and islands is not False and distributed.launched():
            raise ValueError("islands are not supported for several objectives: under torchrun use islands=False "
                             "(--no-islands), each rank running its own run set")
        self.islands = join_islands(self, False if self.objectives > 1 else islands, migrate_every, migrants)
        self._align_chunk()
        self._stepper: GraphStepper | None = None
        self.setup_time = 0.0  # compile + capture, seconds
        self._rng = RngStream(self.device, self.seed if self.islands is None else self.islands.seed)
        self.what = (f"{self.algorithm.name} with {self.runs:,} run(s) x {self.algorithm.pop_size:,} x "
                     f"{self.problem.dim:,} ({dtype_name(self.dtype)})")
        check_memory(self.algorithm.memory_bytes(self.runs, self.problem.dim, self.dtype.itemsize), self.device,
                     self.dtype, self.what)
        self._guarded = Guarded(self.problem.to(self.device, self.dtype), self.runs)

        self._extra: dict = {}
        self._extra_evals = 0
        self._kernels = None  # the fused (CUDA) or native (CPU) iteration, when the engine is one of them
        self.state: State | None = None
        self.iteration = 0
        self._history = History(self.problem.run_optima(self.runs))  # with known optima: target hits (exports)
        self._fronts = FrontSamples() if self.objectives > 1 else None  # several objectives: fronts.py
        if self._fronts is not None and self.device.type == "cuda" and importlib.util.find_spec("triton") is not None:
            from .kernels.nsga2 import install_cuda_ops  # NSGA-II's offspring and survival in a few launches
            from .kernels.pareto_cuda import install  # the non-dominated sort in one launch (else torch's peeling)

            install()
            install_cuda_ops()
        synchronize(self.device)
        self._t0 = time.perf_counter()
        if engine == "auto":
            self._extra["engine_reason"] = "Runner(engine='auto') has no step budget: the fastest path there is"
        if start:
            with self._rng, torch.no_grad(), memory_errors(self.device, self.dtype, self.what):
                state = self.algorithm.init(self._guarded, self.runs)
            self.start(state)

    def start(self, state: State) -> None:
        """Begin the runs from their initial population `state` (iteration 0)."""
        self._check_state(state)
        self.state = state
        self._it = torch.zeros((), device=self.device, dtype=torch.int64)
        best_f = torch.full((self.runs,), torch.inf, device=self.device, dtype=self.dtype)
        hit = torch.full((self.runs,), -1, device=self.device, dtype=torch.int64)
        self.best_x, self._hit_iter, self.best_f = self._track(self.state, self.state.x[:, 0], hit, self._it, best_f)
        first = self.state.f[:, 0] if self._fronts is None else best_f  # several objectives: no first value
        self._history.start(self.best_f, first)  # the first point: each run's evaluation 1
        self._sample_front()
        if self.engine in ("fused", "native"):
            self._prepare_kernels()

    def accept(self, state: State) -> None:
        """Take `state` as the next iteration's (made by ask/tell outside the engine's step):
        best-so-far, counts and history as a step keeps them."""
        self._check_state(state)
        self.state, self.best_x, self._hit_iter, self._it, self.best_f = self._accept(
            state, self.best_x, self._hit_iter, self._it, self.best_f)
        self.iteration += 1
        self._history.step(self.iteration, self.best_f)
        self._sample_front()

    def _sample_front(self) -> None:
        """Several objectives: keep the population's values when the history's stride is due."""
        if self._fronts is not None and self._fronts.due(self.iteration):
            x, F = self.state.x, self.state.f
            self._fronts.record(self.iteration, F, valid_points(self._guarded, x, F))

    def _align_chunk(self) -> None:
        """Graph engines replay whole chunks: make migrations fall on chunk boundaries."""
        if self.islands is not None and self.engine != "eager" and self.islands.every % self.chunk:
            self.chunk = math.gcd(self.islands.every, self.chunk)

    def _migrate(self) -> None:
        self.state = self.islands.migrate(self.state)
        if self._kernels is not None:  # the kernels write their own buffers in place
            self.state = self._kernels.prepare(self.state)

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

    def _prepare_kernels(self) -> None:
        with self._rng:  # the kernels' Philox key: one draw from the run set's stream
            key = int(torch.randint(0, 2**62, (), device=self.device))
        build = fused_iteration if self.engine == "fused" else native_iteration
        self._kernels = build(self.algorithm, self._guarded, self.runs, self.target, key)
        self.state = self._kernels.prepare(self.state)
        # compile (or load from the disk cache) before the steps, as setup (fused: every kernel at
        # once, in threads); a signal waits for the build to end: one stopped inside Numba or LLVM
        # leaves objects that complain at exit
        with deferred(), announcing_build(self.engine, self.algorithm.stepping().name):
            self.setup_time += self._kernels.warm_up(self.state, self.best_x, self._hit_iter, self._it, self.best_f)

    def use_engine(self, engine: str, reason: str | None = None) -> None:
        """Switch to another engine before the first step: the runs then go exactly as if
        the runner had been made with it."""
        if self.iteration:
            raise ValueError(f"the engine can only change before the first step (this runner is at {self.iteration})")
        self.engine = check_engine(engine, self.device, self.problem, self.algorithm)
        self._align_chunk()
        if self._kernels is not None and self._kernels.engine != self.engine:
            self._kernels = None
        if self.engine in ("fused", "native") and self._kernels is None:
            self._prepare_kernels()
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
        per_point = (self.objectives,) if self.objectives > 1 else ()
        if state.x.shape != (self.runs, pop, self.problem.dim) or state.f.shape != (self.runs, pop, *per_point):
            raise ValueError(
                f"{self.algorithm.name}.init returned x {tuple(state.x.shape)} and f {tuple(state.f.shape)}; "
                f"expected (runs={self.runs}, pop, dim={self.problem.dim}) and (runs, pop{', M' if per_point else ''})"
            )

    # -- stepping -------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance every run by `n` iterations (no host synchronisation).

        On CUDA, the graph engines replay whole chunks from the captured CUDA graph and run
        any remainder shorter than a chunk step by step (fused kernels stay fused). Islands
        exchange migrants every `migrate_every` iterations (chunk boundaries).
        """
        graphs = self.replays_graphs
        with self._rng, torch.no_grad():
            while n > 0:
                if graphs and n >= self.chunk:
                    self._replay_chunk()
                    n -= self.chunk
                elif self.engine == "native":  # many steps per kernel call (to the next front sample)
                    n -= self._native_steps(min(n, NATIVE_STEPS, self._steps_to_sample()))
                else:
                    carry = self._advance_fn(self.state, self.best_x, self._hit_iter, self._it, self.best_f)
                    self.state, self.best_x, self._hit_iter, self._it, self.best_f = carry
                    self.iteration += 1
                    n -= 1
                    self._history.step(self.iteration, self.best_f)
                    self._sample_front()
                if self.islands is not None and self.iteration % self.islands.every == 0:
                    self._migrate()

    def _native_steps(self, n: int) -> int:
        record = torch.empty(n, self.runs, dtype=self.dtype)
        self.state = self._kernels.advance(self.state, self.best_x, self._hit_iter, self._it, self.best_f, n, record)
        first = self.iteration + 1
        self.iteration += n
        if self._fronts is None:
            self._history.record_block(record, first)
        else:  # several objectives: no best value to follow, the populations' fronts instead
            self._sample_front()
        return n

    def _steps_to_sample(self) -> int:
        """Steps to the next iteration whose population the front history keeps (several objectives)."""
        if self._fronts is None:
            return NATIVE_STEPS
        return self._fronts.stride - self.iteration % self._fronts.stride

    @property
    def replays_graphs(self) -> bool:
        """True when the engine replays chunks of steps from a CUDA graph: on CUDA, but eager
        and for problems evaluated on the host (whose fused kernels launch step by step)."""
        return self.engine != "eager" and self.device.type == "cuda" and not self.problem.host_bound

    @property
    def builds_next_step(self) -> bool:
        """True while a graph engine has yet to build its kernels and capture its chunk."""
        return self.replays_graphs and self._stepper is None

    @property
    def _advance_fn(self):
        """The iteration the engine steps with (looked up each time, not stored: a bound
        method kept on the runner would make a reference cycle, and runners would then
        wait for the cyclic garbage collector to free their GPU memory)."""
        return self._advance if self._kernels is None else self._kernels

    def _replay_chunk(self) -> None:
        carry = (self.state, self.best_x, self._hit_iter, self._it, self.best_f)
        if self._stepper is None:
            started = time.perf_counter()
            counters = (self._guarded.nan_evals,) + (() if self._kernels is None else self._kernels.counters)
            sample = None
            if self._fronts is not None:  # a closure over the problem, not the runner: no reference cycle
                guarded = self._guarded
                sample = lambda carry: (carry[0].f, valid_points(guarded, carry[0].x, carry[0].f))  # noqa: E731
            self._stepper = GraphStepper(self._advance_fn, carry, self.chunk, compile_step=self.engine == "compiled",
                                         counters=counters, sample=sample)
            self._history.warm_up(self.chunk)  # (the milestones' kernels loaded now, not between two replays)
            self.setup_time += time.perf_counter() - started
        self._stepper.load(carry)
        self.state, self.best_x, self._hit_iter, self._it, self.best_f = self._stepper.replay()
        first = self.iteration + 1
        self.iteration += self.chunk
        self._history.record_block(self._stepper.history, first)
        if self._fronts is not None:
            self._fronts.record_block(first, *self._stepper.samples)

    def _advance(self, state, best_x, hit, it, best_f, record=None):
        """One iteration as a pure function: the algorithm's step, then best-so-far tracking
        (copied into `record` when given: a graph's per-step history row)."""
        carry = self._accept(self.algorithm.step(self._guarded, state), best_x, hit, it, best_f)
        if record is not None:
            record.copy_(carry[-1])
        return carry

    def _accept(self, state, best_x, hit, it, best_f):
        """The bookkeeping after an iteration that made `state`: its count, best-so-far, target."""
        it = it + 1
        best_x, hit, best_f = self._track(state, best_x, hit, it, best_f)
        return state, best_x, hit, it, best_f

    def _track(self, state: State, best_x, hit, it, best_f):
        if self.objectives > 1:  # no single best: the fronts are read from the populations (fronts.py)
            return best_x, hit, best_f
        fmin, idx = state.f.min(-1)
        better = fmin < best_f
        best_f = torch.where(better, fmin, best_f)
        best_x = torch.where(better[:, None], take_rows(state.x, idx), best_x)
        if self.target is not None:
            hit = torch.where((best_f <= self.target) & (hit < 0), it, hit)
        return best_x, hit, best_f

    def finish(self) -> None:
        """Let the algorithm improve on the best points once the steps are done (e.g. refine)."""
        with self._rng:
            out = self.algorithm.finish(self._guarded, self.state, self.best_x, self.best_f)
        if out is not None:
            self.best_x, self.best_f, info = out
            self._extra_evals += info.get("refine_evals", 0)
            self._extra.update(info)
            self._history.milestones.row(self.iteration + 1, self.best_f)  # after the steps: the last evaluations

    # -- checkpoints (engine/checkpoint.py) -----------------------------------------------
    def config(self) -> dict:
        """What a checkpoint must agree on to continue this run set."""
        return {"problem": self.problem.describe(), "algorithm": {"name": self.algorithm.name, **self.algorithm.params()},
                "runs": self.runs, "dtype": dtype_name(self.dtype), "seed": self.seed, "target": self.target,
                "chunk": self.chunk, "engine": self.engine, "device_type": self.device.type}

    def state_dict(self) -> dict:
        """Everything needed to continue these runs (tensors on the CPU); see `load_state_dict`."""
        if self.objectives > 1:
            raise ValueError("checkpoints of run sets with several objectives are not supported yet: "
                             "run without checkpoint/resume (--checkpoint/--resume)")
        return checkpoints.capture(self)

    def load_state_dict(self, saved: dict, source: str = "checkpoint") -> None:
        """Continue the runs of `saved` (a `state_dict`, e.g. from `checkpoint.load`) on this
        runner, made with the same configuration and not yet stepped. On the same device type
        and engine the runs go on bit for bit; on another device type, with a warning, they
        go on with a fresh random stream."""
        checkpoints.restore(self, saved, source)

    # -- queries --------------------------------------------------------------------------
    @property
    def evals(self) -> int:
        """Evaluations per run so far."""
        algo = self.algorithm
        return algo.evals_after(self.iteration) + self._extra_evals

    def target_reached(self) -> bool:
        """True when every run has reached the target (synchronises with the device)."""
        return self.target is not None and bool((self._hit_iter >= 0).all())

    def standing(self, digits: int) -> str:
        """Where the runs stand, for a progress bar: the best value so far, or with several
        objectives the sizes of the populations' non-dominated sets (a host synchronisation)."""
        if self._fronts is None:
            return f"best {float(self.best_f.min()):.{digits}g}"
        x, F = self.state.x, self.state.f
        sizes = non_dominated(F, valid_points(self._guarded, x, F)).sum(-1)
        low, high = int(sizes.min()), int(sizes.max())
        return f"front {low}" + (f"-{high}" if high != low else "") + " points"

    def elapsed(self) -> float:
        synchronize(self.device)
        return time.perf_counter() - self._t0

    def result(self, stop_reason: str = "stopped") -> Result:
        """Collect the runs so far into a `Result` (one device synchronisation)."""
        if self._fronts is not None:
            return self._front_result(stop_reason)
        self._history.record(self.iteration, self.best_f)
        wall = self.elapsed()
        best_x, best_f, hit, history = self.best_x, self.best_f, self._hit_iter, self._history.values()
        marks = self._history.milestones
        marks.flush()
        first_f, improved, hit_iter, hit_f = marks.first_f, marks.improved_iter, marks.hit_iter, marks.hit_f
        nan_evals = self._guarded.nan_evals
        evals = torch.tensor([self.evals, self.algorithm.evals_per_init(), self.algorithm.evals_per_step()],
                             device=self.islands.group.device if self.islands else "cpu")
        islands, whole = {}, self.algorithm
        if self.islands is not None:  # the run set's global answer, the same on every rank
            whole = self.islands.whole
            self.islands.settle()
            best_x, best_f = self.islands.agree_best(best_x, best_f)
            hit, history = self.islands.agree_first_hit(hit), self.islands.agree_min(history)
            first_f = self.islands.agree_lead(first_f)  # the first island's first point
            # the best's iteration: the earliest among the islands that hold it
            improved = self.islands.agree_first_hit(torch.where(self.best_f == best_f, improved, -1))
            if hit_iter is not None:  # a target's first hit: the earliest island's, with its value then
                first_hit = self.islands.agree_first_hit(hit_iter)
                hit_f = self.islands.agree_min(torch.where(hit_iter == first_hit, hit_f, torch.inf))
                hit_iter = first_hit
            nan_evals, evals = self.islands.agree_sum(nan_evals), self.islands.agree_sum(evals)
            wall = self.islands.agree_max(wall)
            islands = {"islands": self.islands.describe()}
        total, per_init, per_step = (int(v) for v in evals.cpu())
        evals_at = lambda its: self._evals_at(its, whole, per_init, per_step, total)  # noqa: E731
        evals_to_target = None if self.target is None else evals_at(hit)
        return Result(
            best_f=best_f.detach().cpu().double(),
            best_x=best_x.detach().cpu().double(),
            evals=total,
            nan_evals=nan_evals.cpu(),
            iterations=self.iteration,
            history_iter=torch.tensor(self._history.iterations),
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
            history_evals=evals_at(torch.tensor(self._history.iterations)),
            first_f=first_f.detach().cpu().double(),
            best_evals=evals_at(improved),
            hit_evals=None if hit_iter is None else evals_at(hit_iter),
            hit_f=None if hit_f is None else hit_f.detach().cpu().double(),
            extra={
                "torch": torch.__version__, "target": self.target, "engine": self._engine_used(),
                "setup_time": self.setup_time, **self._threads(), **self._extra, **islands,
                **solution_report(self.problem, best_x, best_f),
            },
        )

    def _front_result(self, stop_reason: str) -> Result:
        """The Result of a run set with several objectives: fronts and indicators (fronts.py)."""
        x, F = self.state.x, self.state.f
        self._fronts.record(self.iteration, F, valid_points(self._guarded, x, F))
        wall = self.elapsed()
        front = self.problem.pareto_front()
        indicators = self._fronts.indicators(self.ref, front)
        front_x, front_f = final_fronts(x, F, valid_points(self._guarded, x, F))
        iterations = torch.tensor(self._fronts.iterations)
        evals_at = lambda its: self._evals_at(its, self.algorithm, 0, 0, self.evals)  # noqa: E731
        hv, igd = indicators["hv"], indicators["igd"]
        return Result(
            best_f=None, best_x=None, evals=self.evals, nan_evals=self._guarded.nan_evals.cpu(),
            iterations=self.iteration, history_iter=iterations,
            history_f=hv if hv is not None else igd, history_evals=evals_at(iterations),
            wall_time=wall, device=str(self.device), device_name=device_name(self.device),
            dtype=dtype_name(self.dtype), seed=self.seed, problem=self.problem.describe(),
            algorithm={"name": self.algorithm.name, **self.algorithm.params()}, stop_reason=stop_reason,
            objectives=self.objectives, front_x=front_x, front_f=front_f,
            ref_point=self.ref, history_hv=hv, history_igd=igd,
            hv=None if hv is None else hv[:, -1].clone(), igd=None if igd is None else igd[:, -1].clone(),
            extra={"torch": torch.__version__, "engine": self._engine_used(), "setup_time": self.setup_time,
                   **self._threads(), "history_indicator": "hypervolume" if hv is not None else ("igd" if igd is not None else None),
                   "front_from": "final population", **self._extra},
        )

    def _evals_at(self, iterations: torch.Tensor, whole, per_init: int, per_step: int, total: int) -> torch.Tensor:
        """Evaluations per run after each of `iterations` (-1 stays -1; an iteration after
        the last step, a refinement's, is the run's total)."""
        its = iterations.cpu().long()
        stepped = (its >= 0) & (its <= self.iteration)
        if self.islands is None:  # the algorithm's own count, once per distinct iteration
            distinct = torch.unique(its[stepped])
            counts = torch.tensor([whole.evals_after(int(i)) for i in distinct], dtype=torch.int64)
            out = torch.full_like(its, -1)
            out[stepped] = counts[torch.searchsorted(distinct, its[stepped])]
        else:  # islands: steps of a fixed size, summed over the ranks
            out = torch.where(stepped, per_init + its * per_step, -1)
        return torch.where(its > self.iteration, total, out)

    def _threads(self) -> dict:
        """How many CPU threads the native kernels used (what a CPU timing depends on)."""
        if self.engine != "native" or self._kernels is None:
            return {}
        threads, why = self._kernels.threads
        return {"cpu_threads": threads, "cpu_threads_from": why}

    def _engine_used(self) -> str:
        if self.engine == "native":
            return "native"
        if self._kernels is not None:
            return "fused" if self._stepper is None else "fused+graph"
        if self._stepper is None:
            return "eager"
        return "compiled+graph" if self._stepper.compiled else "graph"
