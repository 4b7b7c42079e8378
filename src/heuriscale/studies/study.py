"""Studies: a grid of configurations x repeated runs, executed into a `ResultStore`.

A `RunConfig` says what one configuration runs (algorithm and parameters, problem,
dimension, budget, device, how many runs) and how: `timing="batched"` advances all runs in
the same tensors (one call, for scores); `timing="each"` runs and times them one by one (for
papers that report the spread of execution times). Finished runs are committed as they
finish; configurations already in the store are skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .. import algorithms, local, problems
from ..engine import Result, Runner, minimize
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


def execute(config: RunConfig, repeats: list[int]) -> list[dict]:
    """Run the given repeats of a configuration; one row per run."""
    problem, algo = build(config)
    # islands=False: under torchrun a study shares out whole runs, never splits one over ranks
    kw = dict(iters=config.iters, device=config.device, dtype=config.dtype, profile=config.profile,
              engine=engine_for(config, problem, algo), islands=False)
    if config.timing == "batched" and not config.snapshots:
        result = minimize(problem, algo, runs=len(repeats), seed=config.seed(repeats[0]), **kw)
        return [_row(result, r, repeat, config.seed(repeats[0]), batched=True) for r, repeat in enumerate(repeats)]
    rows = []
    for repeat in repeats:
        if config.snapshots:
            result = _run_with_snapshots(problem, algo, config, config.seed(repeat))
        else:
            result = minimize(problem, algo, runs=1, seed=config.seed(repeat), **kw)
        rows.append(_row(result, 0, repeat, config.seed(repeat), batched=False))
    return rows


def engine_for(config: RunConfig, problem, algo) -> str:
    """On the CPU: the native kernels (compiled once, then loaded from Numba's disk cache).
    On CUDA: the fused kernels where they exist (compiled once per process), else graph
    replay of the uncompiled step (capture takes milliseconds, while compiling again for
    every run of a grid would take seconds each). Eager for profiled runs (their phases are
    timed one by one), for short runs on CUDA, and where no fast path exists."""
    if config.device == "cpu" and not config.profile:
        return "native" if why_not_native(algo, problem, torch.device("cpu")) is None else "eager"
    if not config.device.startswith("cuda") or config.profile or config.host_fitness or config.iters < 256 \
            or problem.stochastic:
        return "eager"
    return "fused" if why_not_fused(algo, problem, torch.device(config.device)) is None else "graph"


def _run_with_snapshots(problem, algo, config: RunConfig, seed: int) -> Result:
    engine = "graph" if config.device.startswith("cuda") else engine_for(config, problem, algo)
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
    return {
        "repeat": repeat,
        "config": {},  # filled by run_configs
        "seed": seed,
        "device": result.device,
        "device_name": result.device_name,
        "best_f": float(result.best_f[r]),
        "best_x": result.best_x[r].tolist(),
        "evals": result.evals,
        "wall_time": result.wall_time,
        "setup_time": float(result.extra.get("setup_time", 0.0)),
        "history": {"iter": result.history_iter.tolist(), "f": result.history_f[r].tolist()},
        "extra": extra,
    }


def run_configs(study: str, configs: list[RunConfig], store: ResultStore,
                on_progress: Callable[[RunConfig, int], None] | None = None) -> None:
    """Execute every configuration's missing runs; commit each finished batch or run at once."""
    for config in configs:
        key = config.key()
        missing = [r for r in range(config.runs) if r not in store.finished(study, key)]
        if not missing:
            continue
        groups = [missing] if config.timing == "batched" and not config.snapshots else [[r] for r in missing]
        for group in groups:
            rows = execute(config, group)
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
