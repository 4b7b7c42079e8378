"""Nanoseconds per point of the CEC functions on one thread: computed inside the native CPU
kernels (`cpu_objectives.block_values`, as PSO's kernel calls it: a run's rows as one block)
against the problem's own `evaluate` on the whole batch in torch (what the engine runs between
two kernel calls).

    PYTHONPATH=src python3 benchmarks/cec_points.py [--runs 30] [--pop 100] [--dims 10,20,30] \
        [--functions cec2022-f1,cec2022-f4,...] [--rounds 5] [--out FILE.json]

A batch is runs x pop points of the box (float64, a fixed seed); each round times both ways
on the same batch, one after the other (the order alternating between rounds), each the best
of a few repeats of the whole batch; the table gives the median of the rounds' ns per point.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from threads import commit, machine  # noqa: E402 - benchmarks/threads.py: the machine's facts

import heuriscale as hs  # noqa: E402
from heuriscale.engine import set_cpu_threads  # noqa: E402
from heuriscale.engine.kernels.cpu_objectives import block_values, inline_objective  # noqa: E402

FUNCTIONS = "cec2022-f1,cec2022-f4,cec2022-f6,cec2022-f10,cec2017-f1,cec2017-f13,cec2017-f22"


@njit
def _inline(fid, fdata, x, dim, vals, repeats):
    """Every run's rows as one block (pop <= BLOCK_ROWS), `repeats` times."""
    no_f = np.empty(0)
    for _ in range(repeats):
        for run in range(x.shape[0]):
            block_values(fid, fdata, x[run], dim, no_f, 0, vals)


def _best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def measure(name: str, dim: int, runs: int, pop: int, rounds: int) -> dict:
    problem = hs.get_problem(name, dim=dim).to("cpu", torch.float64)
    g = torch.Generator().manual_seed(0)
    x = problem.lower + (problem.upper - problem.lower) * torch.rand(runs, pop, dim, generator=g, dtype=torch.float64)
    fid, fdata = inline_objective(problem)
    flat = np.ascontiguousarray(x.reshape(runs, pop * dim).numpy())
    vals = np.empty(pop)
    inner_repeats = max(1, 20000 // (runs * pop))  # about 20,000 points a timing
    by_torch = lambda: [problem.evaluate(x) for _ in range(inner_repeats)]  # noqa: E731
    inline = lambda: _inline(fid, fdata, flat, dim, vals, inner_repeats)  # noqa: E731
    inline(), by_torch()  # built and warm
    points = runs * pop * inner_repeats
    ns = {"torch": [], "inline": []}
    for r in range(rounds):
        order = ("torch", "inline") if r % 2 == 0 else ("inline", "torch")
        for way in order:
            ns[way].append(_best_of(by_torch if way == "torch" else inline, 3) / points * 1e9)
    return {"problem": name, "dim": dim, "fid": fid, "points": runs * pop,
            "ns_per_point": {k: statistics.median(v) for k, v in ns.items()}, "rounds": ns}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--pop", type=int, default=100)
    ap.add_argument("--dims", default="10,20,30")
    ap.add_argument("--functions", default=FUNCTIONS)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--commit", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    set_cpu_threads(1)
    torch.set_num_threads(1)
    rows = []
    print(f"{'problem':<14} {'D':>3} {'torch ns':>9} {'inline ns':>9} {'inline/torch':>12}")
    for dim in (int(d) for d in args.dims.split(",")):
        for name in args.functions.split(","):
            try:
                hs.get_problem(name, dim=dim)
            except ValueError as e:  # CEC 2017's hybrids and compositions: D = 10, 30, 50, 100
                print(f"{name:<14} {dim:>3} skipped: {e}")
                continue
            row = measure(name, dim, args.runs, args.pop, args.rounds)
            t, i = row["ns_per_point"]["torch"], row["ns_per_point"]["inline"]
            print(f"{name:<14} {dim:>3} {t:>9.0f} {i:>9.0f} {i / t:>12.2f}", flush=True)
            rows.append(row)
    if args.out:
        report = {"what": __doc__.splitlines()[0], "machine": machine(), "commit": args.commit or commit(),
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "command": " ".join(["benchmarks/cec_points.py", *sys.argv[1:]]), "rows": rows}
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
