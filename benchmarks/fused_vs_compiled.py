"""Do the fused kernels optimise as well as the reference step at the benchmark's sizes?

For each configuration of `benchmarks/speed.py` that has a fused iteration, run the same
batch of independent runs with the fused engine and with the compiled step (inductor's own
random streams; the tests show it matches eager in distribution) and compare the final best
values: medians, means and a two-sided Mann-Whitney U test. The tests check one fused step
against the eager step exactly, at small sizes; this checks whole runs at the papers' sizes.

    PYTHONPATH=src python3 benchmarks/fused_vs_compiled.py [--runs 20]

Firefly at other sizes and problems (`firefly-*`, N = 4,096) is for the fused kernels' check
against eager (`--reference eager`); `--json` keeps the final best values, and `--against`
takes the reference's from such a file (another tree's fused kernels against the same runs).
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from scipy import stats

import heuriscale as hs

CONFIGS = {  # name: (problem, algorithm, iterations)
    "pso-paper": (lambda: hs.get_problem("euclidean", dim=2),
                  lambda: hs.get_algorithm("pso", preset="paper001", pop_size=65_536), 100_000),
    "prs-paper": (lambda: hs.get_problem("rastrigin", dim=4, bounds=(-5.12, 5.12)), lambda: hs.PRS(pop_size=1024),
                  12_000),
    "fep-paper": (lambda: hs.get_problem("fep-f5"), lambda: hs.FEP(pop_size=6400), 2000),
    "firefly": (lambda: hs.get_problem("sphere", dim=32), lambda: hs.Firefly(pop_size=16_384, tile=256), 50),
    # (eager takes the attractors 256 at a time: runs batch, and the default tile shrinks with them)
    "firefly-rastrigin": (lambda: hs.get_problem("rastrigin", dim=32), lambda: hs.Firefly(pop_size=4096, tile=256), 50),
    "firefly-rosenbrock": (lambda: hs.get_problem("rosenbrock", dim=32), lambda: hs.Firefly(pop_size=4096, tile=256),
                           50),
    "apo-paper": (lambda: hs.get_problem("bent-cigar", dim=1000, bounds=(-100, 100)), lambda: hs.APO(pop_size=10_000),
                  1000),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", default=None, help="comma-separated config names")
    ap.add_argument("--reference", default="compiled", choices=["compiled", "eager"],
                    help="the reference engine (eager: no compilation, all runs of Firefly too)")
    ap.add_argument("--json", default=None, help="write the final best values here, by config and engine")
    ap.add_argument("--against", default=None, help="the reference's values from this --json file (not run)")
    args = ap.parse_args()
    saved = {}
    if args.against:
        with open(args.against) as given:
            saved = json.load(given)
    print(f"torch {torch.__version__}, GPU {torch.cuda.get_device_name()}, {args.runs} runs per engine")
    for name, (problem, algorithm, iters) in CONFIGS.items():
        if args.only and name not in args.only.split(","):
            continue
        # 16,384^2 pairs per Firefly run; 10,000 x 1,000 per APO run (the compiled step: 2.6 s each)
        runs = {"firefly": min(args.runs, 5), "firefly-rastrigin": min(args.runs, 5), "firefly-rosenbrock":
                min(args.runs, 5), "apo-paper": min(args.runs, 10)}.get(name, args.runs)
        runs = args.runs if args.reference == "eager" else runs
        best = {}
        if name in saved:
            best[args.reference] = torch.tensor(saved[name][args.reference])
        for engine, seed in (("fused", 1), (args.reference, 2)):
            if engine in best:
                continue
            started = time.perf_counter()
            r = hs.minimize(problem(), algorithm(), iters=iters, runs=runs, seed=seed, device="cuda", engine=engine)
            best[engine] = r.best_f
            print(f"{name:10s} {engine:8s} median {float(r.best_f.median()):.4g}  mean {float(r.best_f.mean()):.4g}  "
                  f"min {float(r.best_f.min()):.4g}  max {float(r.best_f.max()):.4g}  ({r.extra['engine']}, "
                  f"{time.perf_counter() - started:.1f} s)", flush=True)
        p = stats.mannwhitneyu(best["fused"].numpy(), best[args.reference].numpy()).pvalue
        print(f"{name:10s} Mann-Whitney U, fused vs {args.reference}: p = {p:.3g} (reference median "
              f"{float(best[args.reference].median()):.4g})", flush=True)
        saved[name] = {k: v.tolist() for k, v in best.items()}
    if args.json:
        with open(args.json, "w") as out:
            json.dump(saved, out)


if __name__ == "__main__":
    main()
