"""NSGA-II per generation on the CPU: ours against pymoo 0.6.2, DTLZ2 with M = 3, D = 12, at
populations 100 and 1,000, in one run.

Ours: `Runner(problem, NSGA2(pop_size=N), runs=1, device="cpu", dtype=float64)`, timed
through `Runner.step` (so each number includes the engine's own bookkeeping: the run's
non-dominated set, history), on the path `engine="auto"` picks, and with `engine="eager"`
(the torch step) when that differs. pymoo: `NSGA2(pop_size=N)` stepped with its ask/tell
loop as its documentation shows (`algorithm.setup(problem, ...)`, then `next()` per
generation), the problem's NumPy evaluation included, as in ours.

Method: a warm-up of --warmup generations, then --repeats timed blocks of generations
lasting about --budget seconds together; the median block's time per generation is kept
(the machine may be shared: the spread across blocks is in the JSON). Threads: torch keeps
its default (every core it is given), as pymoo's NumPy does.

    PYTHONPATH=src python benchmarks/moo_speed.py                     # both sizes, both sides
    PYTHONPATH=src python benchmarks/moo_speed.py --pops 100 --budget 5
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import time
from pathlib import Path

import heuriscale as hs

OUT = Path(__file__).parent / "results" / "moo" / "moo_speed.json"
DIM, OBJECTIVES = 12, 3


def _blocks(step, warmup: int, budget: float, repeats: int) -> dict:
    """Seconds per generation: the median over `repeats` timed blocks, after `warmup` generations."""
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    step()
    one = max(time.perf_counter() - start, 1e-6)
    per_block = max(1, int(budget / repeats / one))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(per_block):
            step()
        times.append((time.perf_counter() - start) / per_block)
    return {"s_per_gen": statistics.median(times), "blocks_s_per_gen": times, "gens_per_block": per_block}


def time_ours(pop: int, engine: str, args) -> dict:
    problem = hs.get_problem("dtlz2", dim=DIM, objectives=OBJECTIVES)
    runner = hs.Runner(problem, hs.get_algorithm("nsga2", pop_size=pop), runs=1, device="cpu", dtype="float64",
                       engine=engine, seed=0)
    out = _blocks(runner.step, args.warmup, args.budget, args.repeats)
    out["engine"] = str(getattr(runner, "engine", engine))
    return out


def time_pymoo(pop: int, args) -> dict:
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.problems import get_problem
    from pymoo.termination import get_termination

    problem = get_problem("dtlz2", n_var=DIM, n_obj=OBJECTIVES)
    algorithm = NSGA2(pop_size=pop)
    algorithm.setup(problem, termination=get_termination("n_gen", 10**9), seed=0, verbose=False)
    algorithm.next()  # the initial population
    return _blocks(algorithm.next, args.warmup, args.budget, args.repeats)


def provenance() -> dict:
    import pymoo
    import torch

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    import os

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit,
            "machine": f"{platform.processor() or platform.machine()}, {cpus} CPUs, {platform.system()}",
            "torch_threads": torch.get_num_threads(), "python": platform.python_version(), "torch": torch.__version__,
            "pymoo": pymoo.__version__, "heuriscale": hs.__version__}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pops", default="100,1000")
    parser.add_argument("--engines", default="auto,eager", help="ours: engines to time")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of timed generations per measurement")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = []
    for pop in (int(p) for p in args.pops.split(",")):
        row = {"pop": pop, "problem": f"dtlz2 M={OBJECTIVES} D={DIM}", "ours": {}}
        for engine in args.engines.split(","):
            try:
                row["ours"][engine] = time_ours(pop, engine, args)
            except Exception as exc:  # recorded, and the other measurements go on
                row["ours"][engine] = {"error": f"{type(exc).__name__}: {exc}"}
        row["pymoo"] = time_pymoo(pop, args)
        rows.append(row)
        for engine, r in row["ours"].items():
            shown = f"{1e3 * r['s_per_gen']:.2f} ms" if "s_per_gen" in r else r["error"]
            print(f"pop {pop}: ours ({engine}, {r.get('engine', '')}) {shown}", flush=True)
        print(f"pop {pop}: pymoo {1e3 * row['pymoo']['s_per_gen']:.2f} ms", flush=True)
    doc = {"rows": rows, **provenance(), "command": "PYTHONPATH=src python benchmarks/moo_speed.py "
           f"--pops {args.pops} --engines {args.engines} --budget {args.budget:g} --repeats {args.repeats}"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print("| pop | ours (engine) ms/gen | pymoo ms/gen | ours / pymoo |\n|---|---|---|---|")
    for row in rows:
        for engine, r in row["ours"].items():
            if "s_per_gen" in r:
                print(f"| {row['pop']} | {1e3 * r['s_per_gen']:.2f} ({r['engine']}) | "
                      f"{1e3 * row['pymoo']['s_per_gen']:.2f} | {r["s_per_gen"] / row["pymoo"]["s_per_gen"]:.3g}x |")


if __name__ == "__main__":
    main()
