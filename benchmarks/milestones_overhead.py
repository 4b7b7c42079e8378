"""What recording the target hits costs (engine/history.py's milestones, read by the COCO and
IOH exports): the same runs with the ladder of 81 targets tracked and not tracked, per engine.

    PYTHONPATH=src python3 benchmarks/milestones_overhead.py --device cpu --engines native,eager
    PYTHONPATH=src python3 benchmarks/milestones_overhead.py --device cuda --engines eager,graph,fused

Each line: the best of 3 timed runs (setup excluded, after one warm-up run) with targets on and
off, and the difference. "Off" still keeps the rest of the milestones (first value, the
best's iteration), which cost a comparison per row.
"""

from __future__ import annotations

import argparse

import heuriscale as hs
from heuriscale.engine import history

TRACKED = history.Milestones.tracks_targets


def seconds(device: str, engine: str, runs: int, iters: int, dim: int, track: bool) -> tuple[float, str]:
    history.Milestones.tracks_targets = TRACKED if track else property(lambda self: False)
    try:
        kw = dict(dim=dim, runs=runs, iters=iters, seed=0, device=device, engine=engine)
        hs.minimize("rastrigin", "pso", **kw)  # warm-up: compile, capture, caches
        best, used = float("inf"), ""
        for _ in range(3):
            r = hs.minimize("rastrigin", "pso", **kw)
            best, used = min(best, r.wall_time - r.extra["setup_time"]), r.extra["engine"]
        return best, used
    finally:
        history.Milestones.tracks_targets = TRACKED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--engines", default="native,eager")
    parser.add_argument("--runs", default="256,4096")
    parser.add_argument("--iters", type=int, default=1024)
    parser.add_argument("--dim", type=int, default=10)
    args = parser.parse_args()
    for engine in args.engines.split(","):
        for runs in (int(r) for r in args.runs.split(",")):
            on, used = seconds(args.device, engine, runs, args.iters, args.dim, True)
            off, _ = seconds(args.device, engine, runs, args.iters, args.dim, False)
            print(f"{args.device} {used:>12} runs={runs:>6} iters={args.iters} D={args.dim}: targets on {on:.4f} s, "
                  f"off {off:.4f} s, {100 * (on / off - 1):+.1f}%", flush=True)


if __name__ == "__main__":
    main()
