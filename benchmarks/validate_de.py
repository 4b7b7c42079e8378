"""heuriscale's `de` (DE/rand/1/bin) against scipy.optimize.differential_evolution.

For each (function, D, population, evaluation budget): RUNS runs of each side on the same
problem code (our torch function, float64, evaluated on the CPU), at the same settings:
strategy rand/1/bin (scipy's 'rand1bin'), F = 0.5 (scipy's `mutation`, fixed, no dithering),
CR = 0.9 (`recombination`), the same population size (scipy gets a uniform initial
population of that size through `init`, as ours draws it), one generation evaluated at a time
(`updating='deferred'`, `vectorized=True`), the same number of evaluations (scipy's
`maxiter` = generations after the initial one), no final polishing (`polish=False`) and no
convergence stop (`tol=0, atol=0`: scipy then stops only when every member has the same
value). Out-of-box coordinates: scipy draws them anew in the box; ours does the same with
`repair="random"` (the column compared) and the midpoint repair by default (shown beside).

Reported per case: median and quartiles of the final best f - f*, and the two-sided
Mann-Whitney U p-value (scipy.stats.mannwhitneyu) of ours (random repair) against scipy,
and of ours with the midpoint repair against scipy. Budgets are chosen so that runs end
before every one reaches the optimum (all-zero samples would say nothing).

Left different, on purpose: scipy keeps a trial that is equal or better (`<=`), ours only a
strictly better one, as Storn & Price state it (ties of real-valued f are rare off plateaus).

    PYTHONPATH=src python3 benchmarks/validate_de.py --runs 25 --out benchmarks/results/validate_de
    PYTHONPATH=src python3 benchmarks/validate_de.py --runs 5 --only sphere   # a quick look
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import scipy
import torch
from scipy import stats
from scipy.optimize import differential_evolution

import heuriscale as hs
from provenance import provenance

F, CR = 0.5, 0.9
#: (function, D, population, evaluation budget per run)
CASES = [
    ("sphere", 10, 50, 10_000),
    ("ackley", 10, 50, 10_000),
    ("griewank", 10, 50, 10_000),
    ("rastrigin", 10, 50, 50_000),
    ("rosenbrock", 10, 50, 50_000),
    ("schwefel-2.26", 10, 50, 50_000),
]


def ours(problem, pop: int, budget: int, runs: int, seed: int, repair: str) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    result = hs.minimize(problem, hs.get_algorithm("de", pop_size=pop, F=F, CR=CR, repair=repair), evals=budget,
                         runs=runs, seed=seed, device="cpu", dtype=torch.float64)
    best = np.asarray(result.best_f, dtype=np.float64).reshape(runs)
    return best - problem.optimum_f, time.perf_counter() - start


def reference(problem, pop: int, budget: int, runs: int, seed: int) -> tuple[np.ndarray, float]:
    lower, upper = problem.lower.double().numpy(), problem.upper.double().numpy()

    def f(x: np.ndarray) -> np.ndarray:  # scipy's vectorized call: x (D, S) -> (S,)
        return problem.evaluate(torch.from_numpy(np.ascontiguousarray(x.T))).numpy()

    generations = budget // pop - 1
    rng = np.random.default_rng(seed)
    start, best = time.perf_counter(), []
    for _ in range(runs):
        init = lower + rng.random((pop, problem.dim)) * (upper - lower)
        r = differential_evolution(f, list(zip(lower, upper)), strategy="rand1bin", maxiter=generations,
                                   popsize=pop, init=init, mutation=F, recombination=CR, tol=0, atol=0,
                                   polish=False, updating="deferred", vectorized=True, rng=rng)
        best.append(r.fun)
    return np.asarray(best) - problem.optimum_f, time.perf_counter() - start


def quartiles(v: np.ndarray) -> dict:
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"median": float(med), "q1": float(q1), "q3": float(q3), "values": v.tolist()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--out", default="benchmarks/results/validate_de", help="writes OUT.json and OUT.md")
    args = ap.parse_args()
    torch.set_num_threads(1)

    rows = []
    for name, dim, pop, budget in CASES:
        if args.only and name not in args.only.split(","):
            continue
        problem = hs.get_problem(name, dim=dim).to("cpu", torch.float64)
        a, a_s = ours(problem, pop, budget, args.runs, args.seed, "random")
        m, m_s = ours(problem, pop, budget, args.runs, args.seed, "midpoint")
        b, b_s = reference(problem, pop, budget, args.runs, args.seed)
        row = {"function": name, "dim": dim, "pop": pop, "budget": budget, "runs": args.runs,
               "ours_random": {**quartiles(a), "seconds": a_s}, "ours_midpoint": {**quartiles(m), "seconds": m_s},
               "scipy": {**quartiles(b), "seconds": b_s},
               "p_random": float(stats.mannwhitneyu(a, b).pvalue), "p_midpoint": float(stats.mannwhitneyu(m, b).pvalue)}
        rows.append(row)
        print(f"{name} D={dim} pop={pop} budget={budget}: median ours {np.median(a):.3g} (midpoint {np.median(m):.3g}), "
              f"scipy {np.median(b):.3g}; MW p = {row['p_random']:.3g} (midpoint {row['p_midpoint']:.3g}); "
              f"{a_s:.1f} s / {b_s:.1f} s", flush=True)

    meta = provenance(scipy=scipy.__version__, F=F, CR=CR, threads=1, seed=args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))

    def cell(s: dict) -> str:
        return f"{s['median']:.3g} [{s['q1']:.3g}, {s['q3']:.3g}]"

    lines = ["| function | D | pop | budget | ours, random repair | scipy | Mann-Whitney p | ours, midpoint repair | p (midpoint) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['function']} | {r['dim']} | {r['pop']} | {r['budget']:,} | {cell(r['ours_random'])} | "
                     f"{cell(r['scipy'])} | {r['p_random']:.3g} | {cell(r['ours_midpoint'])} | {r['p_midpoint']:.3g} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
