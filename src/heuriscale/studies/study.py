"""Studies: a grid of configurations x repeated runs, executed into a `ResultStore`.

A `RunConfig` says what one configuration runs (algorithm and parameters, problem,
dimension, budget, device, how many runs) and how: `timing="batched"` advances all runs in
the same tensors (one call, for scores); `timing="each"` runs and times them one by one (for
papers that report the spread of execution times). Either way a run shorter than a second
is timed warm, the best of a few repeats after its first call (`timed`). Finished runs are
committed as they finish; configurations already in the store are skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .. import algorithms, local, problems
from ..engine import Result, Runner, minimize
from ..engine.auto import why_not_graph
from ..engine.history import TARGET_EXPONENTS
from ..engine.kernels import why_not_fused, why_not_native
from .store import ResultStore, describe


@dataclass(frozen=True)
class RunConfig:
    algorithm: str
    problem: str
    iters: int
    runs: int = 1
    dim: int | None = None
    algorithm_params: dict = field(default_factory=dict)
    problem_params: dict = field(default_factory=dict)
    preset: str | None = None
    device: str = "cpu"
    dtype: str = "float32"
    timing: str = "batched"  # or "each"
    refine: str | None = None  # "bfgs" / "lbfgs": Hybrid with refinement
    host_fitness: bool = False  # evaluate on the host (paper 002's GPU with CPU fitness)
    profile: bool = False  # per-phase times (paper 004)
    snapshots: tuple[int, ...] = ()  # keep the population at these iterations
    tags: dict = field(default_factory=dict)  # labels for tables (function, table row, ...)

    def key(self) -> str:
        text = json.dumps(dataclasses.asdict(self), sort_keys=True, default=str)
        return hashlib.sha1(text.encode()).hexdigest()[:16]

    def seed(self, repeat: int) -> int:
        return int(self.key(), 16) % (2**31) + 1000 * repeat


def build(config: RunConfig):
    """The problem and algorithm objects of a configuration."""
    problem = problems.get_problem(config.problem, dim=config.dim, **config.problem_params)
    if config.host_fitness:
        problem = _on_host(problem)
    algo = algorithms.get_algorithm(config.algorithm, preset=config.preset, **config.algorithm_params)
    if config.refine:
        algo = local.Hybrid(algorithm=algo, refine=local.get_refiner(config.refine))
    return problem, algo


def _on_host(problem: problems.Problem) -> problems.Problem:
    """The same objective evaluated on the host with NumPy arrays (results moved back)."""
    cpu = problem.to("cpu", torch.float64)
    fn = problems.NumpyFunction(lambda X: cpu.evaluate(torch.from_numpy(X)).numpy(), problem.dim,
                                problem.lower, problem.upper, name=f"{problem.name} (host fitness)")
    return fn


#: Runs shorter than this (seconds, setup excluded) are timed again, warm: their first call
#: pays start-up costs (the kernels' thread pool, first-touch allocations, caches) that are
#: not the engine's and can dominate a run of milliseconds.
WARM_BELOW = 1.0
#: Warm repeats of a short run at most (the best is kept), and their total time at most.
WARM_REPEATS = 3
WARM_BUDGET = 1.0


def execute(config: RunConfig, repeats: list[int], warm_timing: bool = True) -> list[dict]:
    """Run the given repeats of a configuration; one row per run. `warm_timing`: time short
    runs again, warm (`timed`), where the times are results (`reproduce`); a campaign of
    `compare`, which ranks errors, keeps each run's first time (start-up included) and does
    not pay for the repeats (a full bbob campaign spent more on them than on its runs)."""
    problem, algo = build(config)
    # islands=False: under torchrun a study shares out whole runs, never splits one over ranks
    kw = dict(iters=config.iters, device=config.device, dtype=config.dtype, profile=config.profile,
              engine=engine_for(config, problem, algo), islands=False)
    if config.timing == "batched" and not config.snapshots:
        seed, chosen = config.seed(repeats[0]), problem.select_runs(repeats)  # once, not per timed call
        result = timed(lambda: minimize(chosen, algo, runs=len(repeats), seed=seed, **kw), warm_timing)
        return [_row(result, r, repeat, seed, batched=True) for r, repeat in enumerate(repeats)]
    rows = []
    for repeat in repeats:
        if config.snapshots:
            result = _run_with_snapshots(problem.select_runs([repeat]), algo, config, config.seed(repeat))
        else:
            chosen = problem.select_runs([repeat])
            result = timed(lambda: minimize(chosen, algo, runs=1, seed=config.seed(repeat), **kw), warm_timing)
        rows.append(_row(result, 0, repeat, config.seed(repeat), batched=False))
    return rows


def timed(run: Callable[[], Result], warm: bool = True) -> Result:
    """`run()`'s result, its time measured warm.

    The first call gives the scores. When it took less than WARM_BELOW seconds (setup
    excluded), its time is start-up as much as engine, so (with `warm`) the same seeded run is repeated
    (up to WARM_REPEATS times, WARM_BUDGET seconds in all; at least once) and the best warm
    time is kept (with that run's per-phase times, when profiled): the first call and the
    thread pool's start are never in the stored time. Longer runs keep their one time
    (start-up is then under a percent of it). The stored setup time stays the first call's
    (compiling, capturing), and `wall_time - setup_time` is the measured run. What was done
    is in `extra["timing"]`: warm, repeats, the first call's time and the warm times."""
    result = run()
    setup = float(result.extra.get("setup_time", 0.0))
    first = result.wall_time - setup
    timing = {"warm": False, "repeats": 1, "first_s": first, "warm_s": []}
    if warm and first < WARM_BELOW:
        best = None
        while len(timing["warm_s"]) < WARM_REPEATS and sum(timing["warm_s"]) < WARM_BUDGET:
            again = run()
            t = again.wall_time - float(again.extra.get("setup_time", 0.0))
            timing["warm_s"].append(t)
            if best is None or t < best[0]:
                best = (t, again)
        result.wall_time = setup + best[0]
        if "phases" in best[1].extra:
            result.extra["phases"] = best[1].extra["phases"]
        timing.update(warm=True, repeats=len(timing["warm_s"]))
    result.extra["timing"] = timing
    return result


def engine_for(config: RunConfig, problem, algo) -> str:
    """On the CPU: the native kernels (compiled once, then loaded from Numba's disk cache).
    On CUDA: the fused kernels where they exist (compiled once per process), else graph
    replay of the uncompiled step (capture takes milliseconds, while compiling again for
    every run of a grid would take seconds each). Eager for profiled runs (their phases are
    timed one by one), for short runs on CUDA, for steps a graph cannot capture (CMA-ES's
    eigh), and where no fast path exists."""
    if config.device == "cpu" and not config.profile:
        return "native" if why_not_native(algo, problem, torch.device("cpu")) is None else "eager"
    if not config.device.startswith("cuda") or config.profile or config.host_fitness or config.iters < 256 \
            or problem.stochastic or why_not_graph(algo):
        return "eager"
    return "fused" if why_not_fused(algo, problem, torch.device(config.device)) is None else "graph"


def _run_with_snapshots(problem, algo, config: RunConfig, seed: int) -> Result:
    cuda = config.device.startswith("cuda")
    engine = ("eager" if why_not_graph(algo) else "graph") if cuda else engine_for(config, problem, algo)
    runner = Runner(problem, algo.with_horizon(config.iters), runs=1, device=config.device, dtype=config.dtype,
                    seed=seed, engine=engine, islands=False)
    shots = {}
    for it in sorted(set(config.snapshots) | {config.iters}):
        runner.step(min(it, config.iters) - runner.iteration)
        if it in config.snapshots:
            shots[str(it)] = {"x": runner.state.x[0].cpu().tolist(), "f": runner.state.f[0].cpu().tolist(),
                              "elapsed": runner.elapsed()}
    runner.finish()
    result = runner.result("iters")
    result.extra["snapshots"] = shots
    return result


def _row(result: Result, r: int, repeat: int, seed: int, batched: bool) -> dict:
    extra = {k: v for k, v in result.extra.items() if k != "solution"}
    for key in ("global_best_f", "feasible", "max_violation", "objective"):
        if isinstance(extra.get(key), list):
            extra[key] = extra[key][r]
    extra["solution"] = result.extra.get("solution") if result.runs == 1 else None
    extra["batched_runs"] = result.runs if batched else 1
    best_f, best_x = result.best_f, result.best_x
    if result.objectives > 1:
        # several objectives: the run's final non-dominated set is its result, and the store's
        # one number (lower is better) its final IGD (inf where the problem's front is unknown)
        extra["front_f"] = result.front_f[r].detach().cpu().double().tolist()
        for key in ("hv", "igd"):
            extra[key] = None if getattr(result, key) is None else float(getattr(result, key)[r])
        best_f = torch.full((result.runs,), math.inf) if result.igd is None else result.igd
    return {
        "repeat": repeat,
        "config": {},  # filled by run_configs
        "seed": seed,
        "device": result.device,
        "device_name": result.device_name,
        "best_f": float(best_f[r]),
        "best_x": best_x[r].tolist() if best_x is not None else [],
        "evals": result.evals,
        "wall_time": result.wall_time,
        "setup_time": float(result.extra.get("setup_time", 0.0)),
        "history": _history(result, r),
        "extra": extra,
    }


def _history(result: Result, r: int) -> dict:
    """Run r's stored history: best-so-far `f` after the sampled iterations `iter` (after
    `evals` evaluations) and its milestones (`engine/history.py`, read by `studies/exports`):
    `first_f` (its first evaluated value), `best_evals` (when best_f was first reached) and,
    with a known optimum, `hits`: [k, evaluations, best-so-far] for every target 10^(k/5)
    above f* the run reached, first time. Rows written before these keys existed have `iter`
    and `f` only."""
    if result.objectives > 1:  # several objectives: the indicators after the sampled iterations
        return {"iter": result.history_iter.tolist(),
                **{key: getattr(result, f"history_{key}")[r].tolist() for key in ("hv", "igd")
                   if getattr(result, f"history_{key}") is not None}}
    out = {"iter": result.history_iter.tolist(), "f": result.history_f[r].tolist()}
    if result.first_f is not None:
        out.update(evals=result.history_evals.tolist(), first_f=float(result.first_f[r]),
                   best_evals=int(result.best_evals[r]))
    if result.hit_evals is not None:
        out["hits"] = [[k, e, f] for k, e, f in zip(TARGET_EXPONENTS, result.hit_evals[r].tolist(),
                                                     result.hit_f[r].tolist()) if e >= 0]
    return out


def run_configs(study: str, configs: list[RunConfig], store: ResultStore,
                on_progress: Callable[[RunConfig, int], None] | None = None, warm_timing: bool = True) -> None:
    """Execute every configuration's missing runs; commit each finished batch or run at once."""
    for config in configs:
        key = config.key()
        missing = [r for r in range(config.runs) if r not in store.finished(study, key)]
        if not missing:
            continue
        groups = [missing] if config.timing == "batched" and not config.snapshots else [[r] for r in missing]
        for group in groups:
            rows = execute(config, group, warm_timing)
            for row in rows:
                row["config"] = dataclasses.asdict(config)
            store.add(study, key, rows)
            if on_progress is not None:
                on_progress(config, len(rows))


def aggregate(store: ResultStore, study: str, config: RunConfig) -> dict:
    """Statistics over the stored runs of one configuration."""
    runs = store.runs(study, config.key())
    best = [r["best_f"] for r in runs]
    # runtime excludes compilation / graph capture; a batched run's time is the whole batch's
    times = [r["wall_time"] - r["setup_time"] for r in runs]
    return {"runs": runs, "n": len(runs), "f": describe(best), "time": describe(times),
            "device_name": runs[0]["device_name"] if runs else "",
            "batched": bool(runs and runs[0]["extra"].get("batched_runs", 1) > 1)}
