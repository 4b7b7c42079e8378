"""`minimize`: the front door. A run set stepped in chunks until a budget is spent.

It checks the budgets (`iters`, `evals`, `time_limit`, `target`), builds a `Runner`, lets
`auto` choose its engine (`auto.py`), then steps in chunks, checking stop criteria, signals
(`interrupt.py`), periodic checkpoints (`checkpoint.py`) and the progress bar
(`progress.py`) between chunks, and returns the `Result`.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from ..algorithms import Algorithm
from ..interrupt import Interrupted, interruptible
from ..problems import Problem
from . import auto
from . import checkpoint as checkpoints
from .arguments import as_algorithm, as_problem, check_count, check_real, for_problem, steps_allowed
from .device import memory_errors, resolve_device, synchronize
from .graph import DEFAULT_CHUNK
from .profile import PhaseTimer
from .progress import ProgressBar, announcing_build
from .result import Result
from .runner import Runner

#: On devices that need a sync to check stop criteria, a chunk of steps lasts about this long.
CHUNK_SECONDS = 0.05


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
    ref: Sequence[float] | None = None,
) -> Result:
    """Minimise `problem` with `algorithm` in `runs` independent runs advancing together.

    Stops at the first budget reached: `iters` iterations, `evals` evaluations per run,
    `time_limit` seconds, or `target` reached by every run (a target needs another budget).
    Stop criteria are checked between chunks of steps. Best-so-far is the minimum over every
    point each run evaluated; a NaN value counts as worse than any number.

    Args:
        problem: a `Problem`, or the name of a built-in one (`problem_names()`).
        algorithm: an `Algorithm`, or the name of a built-in one (`algorithm_names()`).
        dim: the dimension, for a problem given by name.
        iters: the most iterations per run.
        evals: the most evaluations per run.
        time_limit: the most wall-clock seconds for the whole run set.
        target: stop when every run's best is at or below this value.
        runs: independent runs, advanced together in the same tensors.
        device: "cpu", "cuda", "cuda:N", or "auto" (a GPU when there is one).
        dtype: "float32" or "float64".
        seed: the seed of every random stream; the same seed, device, engine and `runs` give
            the same numbers. None draws one (recorded in the result).
        progress: show a progress bar.
        profile: record the seconds spent in each marked phase of the steps
            (`evaluation` and the algorithm's own, e.g. FEP's `mutation`) in
            `result.extra["phases"]`.
        engine: "eager" runs each step as written (the reference); "graph" replays chunks of
            `chunk` steps from a captured CUDA graph; "compiled" also compiles the step with
            torch.compile; "fused" runs hand-fused Triton kernels (PSO, PRS, FEP, synchronous
            Firefly, APO); "native" runs the Numba CPU kernels; "auto" (default) picks among
            those the configuration has from one timed eager step and the fast path's set-up
            cost, and says why in `result.extra["engine_reason"]`.
        chunk: steps per chunk (one CUDA graph replay, one native kernel call at most).
        checkpoint: a path where the run set is saved, atomically, every `checkpoint_every`
            seconds between chunks and when it stops.
        checkpoint_every: seconds between checkpoints.
        resume: a checkpoint to continue (same configuration; the seed and engine default to
            the saved ones), bit for bit on the same device and engine.
        handle_signals: in the main thread, let SIGINT and SIGTERM end the current chunk, save
            the checkpoint and raise `heuriscale.interrupt.Interrupted` (a KeyboardInterrupt)
            whose `.result` holds the runs so far; a second signal ends the process at once.
        islands: under torchrun with several ranks, split each run's population over the
            ranks as islands (None or True) or keep each rank's runs to itself (False).
        migrate_every: iterations between migrations of islands (default: one chunk).
        migrants: the best individuals per run each island sends at a migration.
        ref: for a problem of several objectives, the hypervolume's reference point (one
            number per objective; default: the problem's Pareto front's nadir x 1.1).

    Several objectives (`problem.objectives` > 1, with `nsga2` or `moead`): the result holds
    each run's final non-dominated set (`front_x`, `front_f`) and a hypervolume / IGD
    history instead of best values; such run sets step eagerly, and `target`, checkpoints
    and islands are refused.

    Returns:
        The runs' outcomes: best values and points per run, history, evaluations, wall time,
            device, engine and configuration.

    Raises:
        ValueError: a bad argument, in one line that says how to fix it, before any work.

    Examples:
        >>> r = minimize("sphere", "pso", dim=10, iters=300, runs=5, seed=1, device="cpu")
        >>> bool((r.best_f < 1e-6).all())
        True
    """
    iters = check_count("iters", iters)
    evals = check_count("evals", evals)
    if time_limit is not None and not 0 < check_real("time_limit", time_limit) < math.inf:
        raise ValueError(f"time_limit must be > 0 seconds (and finite), got {time_limit!r}")
    if iters is None and evals is None and time_limit is None:
        raise ValueError("give a budget: iters=..., evals=... or time_limit=... (a target alone may never be reached)")

    problem = as_problem(problem, dim)
    algo = for_problem(as_algorithm(algorithm).for_run(problem.dim, evals), problem)
    if problem.objectives > 1 and (checkpoint is not None or resume is not None):
        raise ValueError("checkpoints of run sets with several objectives are not supported yet: "
                         "drop checkpoint/resume (--checkpoint/--resume)")
    max_steps = steps_allowed(algo, iters, evals)
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
    if not check_real("checkpoint_every", checkpoint_every) > 0:
        raise ValueError(f"checkpoint_every must be > 0 seconds, got {checkpoint_every!r}")
    runner = Runner(problem, algo, dim=dim, runs=runs, device=device, dtype=dtype, seed=seed, target=target,
                    engine="eager" if engine == "auto" else engine, chunk=chunk, islands=islands,
                    migrate_every=migrate_every, migrants=migrants, ref=ref)
    if runner.islands is not None and (checkpoint is not None or resume is not None):
        raise ValueError("checkpoints of a run set split into islands over several ranks are not supported yet: "
                         "drop checkpoint/resume (--checkpoint/--resume), or run with islands=False")
    if engine == "auto" and problem.objectives > 1 and runner.device.type != "cpu":
        runner.use_engine("eager", "several objectives run eagerly (the only engine for them)")
    elif engine == "auto":
        with memory_errors(runner.device, runner.dtype, runner.what):  # the timed step runs on a copy
            choice = auto.choose(runner, max_steps, profile, time_limit)
        if runner.islands is not None:  # every island steps with rank 0's choice
            choice = runner.islands.group.broadcast(choice, "agreeing on the engine")
        runner.use_engine(choice.engine, f"auto chose {choice.engine}: {choice.reason}")
    if profile and runner.engine != "eager":
        raise ValueError("profile=True times each phase with synchronisations: use engine='eager' (or 'auto')")
    if saved is not None:
        runner.load_state_dict(saved, str(resume))
    saver = checkpoints.Checkpointer(runner, checkpoint, checkpoint_every) if checkpoint is not None else None

    bar = ProgressBar(runner, max_steps, time_limit) if progress else None
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
    unit = runner.chunk if runner.replays_graphs else 1  # graph engines step whole chunks
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
        quiet = bar is not None or not runner.builds_next_step  # (a bar shows "building kernels" itself)
        with contextlib.nullcontext() if quiet else announcing_build(runner.engine, runner.algorithm.stepping().name):
            runner.step(n)
        if needs_sync and unit == 1 and runner.islands is None:  # eager: grow the chunk to about CHUNK_SECONDS
            synchronize(runner.device)
            chunk = _next_chunk(n, time.perf_counter() - started)
        if bar is not None:
            bar.update(runner)


def _next_chunk(n: int, seconds: float) -> int:
    """Steps per chunk so that a chunk lasts about CHUNK_SECONDS (grow at most 2x)."""
    if seconds <= 0:
        return 2 * n
    return max(1, min(2 * n, int(n * CHUNK_SECONDS / seconds)))
