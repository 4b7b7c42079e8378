"""Seconds per iteration on the CPU: heuriscale's native (Numba) and eager (torch) engines
on 1 thread and on all cores, against a plain NumPy PSO loop, pyswarms and mealpy 3.

    PYTHONPATH=src python3 benchmarks/cpu.py --out cpu.json --markdown cpu.md   # everything, < 8 min on 16 cores
    PYTHONPATH=src python3 benchmarks/cpu.py --quick                             # a subset, < 2 min
    PYTHONPATH=src python3 benchmarks/cpu.py --only pso,fep --threads 8

The baselines are optional (benchmarks/requirements-cpu.txt says how to install them, also
without network): a column whose package is missing stays empty and the output says why.
On the device machine, with the wheels carried in .whl/:

    pip install --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=src:/tmp/site python3 benchmarks/cpu.py --out $OUT/cpu.json --markdown $OUT/cpu.md

Rows: the papers' CPU configurations (PSO 001, PRS 000, FEP 004, Firefly 002, APO 003), then
population sizes 32 / 100 / 1,024 / 65,536 at D = 2 on the sphere for every algorithm
(PSO's other sizes are its paper rows, on the euclidean norm). Firefly is O(N^2) per
iteration: its largest size is capped where eager on one thread would take over
MAX_EAGER_S per iteration, extrapolated from its N = 1,024 row (the output says so).

Method, per (row, column): a fresh run set (seed 0), warmed up by a growing number of
iterations that also estimates the time of one; then REPEATS (`--repeats`) timed batches of about
TARGET_S each (at most MAX_ITERS iterations, one batch if they would take more than
SLOW_S) and the best batch's time per iteration is kept. The iterations per batch are in
the JSON and in the second table. heuriscale is timed through `Runner.step`, so each
number includes the engine's own per-iteration work (best-so-far tracking, history).
mealpy is timed inside its own loop: the period between two ends of an epoch (a hook on
`track_optimize_step`), so initialisation is not counted and nothing else is subtracted.
The first-call cost of each native kernel build is measured in subprocesses: once with an
empty NUMBA_CACHE_DIR (compile), once more with the cache that left (load).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))  # run from anywhere, without installing heuriscale

import heuriscale as hs  # noqa: E402

#: Seconds each timed batch should last (heuriscale, NumPy, pyswarms, mealpy alike).
TARGET_S = 0.3
#: Timed batches per (row, column); the fastest one is kept.
REPEATS = 3
#: When REPEATS batches would take longer than this, one batch is timed (slow baselines).
SLOW_S = 6.0
#: Iterations per batch at most (a fast path needs no more to be measured well).
MAX_ITERS = 20_000
#: Firefly's size rows stop where eager on one thread would need more than this per iteration.
MAX_EAGER_S = 2.0
#: mealpy evaluates one point at a time in Python; past this many per epoch it is not run.
MEALPY_MAX_EVALS = 200_000
#: An epoch of mealpy at most this long is timed; a longer one is reported as skipped.
MEALPY_MAX_EPOCH_S = 20.0
SIZES = (32, 100, 1024, 65_536)


# -- what is measured --------------------------------------------------------------------------
@dataclass
class Row:
    key: str
    group: str  # "paper 001" ... or "sizes"
    algorithm: str  # pso, prs, fep, firefly, apo
    label: str
    problem: Callable[[], object]
    make: Callable[[int], object]  # population -> heuriscale algorithm
    pop: int
    dim: int
    objective: str | None  # NumPy objective for the baselines (None: no baseline)
    runs: int = 1
    dtype: str = "float32"
    horizon: int = 1000  # max_iters of algorithms with a schedule (the cost does not depend on it)
    max_iters: int = MAX_ITERS
    kernel: str = ""  # the native kernel, when the algorithm has more than one (default: the algorithm's)
    quick: bool = False
    notes: list[str] = field(default_factory=list)


def _rastrigin_box(dim: int):
    return lambda: hs.get_problem("rastrigin", dim=dim, bounds=(-5.12, 5.12))


def _sphere(dim: int):
    return lambda: hs.get_problem("sphere", dim=dim)


def _synthetic_otsu():
    """Paper 003's Otsu problem (one threshold) on a synthetic two-mode 512 x 512 image, so
    that it needs no scikit-image (the cost of an evaluation does not depend on the image)."""
    from heuriscale.problems import otsu

    rng = np.random.default_rng(0)
    modes = np.where(rng.random((512, 512)) < 0.4, rng.normal(70, 20, (512, 512)), rng.normal(170, 25, (512, 512)))
    image = np.clip(modes, 0, 255).astype(np.uint8)
    loader = otsu.load_image
    otsu.load_image = lambda img, size=None: img  # an 8-bit grey array needs no decoding or resizing
    try:
        return otsu.OtsuThresholding(image, levels=1)
    finally:
        otsu.load_image = loader


def paper_rows() -> list[Row]:
    pso001 = lambda n: hs.get_algorithm("pso", preset="paper001", pop_size=n)  # noqa: E731
    prs000 = lambda n: hs.get_algorithm("prs", preset="paper000", pop_size=n)  # noqa: E731
    fep004 = lambda n: hs.get_algorithm("fep", preset="paper004", pop_size=n)  # noqa: E731
    apo003 = lambda n: hs.get_algorithm("apo", preset="paper003", pop_size=n)  # noqa: E731
    rows = [Row(f"pso-001-{n}", "paper 001", "pso", f"PSO euclidean D=2, w=1 c1=c2=2, pop {n:,}",
                lambda: hs.get_problem("euclidean", dim=2), pso001, n, 2, "euclidean", quick=n in (32, 1024))
            for n in (32, 1024, 65_536)]
    rows += [Row(f"prs-000-d{d}", "paper 000", "prs", f"PRS rastrigin D={d}, pop 1,024", _rastrigin_box(d), prs000,
                 1024, d, None, horizon=12_000, quick=d == 4) for d in (1, 2, 3, 4)]
    rows.append(Row("prs-000-batch", "paper 000", "prs", "PRS rastrigin D=4, pop 1,024, 100 runs batched",
                    _rastrigin_box(4), prs000, 1024, 4, None, runs=100, horizon=12_000))
    rows += [Row(f"fep-004-{mu}", "paper 004", "fep", f"FEP f5 (rastrigin) D=32, q=10, mu {mu:,}",
                 lambda: hs.get_problem("fep-f5"), fep004, mu, 32, "rastrigin", quick=mu == 400)
             for mu in (400, 800, 3200, 6400)]
    rows.append(Row("firefly-002", "paper 002", "firefly", "Firefly rastrigin D=2, N=40, float64",
                    _rastrigin_box(2), lambda n: hs.get_algorithm("firefly", preset="paper002", pop_size=n), 40, 2,
                    "rastrigin", dtype="float64", quick=True))
    rows.append(Row("firefly-002-sequential", "paper 002", "firefly",  # the paper's CPU listing: pair by pair
                    "Firefly rastrigin D=2, N=40, float64, sequential update", _rastrigin_box(2),
                    lambda n: hs.get_algorithm("firefly", preset="paper002", pop_size=n, update="sequential"), 40, 2,
                    "rastrigin", dtype="float64", kernel="firefly-sequential"))
    rows += [
        Row("apo-003-spring", "paper 003", "apo", "APO spring design (D=3), pop 50, float64",
            lambda: hs.get_problem("spring"), apo003, 50, 3, None, dtype="float64"),
        Row("apo-003-otsu", "paper 003", "apo", "APO Otsu, 1 threshold (D=1), pop 100", _synthetic_otsu, apo003,
            100, 1, None, horizon=50),
        Row("apo-003-sphere10", "paper 003", "apo", "APO sphere D=10, pop 100", _sphere(10), apo003, 100, 10, None,
            quick=True),
        Row("apo-003-table2", "paper 003", "apo", "APO bent cigar D=1,000, pop 1,000 (Table 2)",
            lambda: hs.get_problem("bent-cigar", dim=1000, bounds=(-100, 100)), apo003, 1000, 1000, None, max_iters=50),
    ]
    return rows


def size_rows() -> list[Row]:
    """Population sizes at D = 2 on the sphere; PSO's other sizes are its paper 001 rows."""
    makers = {
        "pso": lambda n: hs.PSO(pop_size=n),
        "prs": lambda n: hs.PRS(pop_size=n),
        "fep": lambda n: hs.FEP(pop_size=n),
        "firefly": lambda n: hs.Firefly(pop_size=n),
        "apo": lambda n: hs.APO(pop_size=n),
    }
    baseline = {"pso": "sphere", "fep": "sphere", "firefly": "sphere"}
    rows = []
    for name, make in makers.items():
        for n in (100,) if name == "pso" else SIZES:
            rows.append(Row(f"{name}-size-{n}", "sizes", name, f"{name.upper() if name != 'firefly' else 'Firefly'} "
                            f"sphere D=2, pop {n:,}", _sphere(2), make, n, 2, baseline.get(name)))
    return rows


# -- NumPy objectives for the baselines (one point or a batch of rows: sums over the last axis) --
def np_sphere(x):
    return np.sum(x * x, axis=-1)


def np_euclidean(x):
    return np.sqrt(np.sum(x * x, axis=-1))


def np_rastrigin(x):
    return 10.0 * x.shape[-1] + np.sum(x * x - 10.0 * np.cos(2.0 * np.pi * x), axis=-1)


NUMPY_OBJECTIVES = {"sphere": np_sphere, "euclidean": np_euclidean, "rastrigin": np_rastrigin}


# -- timing ------------------------------------------------------------------------------------
@dataclass
class Timing:
    per_iter: float  # seconds, the best batch
    iterations: int  # per batch
    samples: list[float]  # seconds per iteration of every batch
    setup: float | None = None
    extra: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        return {"per_iter_s": self.per_iter, "iterations_per_batch": self.iterations, "batches": len(self.samples),
                "samples_s": self.samples, "setup_s": self.setup, **self.extra}


def one_line(error: BaseException | str, limit: int = 300) -> str:
    """An error as one short line (Numba's span several), safe inside a Markdown table."""
    text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
    return " ".join(text.split())[:limit].replace("|", "/")


def seconds(run: Callable[[int], object], n: int) -> float:
    started = time.perf_counter()
    run(n)
    return time.perf_counter() - started


def best_per_iteration(run: Callable[[int], object], target_s: float, max_iters: int,
                       before_batch: Callable[[], object] | None = None) -> Timing:
    """Seconds per iteration of `run(n)` (n iterations): warm up while estimating one
    iteration, then REPEATS batches of about target_s each; the best batch counts.
    `before_batch` (untimed) resets what a batch leaves behind (e.g. pyswarms' history)."""
    n, elapsed = 1, seconds(run, 1)  # the first iteration also warms up (allocations, caches)
    while elapsed < target_s / 10 and n < max_iters:
        n = min(max_iters, max(2 * n, int(n * target_s / 10 / max(elapsed, 1e-9))))
        elapsed = seconds(run, n)
    one = elapsed / n
    n = max(1, min(max_iters, round(target_s / one)))
    batches = REPEATS if REPEATS * n * one <= SLOW_S else 1
    samples = []
    for _ in range(batches):
        if before_batch is not None:
            before_batch()
        samples.append(seconds(run, n) / n)
    return Timing(min(samples), n, samples)


# -- heuriscale --------------------------------------------------------------------------------
def set_threads(n: int) -> None:
    """Threads of the native kernels and of torch (eager)."""
    try:
        from heuriscale.engine import set_cpu_threads
    except ImportError:  # no Numba: only torch's threads matter
        torch.set_num_threads(n)
        return
    set_cpu_threads(n)


def make_runner(row: Row, engine: str) -> hs.Runner:
    algorithm = row.make(row.pop).with_horizon(row.horizon)
    return hs.Runner(row.problem(), algorithm, runs=row.runs, device="cpu", dtype=row.dtype, engine=engine, seed=0)


class Unavailable(Exception):
    """A column that cannot be measured here; the message says why."""


def time_heuriscale(row: Row, engine: str, threads: int, target_s: float) -> Timing:
    set_threads(threads)
    try:
        runner = make_runner(row, engine)
    except (ImportError, ValueError, NotImplementedError) as error:  # a kernel not written yet, or refused
        raise Unavailable(one_line(error)) from None
    with torch.no_grad():
        timing = best_per_iteration(runner.step, target_s, row.max_iters)
    timing.setup = runner.setup_time
    return timing


# -- NumPy: the same PSO equations as heuriscale's, in a plain loop ------------------------------
class NumpyPSO:
    """Global-best PSO, one run, in the heuriscale run's dtype: velocity (2) clamped to
    +-vmax, position (3) clamped to the box, personal and global bests replaced when better."""

    def __init__(self, algorithm, problem, dtype: str, objective):
        self.dtype = np.dtype(dtype)
        self.lower, self.upper = (problem.lower.numpy().astype(self.dtype), problem.upper.numpy().astype(self.dtype))
        self.vmax = algorithm.velocity_limit(problem).numpy().astype(self.dtype)
        self.w, self.c1, self.c2, self.f = algorithm.w, algorithm.c1, algorithm.c2, objective
        self.rng = np.random.default_rng(0)
        shape = (algorithm.pop_size, problem.dim)
        self.x = self.lower + (self.upper - self.lower) * self.rng.random(shape, dtype=self.dtype)
        self.v = (self.lower - self.x) + (self.upper - self.lower) * self.rng.random(shape, dtype=self.dtype)
        self.pbest_x, self.pbest_f = self.x.copy(), self.f(self.x)
        self.gbest_x = self.pbest_x[self.pbest_f.argmin()]

    def run(self, iters: int) -> None:
        x, v, pbest_x, pbest_f, gbest_x = self.x, self.v, self.pbest_x, self.pbest_f, self.gbest_x
        for _ in range(iters):
            r1, r2 = self.rng.random(x.shape, dtype=self.dtype), self.rng.random(x.shape, dtype=self.dtype)
            v = np.clip(self.w * v + self.c1 * r1 * (pbest_x - x) + self.c2 * r2 * (gbest_x - x), -self.vmax, self.vmax)
            x = np.clip(x + v, self.lower, self.upper)
            f = self.f(x)
            better = f < pbest_f
            pbest_x[better], pbest_f[better] = x[better], f[better]
            gbest_x = pbest_x[pbest_f.argmin()]
        self.x, self.v, self.gbest_x = x, v, gbest_x


def time_numpy_pso(row: Row, target_s: float) -> Timing:
    problem = row.problem()
    pso = NumpyPSO(row.make(row.pop), problem, row.dtype, NUMPY_OBJECTIVES[row.objective])
    return best_per_iteration(pso.run, target_s, row.max_iters)


# -- pyswarms -----------------------------------------------------------------------------------
def time_pyswarms(row: Row, target_s: float) -> Timing:
    try:
        from pyswarms.single import GlobalBestPSO
    except ImportError:
        raise Unavailable("pyswarms is not installed (benchmarks/requirements-cpu.txt)") from None
    problem, algorithm = row.problem(), row.make(row.pop)
    lower, upper = problem.lower.double().numpy(), problem.upper.double().numpy()
    vmax = algorithm.velocity_limit(problem).double().numpy()
    # same w, c1, c2; "nearest" clamps positions to the box and velocity_clamp clamps v, as (2) and (3) do
    # (its Reporter opens `report.log` in the working directory: a temporary one takes it)
    with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
        optimizer = GlobalBestPSO(row.pop, row.dim, {"w": algorithm.w, "c1": algorithm.c1, "c2": algorithm.c2},
                                  bounds=(lower, upper), bh_strategy="nearest", velocity_clamp=(-vmax.min(), vmax.min()))
    # Its star topology builds an N x N neighbour index on the first call (32 GiB at N = 65,536)
    # that computing the global best never reads: a 1 x N one stands in for it.
    optimizer.top.neighbor_idx = np.arange(row.pop)[None]
    objective = NUMPY_OBJECTIVES[row.objective]
    run = lambda n: optimizer.optimize(objective, iters=n, verbose=False)  # noqa: E731

    def forget_history():  # pyswarms keeps every iteration's positions: drop them between batches
        for name in ("cost_history", "mean_pbest_history", "mean_neighbor_history", "pos_history", "velocity_history"):
            getattr(optimizer, name).clear()

    timing = best_per_iteration(run, target_s, row.max_iters, before_batch=forget_history)
    timing.extra["note"] = ("float64; its optimize() restarts the personal bests at each call (once per batch); "
                            "the star topology's unused N x N neighbour index is not built")
    return timing


# -- mealpy 3 --------------------------------------------------------------------------------------
class _Enough(Exception):
    """Raised from the epoch hook to end mealpy's loop once the batches are timed."""


def mealpy_model(row: Row):
    """The mealpy optimizer closest to the row's algorithm, at the same population, and how
    many points it evaluates per epoch."""
    from mealpy import EP, FFA, PSO

    algorithm, n = row.make(row.pop), row.pop
    if row.algorithm == "pso":
        model, evals = PSO.OriginalPSO(epoch=100_000, pop_size=100, c1=algorithm.c1, c2=algorithm.c2, w=0.5), n
        model.w = algorithm.w  # mealpy's validator takes w in (0, 1) only; w = 1 changes nothing in the loop's cost
    elif row.algorithm == "fep":
        model, evals = EP.OriginalEP(epoch=100_000, pop_size=100, bout_size=0.5), n
        model.bout_size = (algorithm.q + 0.5) / n  # mealpy draws int(bout_size x pop) opponents: q of them
    elif row.algorithm == "firefly":
        model = FFA.OriginalFFA(epoch=100_000, pop_size=100, beta_base=algorithm.beta0, alpha=algorithm.alpha)
        model.gamma, evals = algorithm.gamma, n * n  # each firefly's moves, topped up with random points to N
    else:
        raise Unavailable(f"mealpy 3 has no {row.algorithm.upper()}")
    model.pop_size = n  # its validator stops at 10,000; nothing in the loop depends on that bound
    return model, evals


def time_mealpy(row: Row, target_s: float) -> Timing:
    try:
        from mealpy import FloatVar, Problem
    except ImportError:
        raise Unavailable("mealpy 3 is not installed (benchmarks/requirements-cpu.txt)") from None
    if row.objective is None:
        raise Unavailable(f"mealpy 3 has no {row.algorithm.upper()}")
    model, evals = mealpy_model(row)
    if evals > MEALPY_MAX_EVALS:
        raise Unavailable(f"skipped: mealpy's epoch evaluates {evals:,} points one at a time")
    problem = row.problem()
    objective = NUMPY_OBJECTIVES[row.objective]
    task = Problem(bounds=FloatVar(lb=problem.lower.double().numpy(), ub=problem.upper.double().numpy()),
                   minmax="min", obj_func=lambda x: float(objective(x)), log_to=None)
    ends, counts = [], []  # perf_counter and evaluations at the end of each epoch
    plan = {}
    record = model.track_optimize_step

    def epoch_done(pop=None, epoch=None, runtime=None):
        record(pop, epoch, runtime)  # mealpy's own bookkeeping stays in the timed loop
        ends.append(time.perf_counter())
        counts.append(model.nfe_counter)
        if len(ends) == 2 and not plan:  # epoch 1 was the warm-up; epoch 2 estimates one
            one = ends[1] - ends[0]
            if one > MEALPY_MAX_EPOCH_S:
                plan["too_slow"] = one
                raise _Enough
            plan["n"] = n = max(1, min(row.max_iters, round(target_s / one)))
            plan["batches"] = REPEATS if REPEATS * n * one <= SLOW_S else 1
            plan["first"] = 1 if plan["batches"] > 1 or n > 1 else 0  # a slow epoch 2 is the one sample
        if plan and len(ends) >= 1 + plan["first"] + plan["n"] * plan["batches"]:
            raise _Enough

    model.track_optimize_step = epoch_done
    with contextlib.suppress(_Enough):
        model.solve(task, seed=0)
    if "too_slow" in plan:
        raise Unavailable(f"skipped: one epoch took {plan['too_slow']:.1f} s")
    n, first = plan["n"], plan["first"]  # batches start after the estimating epoch, unless it is the sample
    samples = [(ends[first + (b + 1) * n] - ends[first + b * n]) / n for b in range(plan["batches"])]
    per_epoch = (counts[-1] - counts[0]) / (len(counts) - 1)
    return Timing(min(samples), n, samples, extra={"class": type(model).__name__, "evals_per_epoch": per_epoch})


# -- first-call cost of the native kernels (subprocesses) ------------------------------------------
def kernel_of(row: Row) -> str:
    return row.kernel or row.algorithm


def build_of(row: Row, threads: int) -> str:
    """Which build of the kernel a native run set calls (the rule of NativeIteration.kernel)."""
    from heuriscale.engine.kernels.cpu_common import PARALLEL_MIN

    return "parallel" if threads > 1 and row.runs * row.pop * max(row.dim, 4) >= PARALLEL_MIN else "serial"


def first_call_probe(request: str) -> None:
    """In a fresh process: make the row's native run set and print its setup (compile or load)."""
    spec = json.loads(request)
    row = dataclasses.replace(rows_by_key()[spec["key"]], pop=spec["pop"])
    started = time.perf_counter()
    set_threads(spec["threads"])
    try:
        runner = make_runner(row, "native")
    except Exception as error:  # noqa: BLE001 - reported, whatever it is
        print(json.dumps({"error": one_line(error)}))
        return
    print(json.dumps({"setup_s": runner.setup_time, "runner_s": time.perf_counter() - started}))


def probe(row: Row, threads: int, cache: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    request = json.dumps({"key": row.key, "pop": row.pop, "threads": threads})
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--first-call-probe", request], env=env, capture_output=True,
                          text=True, timeout=600)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": one_line((proc.stderr.strip().splitlines() or ["no output"])[-1])}
    return {**json.loads(lines[-1]), "process_s": time.perf_counter() - started}


def first_call(row: Row, threads: int) -> dict:
    """Compile from an empty cache, then load from the cache that compile left."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        cold = probe(row, threads, cache)
        warm = probe(row, threads, cache) if "error" not in cold else {}
    entry = {"cold": cold, "warm": warm}
    if warm.get("setup_s", 0) > 0.5 * cold.get("setup_s", math.inf):
        # a load that costs what a compile does was one: the cache was missed (a kernel Numba
        # cannot cache, or its source changed between the two processes)
        entry["cache_missed"] = True
    return entry


# -- the run ----------------------------------------------------------------------------------------
COLUMNS = ("native-1", "native-all", "eager-1", "eager-all", "numpy", "pyswarms", "mealpy")
BASELINES = ("numpy", "pyswarms", "mealpy")


def measure_row(row: Row, all_threads: int, target_s: float) -> dict:
    results = {}
    for column in COLUMNS:
        try:
            if column.startswith(("native", "eager")):
                engine, which = column.split("-")
                timing = time_heuriscale(row, engine, 1 if which == "1" else all_threads, target_s)
            elif column == "numpy":
                if row.algorithm != "pso":
                    continue
                timing = time_numpy_pso(row, target_s)
            elif column == "pyswarms":
                if row.algorithm != "pso":
                    continue
                timing = time_pyswarms(row, target_s)
            else:
                if row.algorithm not in ("pso", "fep", "firefly"):
                    continue
                timing = time_mealpy(row, target_s)
            results[column] = timing.as_json()
        except Unavailable as why:
            results[column] = {"unavailable": str(why)}
        except Exception as error:  # noqa: BLE001 - one broken column must not end the run
            results[column] = {"error": one_line(error)}
    return results


def cap_quadratic(row: Row, measured: dict[str, dict]) -> None:
    """Firefly's largest sizes: the largest power of two whose eager iteration on one thread
    stays under MAX_EAGER_S, extrapolated as N^2 from the N = 1,024 row."""
    if row.algorithm != "firefly" or row.group != "sizes" or row.pop <= 1024:
        return
    ref = measured.get("firefly-size-1024", {}).get("eager-1", {}).get("per_iter_s") or eager_firefly_1024(row)
    predicted = ref * (row.pop / 1024) ** 2
    if predicted <= MAX_EAGER_S:
        return
    capped = 1024
    while ref * (2 * capped / 1024) ** 2 <= MAX_EAGER_S and 2 * capped < row.pop:
        capped *= 2
    row.notes.append(f"capped from pop {row.pop:,} to {capped:,}: Firefly is O(N^2) per iteration and eager on one "
                     f"thread would take about {predicted:.0f} s per iteration at {row.pop:,}")
    row.label = row.label.replace(f"pop {row.pop:,}", f"pop {capped:,} (capped)")
    row.pop = capped


def eager_firefly_1024(row: Row) -> float:
    """Seconds of one eager iteration on one thread at N = 1,024 (when that row was not run)."""
    set_threads(1)
    runner = make_runner(dataclasses.replace(row, pop=1024), "eager")
    runner.step(1)
    return seconds(runner.step, 2) / 2


def rows_by_key() -> dict[str, Row]:
    return {row.key: row for row in paper_rows() + size_rows()}


def select_rows(only: str | None, quick: bool) -> list[Row]:
    rows = list(rows_by_key().values())
    if quick:
        rows = [r for r in rows if r.quick]
    if only:
        wanted = [w.strip() for w in only.split(",") if w.strip()]
        rows = [r for r in rows if r.algorithm in wanted or any(r.key.startswith(w) for w in wanted)]
    return rows


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")),
                platform.processor())


def machine() -> dict:
    def version(name):
        try:
            from importlib.metadata import version as v

            return v(name)
        except Exception:  # noqa: BLE001
            return None

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                                timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    try:
        import numba
        from llvmlite import binding

        numba_threads = numba.config.NUMBA_NUM_THREADS
        # what Numba compiles for: a VM that hides its CPU model may get generic code
        target = numba.config.CPU_NAME or binding.get_host_cpu_name()
        vector = [f for f in ("avx2", "avx512f", "fma") if f"+{f}" in (numba.config.CPU_FEATURES or
                                                                        binding.get_host_cpu_features().flatten())]
    except ImportError:
        numba_threads, target, vector = None, None, []
    now = datetime.datetime.now(datetime.timezone.utc)
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)),
            "numba_max_threads": numba_threads, "python": platform.python_version(), "torch": torch.__version__,
            "numba": version("numba"), "numpy": np.__version__, "pyswarms": version("pyswarms"),
            "mealpy": version("mealpy"), "date": now.isoformat(timespec="seconds"),
            "commit": commit, "heuriscale": hs.__version__,
            "numba_target": f"{target} ({', '.join(vector) or 'no AVX2'})" if target else None}


# -- output ----------------------------------------------------------------------------------------
def fmt_time(s: float | None) -> str:
    if s is None:
        return ""
    if s >= 1.0:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"


def cell(result: dict | None) -> str:
    if result is None:
        return ""
    if "per_iter_s" in result:
        return fmt_time(result["per_iter_s"])
    if "error" in result:
        return "error"
    text = result["unavailable"]
    if "not installed" in text:
        return "not installed"
    return "skipped" if text.startswith("skipped") else "n/a"


def ratio(results: dict, slow: str, fast: str) -> str:
    a, b = results.get(slow, {}).get("per_iter_s"), results.get(fast, {}).get("per_iter_s")
    if not (a and b):
        return ""
    return f"{a / b:,.0f}x" if a / b >= 100 else f"{a / b:.3g}x"


def first_call_cell(entry: dict | None) -> str:
    if not entry:
        return ""
    cold, warm = entry.get("cold", {}), entry.get("warm", {})
    if "error" in cold:
        return "n/a"
    return f"{cold['setup_s']:.2f} / {warm.get('setup_s', math.nan):.2f} s"


def table_rows(report: dict) -> tuple[list[str], list[list[str]]]:
    n = report["settings"]["threads_all"]
    header = ["configuration", "native 1T", f"native {n}T", "eager 1T", f"eager {n}T", "NumPy", "pyswarms", "mealpy",
              "eager/native 1T", f"eager/native {n}T", "NumPy/native", "pyswarms/native", "mealpy/native",
              f"first call, {n}T build: compile / load"]
    body = []
    for row in report["rows"]:
        r = row["results"]
        body.append([row["label"], *(cell(r.get(c)) for c in COLUMNS),
                     ratio(r, "eager-1", "native-1"), ratio(r, "eager-all", "native-all"),
                     *(ratio(r, b, "native-1") for b in BASELINES), first_call_cell(row.get("first_call"))])
    return header, body


def iteration_rows(report: dict) -> tuple[list[str], list[list[str]]]:
    n = report["settings"]["threads_all"]
    header = ["configuration", "native 1T", f"native {n}T", "eager 1T", f"eager {n}T", "NumPy", "pyswarms", "mealpy"]
    body = []
    for row in report["rows"]:
        cells = []
        for c in COLUMNS:
            res = row["results"].get(c, {})
            cells.append(f"{res['batches']} x {res['iterations_per_batch']:,}" if "per_iter_s" in res else "")
        body.append([row["label"], *cells])
    return header, body


def notes(report: dict) -> list[str]:
    out = [f"{e['algorithm']} {e['dtype']} {e['build']} build: loading from the warm cache took "
           f"{e['warm']['setup_s']:.1f} s (compile: {e['cold']['setup_s']:.1f} s), so it compiled again: the cache "
           "was missed" for e in report["first_call"] if e.get("cache_missed")]
    out += [f"{count} x {name} at {where} (printed once)" for (name, where), count in report["warnings"].items()]
    for row in report["rows"]:
        for note in row["notes"]:
            out.append(f"{row['label']}: {note}")
        for column, res in row["results"].items():
            if "error" in res or "unavailable" in res:
                out.append(f"{row['label']}, {column}: {res.get('error') or res.get('unavailable')}")
    return out


def markdown(report: dict) -> str:
    m, s = report["machine"], report["settings"]

    def table(header, body):
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return "\n".join(lines)

    parts = [
        f"- Machine: {m['cpu']}, {m['usable_cores']} usable cores; Python {m['python']}, torch {m['torch']}, "
        f"Numba {m['numba']} (compiling for {m.get('numba_target') or '?'}), NumPy {m['numpy']}, "
        f"pyswarms {m['pyswarms'] or '-'}, mealpy {m['mealpy'] or '-'}.",
        f"- Date: {m['date']}. Code: commit `{m['commit'] or 'unknown'}`. Command: `{s['command']}` "
        f"({s['wall_s']:.0f} s).",
        f"- Seconds per iteration, best of up to {s['repeats']} batches of about {s['target_s']:.2g} s each after a warm-up "
        "(iterations per batch: second table). `1T` = one thread, "
        f"`{s['threads_all']}T` = all cores (Numba and torch threads). Speed-ups against NumPy, pyswarms and mealpy "
        "divide by native on one thread (the baselines run on one core); `first call` is the native kernel build "
        "that the all-cores column runs: compile from an empty Numba cache / load from the warm cache "
        "(seconds, in a fresh process).",
        "",
        table(*table_rows(report)),
        "",
        "Iterations timed (batches x iterations per batch):",
        "",
        table(*iteration_rows(report)),
    ]
    if report["first_call"]:
        parts += ["", "First call of each native kernel build (fresh process; compile = empty NUMBA_CACHE_DIR, load = "
                  "the cache it left):", "",
                  table(["algorithm", "dtype", "build", "compile", "load", "configuration"],
                        [[e["algorithm"], e["dtype"], e["build"], fmt_cold(e, "cold"), fmt_cold(e, "warm"), e["row"]]
                         for e in report["first_call"]])]
    parts += ["", "Notes:", ""] + [f"- {one_line(line, 2000)}" for line in report["method_notes"] + notes(report)]
    return "\n".join(parts) + "\n"


def fmt_cold(entry: dict, which: str) -> str:
    res = entry[which]
    if "error" in res:
        return "n/a: " + one_line(res["error"], 80)
    return f"{res['setup_s']:.2f} s" if "setup_s" in res else ""


def print_report(report: dict) -> None:
    header, body = table_rows(report)
    iters_header, iters_body = iteration_rows(report)
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(markdown(report))
        return
    console = Console(width=max(200, Console().width))
    for title, (h, b) in (("seconds per iteration", (header, body)), ("iterations timed", (iters_header, iters_body))):
        table = Table(title=title)
        for i, name in enumerate(h):
            table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
        for cells in b:
            table.add_row(*cells)
        console.print(table)
    for line in report["method_notes"] + notes(report):
        console.print(f"- {line}", highlight=False)


METHOD_NOTES = [
    "heuriscale: `Runner.step` on a fresh run set (seed 0, float32 unless the row says float64), so each time "
    "includes the engine's best-so-far and history bookkeeping; native runs many iterations per kernel call.",
    "NumPy: the same PSO equations (velocity clamped to +-vmax, position clamped to the box, personal and global "
    "bests) in a plain vectorised loop, one run, in the row's dtype.",
    "pyswarms: `GlobalBestPSO(...).optimize(f, iters=n, verbose=False)` with the same w, c1, c2, velocity clamp and "
    "`bh_strategy='nearest'` (clamp to the box), float64; its history lists are emptied between batches (untimed).",
    "mealpy 3: timed inside its own loop (period between two epoch ends, `log_to=None`), so its per-epoch "
    "bookkeeping (global best update and sort, history, population diversity) is included and its initialisation "
    "is not. PSO: `PSO.OriginalPSO` (w, c1, c2 as the row; its own vmax = half the box, out-of-box coordinates "
    "re-drawn, a particle moves only when better). FEP: `EP.OriginalEP` (classical EP: Gaussian mutation; mealpy has "
    "no Cauchy-mutation FEP, and `LevyEP` re-draws extra points each generation) with q opponents "
    "(bout_size = q / mu). Firefly: `FFA.OriginalFFA` (beta0, alpha, gamma as the row), a different variant: it "
    "evaluates every move plus random points up to N per firefly, N^2 evaluations per epoch (heuriscale: N). "
    "PSO and EP evaluate N points per epoch, as heuriscale does. mealpy 3 has no PRS and no APO. Validator limits "
    "(w < 1, gamma < 1, pop <= 10,000) are bypassed by setting the attributes after construction.",
    f"mealpy is not run where an epoch evaluates more than {MEALPY_MAX_EVALS:,} points (one at a time in Python).",
]


def main() -> None:
    global REPEATS  # --repeats sets it for every timing function of this script
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a subset of the rows, shorter batches")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    parser.add_argument("--markdown", type=Path, help="Markdown file to write (for docs/benchmarks.md)")
    parser.add_argument("--threads", type=int, default=None, help="threads of the 'all cores' columns (default: all)")
    parser.add_argument("--only", help="comma-separated algorithms or row-key prefixes (pso,prs,fep,firefly,apo)")
    parser.add_argument("--no-first-call", action="store_true", help="skip the compile/load subprocesses")
    parser.add_argument("--repeats", type=int, default=REPEATS,
                        help=f"timed batches per cell, the best kept (default {REPEATS}; more on a noisy machine)")
    parser.add_argument("--first-call-probe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_call_probe:
        return first_call_probe(args.first_call_probe)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    REPEATS = args.repeats

    warned = show_each_warning_once()
    started = time.perf_counter()
    host = machine()
    all_threads = args.threads or host["numba_max_threads"] or os.cpu_count()
    target_s = TARGET_S / 3 if args.quick else TARGET_S
    rows = select_rows(args.only, args.quick)
    report = {"machine": host, "rows": [], "first_call": [], "method_notes": METHOD_NOTES, "warnings": {},
              "settings": {"threads_all": all_threads, "target_s": target_s, "repeats": REPEATS, "quick": args.quick,
                           "command": " ".join(["python3", "benchmarks/cpu.py", *sys.argv[1:]])}}
    measured = {}
    for row in rows:
        cap_quadratic(row, measured)
        t0 = time.perf_counter()
        measured[row.key] = results = measure_row(row, all_threads, target_s)
        report["rows"].append({"key": row.key, "group": row.group, "algorithm": row.algorithm, "label": row.label,
                               "pop": row.pop, "dim": row.dim, "runs": row.runs, "dtype": row.dtype,
                               "notes": row.notes, "results": results})
        print(f"[{time.perf_counter() - started:5.0f} s] {row.label}: " + ", ".join(
            f"{c} {cell(results[c])}" for c in COLUMNS if c in results) + f" ({time.perf_counter() - t0:.1f} s)",
            flush=True)
    if not args.no_first_call:
        measure_first_calls(rows, report, all_threads, started, only_first=args.quick)
    report["settings"]["wall_s"] = time.perf_counter() - started
    report["warnings"] = warned
    print_report(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        counted = {" at ".join(key): n for key, n in warned.items()}
        args.out.write_text(json.dumps({**report, "warnings": counted}, indent=1))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown(report))


def show_each_warning_once() -> Counter:
    """Print the first warning of each (category, source line) and count the rest: Numba's
    pedantic IR warnings repeat once per inlined variable and would bury the progress lines."""
    seen = Counter()
    show = warnings.showwarning

    def first_only(message, category, filename, lineno, file=None, line=None):
        key = (category.__name__, f"{Path(filename).name}:{lineno}")
        seen[key] += 1
        if seen[key] == 1:
            show(message, category, filename, lineno, file, line)

    warnings.showwarning = first_only
    return seen


def measure_first_calls(rows: list[Row], report: dict, all_threads: int, started: float,
                        only_first: bool = False) -> None:
    """One compile + load measurement per (kernel, dtype, build) that the rows use on all
    cores and on one thread (`only_first`, for --quick: the first row's all-cores build alone,
    a compile takes 5-60 s). On big machines a few run at once (each compiles on one thread)."""
    wanted = {}
    for row in rows[:1] if only_first else rows:
        for threads in (all_threads,) if only_first else (all_threads, 1):
            wanted.setdefault((kernel_of(row), row.dtype, build_of(row, threads)), (row, threads))
    jobs = max(1, min(len(wanted), (os.cpu_count() or 1) // 4))
    with ThreadPoolExecutor(jobs) as pool:
        done = dict(zip(wanted, pool.map(lambda rt: first_call(*rt), wanted.values()), strict=True))
    for (algorithm, dtype, build), entry in done.items():
        row, _ = wanted[(algorithm, dtype, build)]
        report["first_call"].append({"algorithm": algorithm, "dtype": dtype, "build": build, "row": row.label,
                                     "concurrent_processes": jobs, **entry})
    for row_report, row in zip(report["rows"], rows, strict=True):
        row_report["first_call"] = done.get((kernel_of(row), row.dtype, build_of(row, all_threads)))
    print(f"[{time.perf_counter() - started:5.0f} s] first calls: {len(done)} kernel builds, {jobs} at a time",
          flush=True)
    if jobs > 1:
        report["method_notes"] = report["method_notes"] + [
            f"First-call compiles ran {jobs} processes at a time (each compiles on one thread)."]


if __name__ == "__main__":
    main()
