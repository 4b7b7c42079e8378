"""Engine choice: which engines a run set may use (`check_engine`), and what `engine="auto"`
picks, and why (`choose`).

On CUDA a run can step eagerly (each operation launched from Python) or replay chunks of
steps from a CUDA graph over fused Triton kernels or a `torch.compile`d step (the "fast
path"). The fast path costs a setup first: building its kernels (seconds the first time
on a machine, cached on disk afterwards), one warm-up step and the capture of one chunk.
`auto` weighs that against what it saves on this run's steps:

    eager total = steps x t_eager
    fast total  = BUILD_WARM + t_eager + chunk x t_launch + steps x STEP_FRACTION x t_eager

where t_eager is one eager step of this very run set, timed on a copy of it (the run's
random stream and counters are left untouched), and t_launch the host's share of it (what
the capture of one step costs). The constants are measured on the H100 (docs/benchmarks.md,
"Engine choice and first-run cost") and err on the side of eager. The build cost assumed is
the warm one: the first run on a fresh machine pays more once, shows "building kernels",
and `heuriscale warmup` (`engine/warmup.py`) pays it ahead of time.

For bit-for-bit repeatable numbers across machines pin the engine: the fused kernels draw
their own (Philox) random numbers, so `auto` choosing differently gives different numbers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from .kernels import cpu_engines, native_in_process, why_not_fused, why_not_native, why_not_picked

#: The engines a run set can step with.
ENGINES = ("auto", "eager", "graph", "compiled", "fused", "native")

#: A fast step takes at most this fraction of an eager step (H100, docs/benchmarks.md speed
#: table: the fused kernels took 1-17% of an eager step, the compiled step 2-47%; CPU,
#: benchmarks/cpu.py: the native kernels took 1-50% of an eager step). `fused_host`, the
#: fused kernels around a host objective, is a rounded estimate: on the H100,
#: benchmarks/user_objectives.py measured 57-92% of eager for NumPy, Numba and scalar
#: objectives at 32 x 2 and 1,024 x 30, 80-101% at 65,536 x 2 (docs/benchmarks.md).
STEP_FRACTION = {"fused": 0.25, "compiled": 0.6, "native": 0.5, "fused_host": 0.6}
#: Seconds a fast path's setup takes when the on-disk kernel caches are warm (H100,
#: benchmarks/first_run.py in docs/benchmarks.md: fused 0.61-0.75 s for PRS, FEP, PSO and
#: Firefly at the papers' sizes; compiled 11.2-13.1 s for APO at D = 1,000, inductor's
#: caches notwithstanding).
BUILD_WARM = {"fused": 0.7, "compiled": 11.0}
#: Seconds the native CPU kernels' setup takes: importing Numba and loading the first kernels
#: of a process from a warm disk cache (0.38-0.6 s measured on a 2-core machine); "more":
#: once this process has loaded the algorithm's kernels, about 0.015 s for another dtype or
#: objective. Another algorithm's kernels count as "first": they loaded in 0.012-0.035 s from
#: a warm cache (2-core machine), but a cold one compiles them for seconds, and a short time
#: limit must not be spent on that (native_in_process).
NATIVE_SETUP = {"first": 0.6, "more": 0.05}


def check_engine(engine: str, device: torch.device, problem, algorithm) -> str:
    """The engine a runner steps with, checked against the device and problem ('auto': the
    fastest one available, before any timing; `choose` then weighs it against eager)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    if problem.objectives > 1 and engine == "auto" and device.type != "cpu":  # `choose` weighs eager and graph
        return "eager"
    if engine == "auto":
        if device.type == "cpu":
            return "native" if why_not_native(algorithm, problem, device) is None else "eager"
        if device.type != "cuda" or problem.stochastic or why_not_graph(algorithm):
            return "eager"
        if problem.host_bound:  # no graph: the fused kernels launched around each host evaluation
            return "fused" if why_not_fused(algorithm, problem, device) is None else "eager"
        return fast_engine(algorithm, problem, device)
    if engine in ("fused", "native"):
        reason = (why_not_fused if engine == "fused" else why_not_native)(algorithm, problem, device)
        if reason is not None:
            raise ValueError(f"engine {engine!r} is not available: {reason}")
        return engine
    if engine != "eager" and device.type != "cuda":
        raise ValueError(f"engine {engine!r} replays CUDA graphs and needs a CUDA device; on {device} use "
                         f"{cpu_engines(algorithm, problem)}")
    if engine != "eager" and problem.host_bound:
        raise ValueError(f"problem {problem.name!r} is evaluated on the host and cannot be graph-captured; use "
                         "engine='eager', or 'fused' where the algorithm has fused kernels")
    if engine != "eager" and problem.stochastic:
        raise ValueError(f"problem {problem.name!r} draws its own noise, which a CUDA graph cannot capture; use engine='eager'")
    if engine != "eager" and (why := why_not_graph(algorithm)):
        raise ValueError(f"{why}; use engine='eager'")
    return engine


def why_not_graph(algorithm) -> str | None:
    """Why a CUDA graph cannot capture the algorithm's step (its `uncapturable`), or None."""
    owner = algorithm.stepping()
    why = type(owner).uncapturable
    return f"{owner.name}'s step calls what a CUDA graph cannot capture ({why})" if why else None


@dataclass(frozen=True)
class Choice:
    engine: str
    reason: str


def fast_engine(algorithm, problem, device: torch.device) -> str:
    """The fast path that exists for this run: fused kernels, else the compiled step."""
    return "fused" if why_not_picked(algorithm, problem, device) is None else "compiled"


def decide(fast: str, steps: float, chunk: int, t_eager: float, t_launch: float) -> Choice:
    """The cheaper of eager and `fast` for `steps` steps, given the timed eager step."""
    if steps < chunk:
        return Choice("eager", f"{steps} steps are fewer than one {chunk}-step chunk: nothing to replay")
    if math.isinf(steps):
        return Choice(fast, "no step budget (time limit or target): the fast path repays its setup over time")
    return _weigh(fast, steps, t_eager, BUILD_WARM[fast] + t_eager + chunk * t_launch, STEP_FRACTION[fast],
                  "warm kernel caches")


def _weigh(fast: str, steps: float, t_eager: float, setup: float, fraction: float, caches: str,
           note: str = "") -> Choice:
    """`fast` or eager, whichever costs less over `steps` steps: eager steps of `t_eager`
    against `setup` plus steps at `fraction` of one; the reason says the sums."""
    eager_total, fast_total = steps * t_eager, setup + steps * fraction * t_eager
    costs = (f"eager {steps:.0f} x {_seconds(t_eager)} = {_seconds(eager_total)}; {fast} ~{_seconds(fast_total)} "
             f"(setup ~{_seconds(setup)} with {caches}, steps at <= {fraction:.0%} of eager{note})")
    return Choice(fast, costs) if fast_total < eager_total else Choice("eager", costs)


def _timed_eager_step(runner) -> tuple[float, float]:
    """`runner.time_eager_step()`, its seconds counted as the runner's setup."""
    started = time.perf_counter()
    timed = runner.time_eager_step()
    runner.setup_time += time.perf_counter() - started
    return timed


def choose(runner, steps: float, profile: bool = False, time_limit: float | None = None) -> Choice:
    """The engine `auto` uses for `steps` more steps (or `time_limit` seconds) of an eager
    `runner` (not yet stepped)."""
    device, problem = runner.device, runner.problem
    if device.type == "cpu":
        return _choose_on_cpu(runner, steps, profile, time_limit)
    if device.type != "cuda":
        return Choice("eager", f"on {device.type} the eager step is the engine")
    if profile:
        return Choice("eager", "profile=True synchronises around every phase, which a CUDA graph cannot")
    if problem.stochastic:
        return Choice("eager", f"problem {problem.name!r} draws its own noise, which a CUDA graph cannot capture")
    if why := why_not_graph(runner.algorithm):
        return Choice("eager", why)
    if problem.host_bound:
        return _choose_for_host_objective(runner, steps)
    if problem.objectives > 1:
        return _choose_for_objectives(runner, steps)
    fast = fast_engine(runner.algorithm, problem, device)
    if steps < runner.chunk or math.isinf(steps):
        return decide(fast, steps, runner.chunk, 0.0, 0.0)
    return decide(fast, steps, runner.chunk, *_timed_eager_step(runner))


def _choose_for_objectives(runner, steps: float) -> Choice:
    """Several objectives on CUDA: eager steps, or the uncompiled step replayed from CUDA graphs
    (no fused kernels; no compilation). A replayed step costs the GPU's time only, which on an
    H200 was 16% of an eager step at populations 100 and 1,000 and 97% at 10,000 (NSGA-II,
    DTLZ2, docs/multiobjective.md); the capture costs about one eager step plus launching a
    chunk of steps. The graph is taken when that setup is at most a quarter of the eager run's
    time, so it never costs much where the GPU, not the launches, sets the pace."""
    if steps < runner.chunk:
        return Choice("eager", f"{steps} steps are fewer than one {runner.chunk}-step chunk: nothing to replay")
    if math.isinf(steps):
        return Choice("graph", "several objectives, no step budget: the graph repays its capture over time")
    t_eager, t_launch = _timed_eager_step(runner)
    setup = t_eager + runner.chunk * t_launch
    costs = (f"several objectives: eager {steps:.0f} x {_seconds(t_eager)} = {_seconds(steps * t_eager)}; graph "
             f"capture ~{_seconds(setup)}, then steps at the GPU's pace")
    return Choice("graph" if steps * t_eager >= 4 * setup else "eager", costs)


def _choose_for_host_objective(runner, steps: float) -> Choice:
    """CUDA with an objective evaluated on the host (NumPy, Python, Numba): nothing can be
    captured in a graph, but the fused kernels still replace the eager step's many launches
    by two or three around each evaluation (pinned, asynchronous copies either way)."""
    reason = why_not_fused(runner.algorithm, runner.problem, runner.device)  # (vs eager: see why_not_picked)
    if reason is not None:
        return Choice("eager", f"problem {runner.problem.name!r} is evaluated on the host and {reason}")
    if math.isinf(steps):
        return Choice("fused", "no step budget: the fused kernels repay their setup over time (no graph: the "
                               f"problem {runner.problem.name!r} is evaluated on the host)")
    t_eager, _ = _timed_eager_step(runner)
    return _weigh("fused", steps, t_eager, BUILD_WARM["fused"], STEP_FRACTION["fused_host"], "warm kernel caches",
                  ", no graph: the problem is evaluated on the host")


def _choose_on_cpu(runner, steps: float, profile: bool, time_limit: float | None) -> Choice:
    """Native kernels, unless there are none for this run set or eager is cheaper overall."""
    if profile:
        return Choice("eager", "profile=True times each phase of the eager step, which a native kernel fuses")
    reason = why_not_native(runner.algorithm, runner.problem, runner.device)
    if reason is not None:
        return Choice("eager", reason)
    setup = NATIVE_SETUP["more" if native_in_process(runner.algorithm, _work(runner)) else "first"]
    if time_limit is not None and time_limit < 4 * setup:
        return Choice("eager", f"a time limit of {_seconds(time_limit)} is short next to loading the native kernels "
                               f"(~{_seconds(setup)})")
    if math.isinf(steps):
        return Choice("native", "no step budget (time limit or target): the native kernels repay their setup over time")
    if steps < runner.chunk:  # and timing eager steps would call the objective for nothing
        return Choice("eager", f"{steps} steps are fewer than {runner.chunk}: not worth loading kernels")
    t_eager, _ = _timed_eager_step(runner)
    return _weigh("native", steps, t_eager, setup, STEP_FRACTION["native"], "a warm disk cache")


def _work(runner) -> int:
    """Coordinates an iteration of the run set moves (runs x population x dimension), what the
    native kernels choose their build and threads by."""
    pop = getattr(runner.algorithm.stepping(), "pop_size", None) or 1
    return runner.runs * pop * max(runner.problem.dim, 4)


def _seconds(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"
