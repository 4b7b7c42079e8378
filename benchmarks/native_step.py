"""Seconds per iteration of the native CPU kernels at a few sizes: a quick check that a change
to a kernel's layout (its jobs, issue 30) did not slow its steps.

    PYTHONPATH=src python3 benchmarks/native_step.py [--threads 2] [--only fep,apo]

Each configuration: a Runner (engine "native", seed 0), warmed up by 5 iterations, then the
number of iterations that takes at least 0.2 s, timed 5 times; the best time per iteration
is printed. To compare two trees, run it with each one's `src` first on PYTHONPATH (and a
NUMBA_CACHE_DIR of its own), alternately.
"""

from __future__ import annotations

import argparse
import time

import torch

from heuriscale.algorithms.registry import get_algorithm
from heuriscale.engine import Runner, set_cpu_threads
from heuriscale.problems import get_problem

CONFIGS = {  # name: (algorithm, problem, dim, population, dtype)
    "pso 65,536 x 2 euclidean (paper 001)": ("pso", "euclidean", 2, 65536, "float32"),
    "pso 32 x 2 sphere": ("pso", "sphere", 2, 32, "float64"),
    "prs 100 x 30 rastrigin (its default)": ("prs", "rastrigin", 30, 100, "float32"),
    "prs 1,024 x 30 rastrigin": ("prs", "rastrigin", 30, 1024, "float32"),
    "prs 1,024 x 4 rastrigin (paper 000)": ("prs", "rastrigin", 4, 1024, "float32"),
    "prs 32 x 2 sphere": ("prs", "sphere", 2, 32, "float64"),
    "firefly 100 x 30 rastrigin (its default)": ("firefly", "rastrigin", 30, 100, "float32"),
    "firefly 1,024 x 32 sphere": ("firefly", "sphere", 32, 1024, "float32"),
    "firefly 32 x 2 sphere": ("firefly", "sphere", 2, 32, "float64"),
    "fep 100 x 30 rastrigin": ("fep", "rastrigin", 30, 100, "float32"),
    "fep 6,400 x 32 f5 (paper 004)": ("fep", "fep-f5", None, 6400, "float32"),
    "fep 32 x 2 sphere": ("fep", "sphere", 2, 32, "float64"),
    "apo 100 x 30 rastrigin": ("apo", "rastrigin", 30, 100, "float32"),
    "apo 1,000 x 1,000 bent cigar": ("apo", "bent-cigar", 1000, 1000, "float32"),
    "apo 32 x 2 sphere": ("apo", "sphere", 2, 32, "float64"),
    "lshade 100 x 30 rastrigin": ("lshade", "rastrigin", 30, 100, "float32"),
    "jso 100 x 30 rastrigin": ("jso", "rastrigin", 30, 100, "float32"),
    "lshade 540 x 30 rastrigin (its default)": ("lshade", "rastrigin", 30, 540, "float64"),
    "cmaes 14 x 30 rastrigin (its default)": ("cmaes", "rastrigin", 30, 14, "float32"),
    "cmaes 64 x 100 rastrigin": ("cmaes", "rastrigin", 100, 64, "float64"),
}


def per_iteration(runner: Runner, repeats: int = 5) -> float:
    runner.step(5)
    n = 1
    while True:
        started = time.perf_counter()
        runner.step(n)
        if time.perf_counter() - started > 0.2:
            break
        n *= 2
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        runner.step(n)
        best = min(best, (time.perf_counter() - started) / n)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default=None, help="comma-separated algorithms")
    args = ap.parse_args()
    set_cpu_threads(args.threads)
    only = args.only.split(",") if args.only else None
    for name, (alg, prob, dim, pop, dtype) in CONFIGS.items():
        if only and alg not in only:
            continue
        problem = get_problem(prob) if dim is None else get_problem(prob, dim=dim)
        algorithm = get_algorithm(alg, pop_size=pop).with_horizon(10**6)
        runner = Runner(problem, algorithm, device="cpu", dtype=dtype, engine="native", seed=0)
        with torch.no_grad():
            print(f"{name}: {per_iteration(runner) * 1e6:.1f} us/it ({args.threads} threads)", flush=True)


if __name__ == "__main__":
    main()
