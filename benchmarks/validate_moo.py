"""Our NSGA-II and MOEA/D against pymoo 0.6.2's on ZDT1, ZDT3, DTLZ2 (M = 3) and DTLZ1 (M = 3).

Both sides run the same settings and budgets on the CPU, and both sides' final
non-dominated sets are scored by the same code (`heuriscale.metrics`, equal to pymoo's
indicators): hypervolume with the reference point 1.1 x the true front's nadir (1.1 in every
objective for ZDT1 and DTLZ2, the issue's) and IGD to the problem's `pareto_front()`. The two
samples of each (algorithm, problem) are compared with the two-sided Mann-Whitney U test
(scipy); no difference is expected.

Settings (pymoo counts the initial population as generation 1, so G generations are
N x G evaluations; ours run G - 1 iterations after the initial population: the same):

    problem  D   M  generations G  HV reference point
    zdt1     30  2  250            (1.1, 1.1)
    zdt3     30  2  250            1.1 x (0.8518, 1.0)
    dtlz2    12  3  300            (1.1, 1.1, 1.1)
    dtlz1     7  3  400            (0.55, 0.55, 0.55)

- NSGA-II: pop 100, pymoo's `NSGA2(pop_size=100)` (SBX eta 15, p 0.9; PM eta 20; duplicates
  eliminated) against ours at its defaults (the same operators; see its docstring).
- MOEA/D: Das-Dennis weights, H = 99 for M = 2 (N = 100) and H = 12 for M = 3 (N = 91),
  T = 20 neighbours, Tchebycheff; pymoo's `MOEAD(ref_dirs, n_neighbors=20,
  decomposition=Tchebicheff())` against ours with `partitions=H`. pymoo's MOEA/D steps one
  child at a time in Python (about 30 s a run here at N = 91, 300 generations), hence its
  own, smaller number of runs (--moead-runs).

The check of the issue (--check): our NSGA-II, pop 100, 10 runs, must reach at least 99% of
pymoo's median hypervolume, ZDT1 (D = 30, 250 generations) 0.8697 and DTLZ2 (M = 3, D = 12,
300 generations) 0.7034 (the issue's figures, pymoo 0.6.2 over 10 seeds), reference 1.1.

Results are merged into --out (JSON, one entry per side, algorithm and problem: every run's
HV and IGD, the seeds, the wall time), so the sides can run separately:

    PYTHONPATH=src python benchmarks/validate_moo.py --sides pymoo
    PYTHONPATH=src python benchmarks/validate_moo.py --sides ours
    PYTHONPATH=src python benchmarks/validate_moo.py --check        # from the runs above, or new ones
    PYTHONPATH=src python benchmarks/validate_moo.py --report      # the Markdown table
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

import heuriscale as hs
from heuriscale import metrics

OUT = Path(__file__).parent / "results" / "moo" / "validate_moo.json"
#: problem -> (dimension, objectives, generations G)
PROBLEMS = {"zdt1": (30, 2, 250), "zdt3": (30, 2, 250), "dtlz2": (12, 3, 300), "dtlz1": (7, 3, 400)}
#: MOEA/D's Das-Dennis partitions H per number of objectives
MOEAD_PARTITIONS = {2: 99, 3: 12}
#: the issue's pymoo medians (NSGA-II, pop 100, 10 seeds, reference 1.1)
ISSUE_MEDIANS = {"zdt1": 0.8697, "dtlz2": 0.7034}


def problem_of(name: str):
    dim, m, _ = PROBLEMS[name]
    return hs.get_problem(name, dim=dim, objectives=m)


def reference_point(name: str) -> np.ndarray:
    """1.1 x the nadir of the true front."""
    return 1.1 * problem_of(name).pareto_front().numpy().max(axis=0)


def scores(name: str, fronts: list[np.ndarray]) -> tuple[list[float], list[float]]:
    ref, truth = reference_point(name), problem_of(name).pareto_front().numpy()
    return [metrics.hypervolume(F, ref) for F in fronts], [metrics.igd(F, truth) for F in fronts]


#: pymoo's NSGA-II as validated (its defaults), and with one of its choices set as ours: the
#: sides that say which choice makes a difference (NSGA-II only)
PYMOO_SIDES = {
    "pymoo": "its defaults: tournament by domination, then crowding; duplicate children bred again",
    "pymoo-rank-tournament": "tournament by rank, then crowding (tournament_type='comp_by_rank_and_crowding'), as ours",
    "pymoo-keep-duplicates": "duplicate children kept (eliminate_duplicates=False), as ours",
}


def run_pymoo(algorithm: str, name: str, runs: int, seed: int, side: str = "pymoo") -> list[np.ndarray]:
    from pymoo.algorithms.moo.moead import MOEAD
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.decomposition.tchebicheff import Tchebicheff
    from pymoo.optimize import minimize
    from pymoo.problems import get_problem
    from pymoo.util.ref_dirs import get_reference_directions

    dim, m, generations = PROBLEMS[name]
    problem = get_problem(name, n_var=dim) if name.startswith("zdt") else get_problem(name, n_var=dim, n_obj=m)
    fronts = []
    for r in range(runs):
        if algorithm == "nsga2":
            algo = NSGA2(pop_size=100, eliminate_duplicates=side != "pymoo-keep-duplicates")
            if side == "pymoo-rank-tournament":
                algo.tournament_type = "comp_by_rank_and_crowding"
        else:
            weights = get_reference_directions("das-dennis", m, n_partitions=MOEAD_PARTITIONS[m])
            algo = MOEAD(weights, n_neighbors=20, decomposition=Tchebicheff())
        result = minimize(problem, algo, ("n_gen", generations), seed=seed + r, verbose=False)
        fronts.append(np.atleast_2d(result.F))
    return fronts


def run_ours(algorithm: str, name: str, runs: int, seed: int) -> list[np.ndarray]:
    _, m, generations = PROBLEMS[name]
    params = {"pop_size": 100} if algorithm == "nsga2" else {"partitions": MOEAD_PARTITIONS[m]}
    algo = hs.get_algorithm(algorithm, **params)
    result = hs.minimize(problem_of(name), algo, iters=generations - 1, runs=runs, seed=seed, device="cpu",
                         dtype="float64", progress=False)
    return [F.detach().cpu().numpy() for F in result.front_f]


def measure(side: str, algorithm: str, name: str, runs: int, seed: int) -> dict:
    start = time.perf_counter()
    fronts = run_ours(algorithm, name, runs, seed) if side == "ours" else run_pymoo(algorithm, name, runs, seed, side)
    wall = time.perf_counter() - start
    hv, igd = scores(name, fronts)
    dim, m, generations = PROBLEMS[name]
    return {"side": side, "algorithm": algorithm, "problem": name, "dim": dim, "objectives": m,
            "generations": generations, "runs": runs, "seed": seed, "wall_s": round(wall, 3),
            "reference_point": reference_point(name).tolist(), "hv": hv, "igd": igd,
            "front_sizes": [len(F) for F in fronts]}


def provenance() -> dict:
    import pymoo
    import torch

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent).stdout.strip()
    except OSError:
        commit = "unknown"
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit,
            "machine": f"{platform.processor() or platform.machine()}, {_cpus()} CPUs, {platform.system()}",
            "python": platform.python_version(), "torch": torch.__version__, "pymoo": pymoo.__version__,
            "heuriscale": hs.__version__}


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {"entries": {}}


def save(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")


def report(doc: dict) -> str:
    from scipy.stats import mannwhitneyu

    lines = ["| algorithm | problem | runs ours / pymoo | HV median ours | HV median pymoo | HV p | "
             "IGD median ours | IGD median pymoo | IGD p |",
             "|---|---|---|---|---|---|---|---|---|"]
    entries = doc["entries"]
    for algorithm in ("nsga2", "moead"):
        for name in PROBLEMS:
            ours, theirs = entries.get(f"ours/{algorithm}/{name}"), entries.get(f"pymoo/{algorithm}/{name}")
            if not (ours and theirs):
                continue
            p_hv = mannwhitneyu(ours["hv"], theirs["hv"], alternative="two-sided").pvalue
            p_igd = mannwhitneyu(ours["igd"], theirs["igd"], alternative="two-sided").pvalue
            lines.append(f"| {algorithm} | {name} | {ours['runs']} / {theirs['runs']} | {np.median(ours['hv']):.4f} | "
                         f"{np.median(theirs['hv']):.4f} | {p_hv:.3f} | {np.median(ours['igd']):.4g} | "
                         f"{np.median(theirs['igd']):.4g} | {p_igd:.3f} |")
    variants = [(side, name) for side in PYMOO_SIDES if side != "pymoo" for name in PROBLEMS
                if f"{side}/nsga2/{name}" in entries and f"ours/nsga2/{name}" in entries]
    if variants:
        lines += ["", "| NSGA-II, ours against | problem | runs | IGD median ours | IGD median pymoo variant | IGD p | "
                  "HV p |", "|---|---|---|---|---|---|---|"]
        for side, name in variants:
            ours, theirs = entries[f"ours/nsga2/{name}"], entries[f"{side}/nsga2/{name}"]
            p_hv = mannwhitneyu(ours["hv"], theirs["hv"], alternative="two-sided").pvalue
            p_igd = mannwhitneyu(ours["igd"], theirs["igd"], alternative="two-sided").pvalue
            lines.append(f"| {side}: {PYMOO_SIDES[side]} | {name} | {ours['runs']} / {theirs['runs']} | "
                         f"{np.median(ours['igd']):.4g} | {np.median(theirs['igd']):.4g} | {p_igd:.3f} | {p_hv:.3f} |")
    check = doc.get("check")
    if check:
        lines += ["", "| check: NSGA-II, pop 100, 10 runs | our median HV | pymoo's median (10 seeds) | ratio | >= 0.99 |",
                  "|---|---|---|---|---|"]
        for name, c in check["problems"].items():
            lines.append(f"| {name} | {c['median_hv']:.4f} | {c['pymoo_median_hv']:.4f} | {c['ratio']:.4f} | "
                         f"{'yes' if c['ratio'] >= 0.99 else 'NO'} |")
    return "\n".join(lines)


def check(runs: int, seed: int, doc: dict) -> dict:
    """The issue's check, from the first `runs` runs of the validation's own NSGA-II entries
    where they exist (the same settings), else from new runs."""
    out = {}
    for name in ISSUE_MEDIANS:
        stored = doc["entries"].get(f"ours/nsga2/{name}")
        if stored and stored["runs"] >= runs:
            result = {**stored, "hv": stored["hv"][:runs]}
        else:
            result = measure("ours", "nsga2", name, runs, seed)
        median = float(np.median(result["hv"]))
        out[name] = {"median_hv": median, "pymoo_median_hv": ISSUE_MEDIANS[name],
                     "ratio": median / ISSUE_MEDIANS[name], "hv": result["hv"], "wall_s": result["wall_s"]}
        print(f"check {name}: median HV {median:.4f}, {median / ISSUE_MEDIANS[name]:.4f} of pymoo's {ISSUE_MEDIANS[name]}",
              flush=True)
    return {"runs": runs, "seed": seed, "problems": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sides", default="pymoo,ours",
                        help=f"ours, pymoo, or a pymoo variant for NSGA-II: {', '.join(list(PYMOO_SIDES)[1:])}")
    parser.add_argument("--algorithms", default="nsga2,moead")
    parser.add_argument("--problems", default="zdt1,dtlz2,zdt3,dtlz1")
    parser.add_argument("--runs", type=int, default=31, help="NSGA-II runs a side")
    parser.add_argument("--moead-runs", type=int, default=11, help="MOEA/D runs a side")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="the issue's 99%% check only")
    parser.add_argument("--report", action="store_true", help="print the table from --out only")
    parser.add_argument("--extend", action="store_true",
                        help="pymoo: keep the stored runs and add the missing ones up to --runs / --moead-runs "
                             "(run r has seed + r either way, so the sample is the one a single run would give)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    doc = load(args.out)
    if args.report:
        print(report(doc))
        return
    if args.check:
        doc["check"] = {**check(10, args.seed, doc), **provenance()}
        save(args.out, doc)
        print(report(doc))
        return
    for side in args.sides.split(","):
        for algorithm in args.algorithms.split(","):
            for name in args.problems.split(","):
                runs = args.runs if algorithm == "nsga2" else args.moead_runs
                # the two sides draw from different seeds: they are independent samples
                if side not in ("ours", *PYMOO_SIDES) or (side != "ours" and side != "pymoo" and algorithm != "nsga2"):
                    continue
                seed = args.seed + (0 if side == "ours" else 10_000)
                stored = doc["entries"].get(f"{side}/{algorithm}/{name}")
                if args.extend and side == "pymoo" and stored and stored["seed"] == seed and stored["runs"] < runs:
                    entry = measure(side, algorithm, name, runs - stored["runs"], seed + stored["runs"])
                    entry = {**entry, "runs": runs, "seed": seed, "wall_s": round(stored["wall_s"] + entry["wall_s"], 3),
                             **{k: stored[k] + entry[k] for k in ("hv", "igd", "front_sizes")}}
                elif args.extend and stored and stored["runs"] >= runs:
                    continue
                else:
                    entry = measure(side, algorithm, name, runs, seed)
                doc["entries"][f"{side}/{algorithm}/{name}"] = {**entry, **provenance()}
                save(args.out, doc)
                print(f"{side} {algorithm} {name}: median HV {np.median(entry['hv']):.4f}, "
                      f"median IGD {np.median(entry['igd']):.4g}, {entry['wall_s']:.1f} s", flush=True)
    print(report(doc))


if __name__ == "__main__":
    main()
