"""Scale-out measurements (issue 12), one GPU per rank, started by torchrun:

    torchrun --standalone --nproc-per-node=N benchmarks/scaling.py campaign --out DIR [--fraction F]
    torchrun --standalone --nproc-per-node=N benchmarks/scaling.py weak
    torchrun --standalone --nproc-per-node=N benchmarks/scaling.py strong

- campaign: CEC 2022 F1-F12 at D = 10 and 20, PSO, APO and FEP at their library defaults,
  30 runs each, at the official budgets (200,000 / 1,000,000 evaluations; `--fraction`
  scales them for a smoke test): a sharded study into a fresh store. Prints the wall time
  from the first rank's start to the last commit, and each rank's share (the balance).
- weak: one PSO run set with 1,000,000 particles x D = 30 per GPU (islands, a migration
  every chunk of 64 iterations) on Rastrigin: seconds per iteration.
- strong: APO with 40,000 protozoa in all at D = 1,000 on Rastrigin: seconds per iteration.

Rank 0 prints one JSON line per measurement (prefixed `RESULT`).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

import heuriscale as hs
from heuriscale.engine import distributed
from heuriscale.studies import ResultStore, RunConfig
from heuriscale.studies.sharded import run_study, study_group

BUDGETS = {10: 200_000, 20: 1_000_000}


def report(group, what: str, **numbers) -> None:
    if group is None or group.lead:
        world = 1 if group is None else group.world
        device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
        print("RESULT " + json.dumps({"what": what, "world": world, "device": device, **numbers}), flush=True)


def campaign(out: Path, fraction: float, device: str) -> None:
    configs = []
    for name in ("pso", "apo", "fep"):
        algo = hs.get_algorithm(name)
        for dim, budget in BUDGETS.items():
            iters = (int(budget * fraction) - algo.evals_per_init()) // algo.evals_per_step()
            for k in range(1, 13):
                configs.append(RunConfig(name, f"cec2022-f{k}", iters=iters, runs=30, dim=dim, device=device,
                                         tags={"budget": int(budget * fraction)}))
    group = study_group([device])
    world = 1 if group is None else group.world
    path = out / f"campaign-{world}gpu.sqlite"
    store = None
    if group is None or group.lead:
        path.unlink(missing_ok=True)
        store = ResultStore(path)
    if group is not None:
        group.barrier()
    started = time.perf_counter()
    shares = run_study("scaling-campaign", configs, store, group)
    wall = time.perf_counter() - started
    if store is not None:
        runs = len(store.runs("scaling-campaign"))
        store.close()
        ended = [s["ended_s"] for s in shares] or [wall]
        report(group, "campaign", fraction=fraction, configs=len(configs), runs=runs, wall_s=round(wall, 2),
               slowest_over_mean=round(max(ended) / (sum(ended) / len(ended)), 3), shares=shares)


def _per_iteration(group, problem, algorithm, dim, iters, **kw) -> dict:
    hs.minimize(problem, algorithm, dim=dim, iters=128, seed=0, **kw)  # builds kernels and graphs
    result = hs.minimize(problem, algorithm, dim=dim, iters=iters, seed=1, **kw)
    seconds = result.wall_time - result.extra["setup_time"]
    return {"iters": iters, "s_per_iter": seconds / iters, "wall_s": result.wall_time, "engine": result.extra["engine"],
            "best_f": float(result.best_f.min()), "islands": result.extra.get("islands")}


def weak() -> None:
    group = distributed.join("cuda") if distributed.launched() else None
    world = 1 if group is None else group.world
    pso = hs.get_algorithm("pso", pop_size=1_000_000 * world)
    report(group, "weak", per_gpu="1,000,000 x 30", **_per_iteration(group, "rastrigin", pso, 30, 1280, device="cuda"))


def strong() -> None:
    group = distributed.join("cuda") if distributed.launched() else None
    apo = hs.get_algorithm("apo", pop_size=40_000)
    report(group, "strong", total="40,000 x 1,000", **_per_iteration(group, "rastrigin", apo, 1000, 64, device="cuda"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["campaign", "weak", "strong"])
    parser.add_argument("--out", type=Path, default=Path("scratch/scaling"))
    parser.add_argument("--fraction", type=float, default=1.0, help="campaign: share of the official budgets")
    parser.add_argument("--device", default="cuda", help="campaign: cuda (each rank its GPU) or cpu (a smoke test)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.what == "campaign":
        campaign(args.out, args.fraction, args.device)
    else:
        {"weak": weak, "strong": strong}[args.what]()
