"""PRS against paper 000's Tables 2-5: our mean best over runs next to the paper's scores.

    PYTHONPATH=src python3 benchmarks/prs_paper000_scores.py --device cuda --runs 20

Uses the CUDA rows' population sizes and iteration budgets (pop 1024-2048), bounds
Rastrigin / Sphere [-5.12, 5.12], Rosenbrock [-5, 10], Griewank [-600, 600].
"""

from __future__ import annotations

import argparse
import time

import torch
from rich.console import Console
from rich.table import Table

import heuriscale as hs

BOUNDS = {"rastrigin": (-5.12, 5.12), "sphere": (-5.12, 5.12), "rosenbrock": (-5, 10), "griewank": (-600, 600)}
# (function, D, MaxIter, PopSize, paper CUDA score, paper CPU score, paper CUDA runtime s)
ROWS = [
    ("rastrigin", 1, 10, 1024, 0.000137, 0.000282, 0.001864),
    ("rastrigin", 2, 100, 2048, 0.059208, 0.099895, 0.014552),
    ("rastrigin", 3, 8000, 1024, 0.104553, 0.151782, 0.682174),
    ("rastrigin", 4, 12000, 1024, 0.249476, 0.202980, 1.892460),
    ("sphere", 1, 10, 2048, 0.000001, 0.000004, 0.001848),
    ("sphere", 2, 200, 2048, 0.081354, 0.080217, 0.024434),
    ("sphere", 3, 2000, 2048, 0.199241, 0.279868, 0.285832),
    ("sphere", 4, 15000, 1024, 0.023390, 0.012489, 1.729266),
    ("rosenbrock", 1, 10, 1024, 0.000000, 0.000000, 0.002843),
    ("rosenbrock", 2, 1000, 2048, 0.271784, 0.271784, 0.166852),
    ("rosenbrock", 3, 20000, 2048, 0.022650, 0.016273, 1.377080),
    ("rosenbrock", 4, 50000, 2048, 0.015784, 0.010350, 7.018276),
    ("griewank", 1, 10, 2048, 0.009929, 0.007969, 0.002974),
    ("griewank", 2, 1000, 1024, 0.028577, 0.040733, 0.126386),
    ("griewank", 3, 5000, 2048, 0.018956, 0.017556, 0.542837),
    ("griewank", 4, 10000, 2048, 0.019204, 0.015332, 2.521094),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--max-iters", type=int, default=None, help="skip rows with a larger budget")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    table = Table(title=f"PRS vs paper 000 (mean best of {args.runs} runs; paper: avg of 100)")
    for col in ("function", "D", "iters", "pop", "ours", "paper CUDA", "paper CPU", "ours <= CUDA", "our time/run-set s", "paper CUDA s"):
        table.add_column(col, justify="right")
    device = None
    for fn, dim, iters, pop, cuda, cpu, cuda_s in ROWS:
        if args.max_iters is not None and iters > args.max_iters:
            continue
        problem = hs.get_problem(fn, dim=dim, bounds=BOUNDS[fn])
        t0 = time.perf_counter()
        r = hs.minimize(problem, hs.PRS(pop_size=pop), iters=iters, runs=args.runs, seed=args.seed, device=args.device)
        elapsed = time.perf_counter() - t0
        device = f"{r.device} ({r.device_name})"
        ours = float(r.best_f.mean())
        table.add_row(fn, str(dim), str(iters), str(pop), f"{ours:.6f}", f"{cuda:.6f}", f"{cpu:.6f}",
                      "yes" if ours <= cuda else "NO", f"{elapsed:.2f}", f"{cuda_s:.3f}")
    Console(width=160).print(table)
    print(f"device: {device}; torch {torch.__version__}; "
          f"our time is the wall time of all {args.runs} runs batched (eager engine)")


if __name__ == "__main__":
    main()
