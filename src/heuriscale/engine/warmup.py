"""Building a configuration's kernels ahead of time (`heuriscale warmup`, `hs.engine.warm_up`)."""

from __future__ import annotations

from .arguments import as_algorithm, as_problem
from .auto import fast_engine
from .device import resolve_device
from .graph import DEFAULT_CHUNK
from .kernels import why_not_fused, why_not_native
from .runner import Runner


def warm_up(problem, algorithm, *, dim: int | None = None, runs: int = 1, device="cuda", dtype="float32",
            engine: str | None = None) -> dict:
    """Build and cache on disk the kernels of this configuration's fast path (`engine`, by
    default the one `auto` would use) by running one chunk of it; returns the engine and the
    seconds its setup took. On the CPU that is the native kernels; on CUDA, for objectives
    evaluated on the host there is nothing to build."""
    problem, device = as_problem(problem, dim), resolve_device(device)
    algorithm = as_algorithm(algorithm).with_horizon(DEFAULT_CHUNK)  # a schedule's length builds nothing
    if device.type == "cpu" and why_not_native(algorithm, problem, device) is None:
        engine = engine or "native"  # compiled on the first call, then loaded from Numba's disk cache
    elif device.type != "cuda" or problem.stochastic:
        return {"engine": "eager", "seconds": 0.0}
    elif problem.host_bound:  # the fused kernels, launched around each host evaluation
        engine = engine or ("fused" if why_not_fused(algorithm, problem, device) is None else None)
        if engine is None:
            return {"engine": "eager", "seconds": 0.0}
    engine = engine or fast_engine(algorithm, problem, device)
    runner = Runner(problem, algorithm, runs=runs, device=device, dtype=dtype, seed=0, engine=engine, islands=False)
    runner.step(runner.chunk)
    return {"engine": engine, "seconds": runner.setup_time}
