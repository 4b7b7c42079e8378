"""Building a configuration's kernels ahead of time (`heuriscale warmup`, `hs.engine.warm_up`)."""

from __future__ import annotations

from .arguments import as_algorithm, as_problem
from .auto import check_engine
from .device import resolve_device
from .graph import DEFAULT_CHUNK
from .runner import Runner


def warm_up(problem, algorithm, *, dim: int | None = None, runs: int = 1, device="cuda", dtype="float32",
            engine: str | None = None) -> dict:
    """Build and cache on disk the kernels of this configuration's fast path (`engine`, by
    default the one `auto` would use) by running one chunk of it; returns the engine and the
    seconds its setup took. On the CPU that is the native kernels (compiled on the first call,
    then loaded from Numba's disk cache); where the fast path is eager there is nothing to
    build."""
    problem, device = as_problem(problem, dim), resolve_device(device)
    # its sizes from the dimension (L-SHADE's 18 D), then a schedule of one chunk: its length builds nothing
    algorithm = as_algorithm(algorithm).for_run(problem.dim, None).with_horizon(DEFAULT_CHUNK)
    engine = engine or check_engine("auto", device, problem, algorithm)
    if engine == "eager":
        return {"engine": "eager", "seconds": 0.0}
    runner = Runner(problem, algorithm, runs=runs, device=device, dtype=dtype, seed=0, engine=engine, islands=False)
    runner.step(runner.chunk)
    return {"engine": engine, "seconds": runner.setup_time}
