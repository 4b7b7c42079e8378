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
from pathlib import Path

import torch

from ..algorithms import Algorithm
from ..interrupt import Interrupted, interruptible
from ..problems import Problem
from . import auto
from . import checkpoint as checkpoints
from .arguments import as_algorithm, as_problem, check_count, check_real, steps_allowed
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
) -> Result:
    """Minimise `problem` with `algorithm` in `runs` independent runs advancing together.

    Stops at the first budget reached: `iters` iterations, `evals` evaluations per run,
    `time_limit` seconds, or `target` reached by every run (a target needs another budget).
    With `profile=True`, `result.extra["phases"]` holds the seconds spent in each marked
    phase of the steps (`evaluation` and the algorithm's own, e.g. FEP's `mutation`).

    `engine`: "eager" runs each step as it is written (the reference); "graph" replays
    chunks of `chunk` steps from a captured CUDA graph; "compiled" also compiles the step
    with torch.compile first; "fused" replays hand-fused Triton kernels instead (PSO, PRS,
    FEP and synchronous Firefly, see `engine/kernels`); "auto" (default) weighs the fast path on
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
    algo = as_algorithm(algorithm).for_run(problem.dim, evals)
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
