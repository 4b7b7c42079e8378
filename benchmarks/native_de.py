"""DE, L-SHADE and jSO on the CPU: native (Numba) against eager (torch) per generation, and
the native kernels' cold build (issue 27).

    PYTHONPATH=src python3 benchmarks/native_de.py speed [--only de,lshade]
    PYTHONPATH=src python3 benchmarks/native_de.py build [--repeats 3] [--only "de default"]
    PYTHONPATH=src python3 benchmarks/native_de.py profile [--only "lshade default"]

speed: the sphere (float32, one run) at pop 100 x D 10 and 1,000 x D 100, on 1 thread and on
all cores; `Runner.step` batches of about 0.4 s after a calibration, the best of 5 batches
per generation (as benchmarks/cpu.py times). L-SHADE and jSO get a budget of 10^6
generations' evaluations, so that their population stays at its first size while timed.

build: `heuriscale run <configuration> --device cpu --engine native` in fresh processes,
cold (empty NUMBA_CACHE_DIR) then warm (the cache it left), `repeats` pairs; "build" is
the cold run's setup_time (kernels compiled) less the warm one's (loaded), which the run's
own time (noisy on a shared machine) does not enter. benchmarks/first_run.py's method and
processes; `profile` is its per-function compile count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numba
import torch

import heuriscale as hs

sys.path.insert(0, str(Path(__file__).parent))
import first_run  # noqa: E402

BUILDS = {  # the command for each, and DE's other strategy and a parallel build
    "de default": "de --problem rastrigin --dim 30 --iters 500",
    "de pbest": "de --problem rastrigin --dim 30 --iters 500 -p strategy=current-to-pbest/1",
    "de 1000 x 100": "de --problem sphere --dim 100 --pop 1000 --iters 20",
    "lshade default": "lshade --problem rastrigin --dim 30 --iters 500",
    "jso default": "jso --problem rastrigin --dim 30 --iters 500",
}
ALGORITHMS = {
    "de": lambda pop: hs.DE(pop_size=pop),
    "de-pbest": lambda pop: hs.DE(pop_size=pop, strategy="current-to-pbest/1"),
    "lshade": lambda pop: hs.LSHADE(pop_size=pop, max_evals=pop * 10**6),
    "jso": lambda pop: hs.JSO(pop_size=pop, max_evals=pop * 10**6),
}
SIZES = ((100, 10), (1000, 100))


def per_generation(algo, dim: int, engine: str, threads: int, target_s: float = 0.4) -> tuple[float, int]:
    """Seconds per generation (best of 5 batches) and the generations per batch."""
    numba.set_num_threads(threads)
    torch.set_num_threads(threads)
    runner = hs.Runner("sphere", algo, dim=dim, runs=1, seed=0, device="cpu", dtype="float32", engine=engine)
    runner.step(3)
    n = 1
    while True:  # calibrate: a batch of at least 50 ms
        started = time.perf_counter()
        runner.step(n)
        took = time.perf_counter() - started
        if took > 0.05 or n > 10_000:
            break
        n *= 4
    n = max(1, int(n * target_s / took))
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        runner.step(n)
        best = min(best, time.perf_counter() - started)
    return best / n, n


def speed(only: list[str] | None) -> None:
    for name, make in ALGORITHMS.items():
        if only and name not in only:
            continue
        for pop, dim in SIZES:
            for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
                (eager, n_e), (native, n_n) = (per_generation(make(pop), dim, e, threads) for e in ("eager", "native"))
                print(f"{name} {pop} x {dim}, {threads} thread(s): eager {eager * 1e6:.1f} us ({n_e} per batch), "
                      f"native {native * 1e6:.1f} us ({n_n} per batch), {eager / native:.1f}x", flush=True)


def build(repeats: int, only: list[str] | None) -> None:
    for name, cmd in BUILDS.items():
        if only and name not in only:
            continue
        builds = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
                cold, warm = first_run.cpu_run(cmd, cache), first_run.cpu_run(cmd, cache)
            if "error" in cold or "error" in warm:
                print(name, "failed:", cold.get("error") or warm.get("error"))
                break
            builds.append(cold["setup"] - warm["setup"])
            print(f"{name}: cold {cold['wall']:.1f} s, warm {warm['wall']:.1f} s (processes); setup cold "
                  f"{cold['setup']:.2f} s, warm {warm['setup']:.2f} s: build {builds[-1]:.2f} s", flush=True)
        if builds:
            print(f"{name}: median build {statistics.median(builds):.1f} s (load {os.getloadavg()[0]:.1f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("speed", "build", "profile"))
    ap.add_argument("--only", default=None, help="comma-separated names (speed: de,de-pbest,lshade,jso; "
                                                 "build/profile: the BUILDS names)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    only = args.only.split(",") if args.only else None
    if args.what == "speed":
        speed(only)
    elif args.what == "build":
        build(args.repeats, only)
    else:
        for name in only or BUILDS:
            first_run.CPU_CONFIGS[name] = BUILDS[name]
            first_run.cpu_profile(name, top=15)


if __name__ == "__main__":
    main()
