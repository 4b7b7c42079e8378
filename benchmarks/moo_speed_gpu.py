"""NSGA-II per generation on CUDA: ours (eager, graph replay, compiled) against EvoX 1.4's
NSGA-II, DTLZ2 with M = 3 and D = 12, at populations 100, 1,000 and 10,000, in one run.

Ours: `Runner(problem, NSGA2(pop_size=N), runs=1, device="cuda", dtype=float32, engine=E)`
stepped with `Runner.step`, so each number includes the engine's bookkeeping of several
objectives (the populations' values sampled for the hypervolume history). EvoX:
`evox.algorithms.NSGA2(N, 3, lb, ub)` on `evox.problems.numerical.DTLZ2(d=12, m=3)`, driven
by its `StdWorkflow` (`init_step()`, then `step()` per generation), as its documentation
shows. Both in float32, from a uniform random initial population. pymoo 0.6.2's NSGA-II on
the same machine's CPU where it is installed (--pymoo-pops, timed as benchmarks/moo_speed.py
times it).

Method: a warm-up (ours: two chunks of 64 generations, the first capturing the graph or
compiling; EvoX: 3 generations), then --repeats timed blocks of whole chunks, each between
two `torch.cuda.synchronize()`; the median block's time per generation is kept (all
blocks are in the JSON). The generations timed follow the warm-up, so each side is timed
over about the same stretch of its run (the sort's work depends on how many fronts the
population has). The sort alone (`heuriscale::peel_fronts` on a union of 2N points after
the warm-up: the torch specification against the CUDA kernel) is timed too.

    PYTHONPATH=src python benchmarks/moo_speed_gpu.py --commit $(git rev-parse --short HEAD)
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import time
import traceback
from pathlib import Path

import torch

import heuriscale as hs

OUT = Path(__file__).parent / "results" / "moo" / "moo_speed_gpu.json"
DIM, OBJECTIVES = 12, 3


def _timed_blocks(step, generations_per_call: int, budget: float, repeats: int) -> dict:
    """Seconds per generation: the median of `repeats` blocks of about budget / repeats seconds."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    step()
    torch.cuda.synchronize()
    one = max((time.perf_counter() - start) / generations_per_call, 1e-7)
    calls = max(1, int(budget / repeats / (one * generations_per_call)))
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / (calls * generations_per_call))
    return {"s_per_gen": statistics.median(times), "blocks_s_per_gen": times, "gens_per_block": calls * generations_per_call}


def time_ours(pop: int, engine: str, args) -> dict:
    problem = hs.get_problem("dtlz2", dim=DIM, objectives=OBJECTIVES)
    runner = hs.Runner(problem, hs.NSGA2(pop_size=pop), runs=1, device="cuda", dtype="float32", engine=engine, seed=0)
    chunk = runner.chunk
    started = time.perf_counter()
    runner.step(chunk)  # graph: capture; compiled: compile and capture
    torch.cuda.synchronize()
    setup = time.perf_counter() - started
    runner.step(chunk)
    out = _timed_blocks(lambda: runner.step(chunk), chunk, args.budget, args.repeats)
    result = runner.result()
    out.update(engine=result.extra["engine"], first_chunk_s=setup, generations=result.iterations,
               final_hv=float(result.hv[0]))
    return out


def time_evox(pop: int, args) -> dict:
    from evox.algorithms import NSGA2
    from evox.problems.numerical import DTLZ2
    from evox.workflows import StdWorkflow

    torch.manual_seed(0)
    with torch.device("cuda"):  # EvoX makes its tensors on the default device
        algorithm = NSGA2(pop_size=pop, n_objs=OBJECTIVES, lb=torch.zeros(DIM), ub=torch.ones(DIM))
        workflow = StdWorkflow(algorithm, DTLZ2(d=DIM, m=OBJECTIVES))
        workflow.init_step()
        for _ in range(3):
            workflow.step()
        return _timed_blocks(workflow.step, 1, args.budget, args.repeats)


def time_pymoo(pop: int, args) -> dict:
    """pymoo 0.6.2's NSGA-II on this machine's CPU, timed as benchmarks/moo_speed.py times it."""
    import pymoo
    from moo_speed import time_pymoo as timed

    out = timed(pop, argparse.Namespace(warmup=2, budget=args.budget, repeats=3))
    out["pymoo"] = pymoo.__version__
    return out


def time_sort(pop: int, args) -> dict:
    """The sort of 2N points (the population after 128 generations and N uniform points), until N
    are ranked: the CUDA kernel, and the torch specification up to --torch-sort-max."""
    from heuriscale.algorithms.pareto import dominance, peel_fronts_torch
    from heuriscale.engine.kernels.pareto_cuda import peel_fronts_cuda

    problem = hs.get_problem("dtlz2", dim=DIM, objectives=OBJECTIVES)
    runner = hs.Runner(problem, hs.NSGA2(pop_size=pop), runs=1, device="cuda", dtype="float32", seed=0)
    runner.step(128)
    x = torch.cat([runner.state.x, torch.rand_like(runner.state.x)], 1)
    D = dominance(problem.to("cuda", torch.float32).evaluate(x))
    kernel = peel_fronts_cuda(D, pop)
    out = {"fronts_to_cover_N": int(kernel.max()), "fronts_all": int(peel_fronts_cuda(D, 2 * pop).max()) + 1}
    sides = [("kernel", peel_fronts_cuda)] + ([("torch", peel_fronts_torch)] if pop <= args.torch_sort_max else [])
    for name, sort in sides:
        if name == "torch":
            out["torch_equals_kernel"] = bool(torch.equal(sort(D, pop), kernel))
        out[f"{name}_s"] = _timed_blocks(lambda sort=sort: sort(D, pop), 1, args.budget / 4, args.repeats)["s_per_gen"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pops", default="100,1000,10000")
    parser.add_argument("--engines", default="eager,graph", help="ours: engines timed at every population")
    parser.add_argument("--compiled-pops", default="100", help="populations also timed with engine='compiled'")
    parser.add_argument("--no-sort", action="store_true", help="skip timing the sort alone")
    parser.add_argument("--sort-programs", type=int, default=None, help="at most this many programs per run in the sort")
    parser.add_argument("--torch-sort-max", type=int, default=1000, help="largest population whose torch sort is timed")
    parser.add_argument("--no-evox", action="store_true")
    parser.add_argument("--pymoo-pops", default="100,1000", help="populations pymoo is timed at on this machine's CPU")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of timed generations per measurement")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--commit", default="", help="the commit measured (the device copy has no git)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    compiled = {int(p) for p in args.compiled_pops.split(",") if p}
    if args.sort_programs is not None:
        from heuriscale.engine.kernels import pareto_cuda

        pareto_cuda.MAX_PROGRAMS = args.sort_programs
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": args.commit,
           "machine": f"{torch.cuda.get_device_name()}, {platform.processor() or platform.machine()}",
           "torch": torch.__version__, "python": platform.python_version(), "heuriscale": hs.__version__,
           "problem": f"dtlz2 M={OBJECTIVES} D={DIM}, float32, runs=1", "rows": [],
           "command": f"PYTHONPATH=src python benchmarks/moo_speed_gpu.py --pops {args.pops} --engines {args.engines} "
                      f"--compiled-pops {args.compiled_pops} --budget {args.budget:g} --repeats {args.repeats}"}
    try:
        import evox

        doc["evox"] = evox.__version__ if hasattr(evox, "__version__") else "1.4"
    except ImportError:
        args.no_evox = True

    def measure(where: dict, key: str, label: str, fn, *a):
        try:
            where[key] = fn(*a)
        except Exception as exc:  # recorded; the other measurements go on
            where[key] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            traceback.print_exc()
        r = where[key]
        shown = f"{1e3 * r['s_per_gen']:.3f} ms/gen" if "s_per_gen" in r else r
        print(f"{label}: {shown}", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(doc, indent=1) + "\n")  # after every measurement: a timeout keeps the rest

    for pop in (int(p) for p in args.pops.split(",")):
        row = {"pop": pop, "ours": {}}
        doc["rows"].append(row)
        for engine in args.engines.split(",") + (["compiled"] if pop in compiled else []):
            measure(row["ours"], engine, f"pop {pop} ours {engine}", time_ours, pop, engine, args)
        if not args.no_evox:
            measure(row, "evox", f"pop {pop} EvoX", time_evox, pop, args)
        if not args.no_sort:
            measure(row, "sort", f"pop {pop} sort alone (s)", time_sort, pop, args)
        if str(pop) in args.pymoo_pops.split(","):
            measure(row, "pymoo_cpu", f"pop {pop} pymoo (CPU)", time_pymoo, pop, args)
    import os

    doc["cpu_threads_pymoo"] = len(os.sched_getaffinity(0))
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print("| pop | ours eager | ours graph | EvoX 1.4 | EvoX / ours (graph) |\n|---|---|---|---|---|")
    for row in doc["rows"]:
        ours, evox_ = row["ours"], row.get("evox", {})
        ms = lambda r: f"{1e3 * r['s_per_gen']:.3f} ms" if "s_per_gen" in r else "-"  # noqa: E731
        ratio = (f"{evox_['s_per_gen'] / ours['graph']['s_per_gen']:.1f}x"
                 if "s_per_gen" in evox_ and "s_per_gen" in ours.get("graph", {}) else "-")
        print(f"| {row['pop']} | {ms(ours.get('eager', {}))} | {ms(ours.get('graph', {}))} | {ms(evox_)} | {ratio} |")


if __name__ == "__main__":
    main()
