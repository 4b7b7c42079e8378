"""NSGA-II per generation on the CPU: ours (the native kernel and the eager torch step) against
pymoo 0.6.2, DTLZ2 with M = 3, D = 12, at populations 100 and 1,000, and the native kernel
alone at 10,000, in one run.

Ours: `Runner(problem, NSGA2(pop_size=N), runs=1, device="cpu", dtype=float64, engine=...)`,
timed through `Runner.step` one generation per call (so each number includes the engine's
own bookkeeping: the populations kept for the hypervolume history). pymoo: `NSGA2(pop_size=N)`
stepped with its ask/tell loop as its documentation shows (`algorithm.setup(problem, ...)`,
then `next()` per generation), the problem's NumPy evaluation included, as in ours.

The native kernel starts from the eager initial population, whose non-dominated sort (N
peels of an N x N dominance matrix) takes minutes at N = 10,000: hence the separate sizes.

Method: a warm-up of --warmup generations, then --repeats timed blocks per side, the sides'
blocks in turn, lasting about --budget seconds together per population; the median block's
time per generation is kept (the machine may be shared: every block is in the JSON). Threads:
torch and Numba keep their defaults (the native kernel runs one run on one thread), as
pymoo's NumPy does.

    PYTHONPATH=src python benchmarks/moo_speed.py                     # every size, every side
    PYTHONPATH=src python benchmarks/moo_speed.py --pops 100 --native-pops "" --budget 5
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


def _interleaved(steppers: dict, warmup: int, budget: float, repeats: int) -> dict:
    """Seconds per generation of each stepper: the median over `repeats` timed blocks, after
    `warmup` generations, the sides' blocks taken in turn (block 1 of each, then block 2 of
    each, ...) so that a change in the machine's load falls on every side alike."""
    per_block = {}
    for name, step in steppers.items():
        for _ in range(warmup):
            step()
        start = time.perf_counter()
        step()
        one = max(time.perf_counter() - start, 1e-6)
        per_block[name] = max(1, int(budget / len(steppers) / repeats / one))
    times = {name: [] for name in steppers}
    for _ in range(repeats):
        for name, step in steppers.items():
            start = time.perf_counter()
            for _ in range(per_block[name]):
                step()
            times[name].append((time.perf_counter() - start) / per_block[name])
    return {name: {"s_per_gen": statistics.median(t), "blocks_s_per_gen": t, "gens_per_block": per_block[name]}
            for name, t in times.items()}


def ours(pop: int, engine: str):
    """Our NSGA-II's `Runner.step` (one generation per call) on `engine`, and the runner."""
    problem = hs.get_problem("dtlz2", dim=DIM, objectives=OBJECTIVES)
    runner = hs.Runner(problem, hs.get_algorithm("nsga2", pop_size=pop), runs=1, device="cpu", dtype="float64",
                       engine=engine, seed=0)
    return runner.step, runner


def pymoo_step(pop: int):
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.problems import get_problem
    from pymoo.termination import get_termination

    problem = get_problem("dtlz2", n_var=DIM, n_obj=OBJECTIVES)
    algorithm = NSGA2(pop_size=pop)
    algorithm.setup(problem, termination=get_termination("n_gen", 10**9), seed=0, verbose=False)
    algorithm.next()  # the initial population
    return algorithm.next


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
    parser.add_argument("--pops", default="100,1000", help="populations timed on every side")
    parser.add_argument("--native-pops", default="10000", help="populations timed for the native kernel only")
    parser.add_argument("--engines", default="native,eager", help="ours: engines to time")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds of timed generations per population")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = []
    sizes = [(int(p), True) for p in args.pops.split(",") if p] + \
        [(int(p), False) for p in args.native_pops.split(",") if p]
    for pop, every_side in sizes:
        engines = args.engines.split(",") if every_side else ["native"]
        steppers, runners = {}, {}
        for engine in engines:
            steppers[engine], runners[engine] = ours(pop, engine)
        if every_side:
            steppers["pymoo"] = pymoo_step(pop)
        timed = _interleaved(steppers, args.warmup, args.budget, args.repeats)
        row = {"pop": pop, "problem": f"dtlz2 M={OBJECTIVES} D={DIM}", "ours": {}, "pymoo": timed.get("pymoo")}
        for engine in engines:
            used = runners[engine].result().extra
            row["ours"][engine] = {**timed[engine], "engine": used["engine"],
                                   "cpu_threads": used.get("cpu_threads"), "setup_s": used["setup_time"]}
        rows.append(row)
        for name, r in timed.items():
            print(f"pop {pop}: {name} {1e3 * r['s_per_gen']:.3g} ms per generation", flush=True)
    doc = {"rows": rows, **provenance(), "command": "PYTHONPATH=src python benchmarks/moo_speed.py "
           f'--pops "{args.pops}" --native-pops "{args.native_pops}" --engines {args.engines} --budget {args.budget:g} '
           f"--repeats {args.repeats}"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(table(doc))


def table(doc: dict) -> str:
    """The Markdown table of a run: ms per generation, median of the blocks, and pymoo / ours."""
    lines = ["| population | ours, native kernel | ours, eager torch step | pymoo 0.6.2 | pymoo / native | "
             "pymoo / eager |", "|---|---|---|---|---|---|"]
    for row in doc["rows"]:
        ms = lambda r: f"{1e3 * r['s_per_gen']:.3g} ms" if r and "s_per_gen" in r else "-"  # noqa: E731
        native, eager, theirs = row["ours"].get("native"), row["ours"].get("eager"), row["pymoo"]
        ratio = lambda r: f"{theirs['s_per_gen'] / r['s_per_gen']:.3g}x" if r and theirs else "-"  # noqa: E731
        lines.append(f"| {row['pop']:,} | {ms(native)} | {ms(eager)} | {ms(theirs)} | {ratio(native)} | "
                     f"{ratio(eager)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
