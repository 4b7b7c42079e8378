"""Otsu evaluation time against image size: the histogram is built once, evaluation is O(K).

    PYTHONPATH=src python3 benchmarks/otsu_eval_time.py --device cuda

Prints, for paper 003's image sizes, the one-time setup (load, resize, histogram) and the
time to evaluate a population of 10,000 three-threshold solutions.
"""

from __future__ import annotations

import argparse
import time

import torch

from heuriscale.engine.device import resolve_device, synchronize
from heuriscale.problems.otsu import OtsuThresholding


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--pop", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=50)
    args = ap.parse_args()
    device = resolve_device(args.device)
    print(f"device {device}, population {args.pop}, levels 3, mean of {args.repeats} evaluations")
    print(f"{'size':>6} {'pixels':>11} {'setup ms':>9} {'evaluate ms':>12}")
    for size in (512, 1024, 2048, 4096):
        t0 = time.perf_counter()
        problem = OtsuThresholding("camera", levels=3, size=size, device=device).to(device, torch.float32)
        setup = time.perf_counter() - t0
        x = 255 * torch.rand(args.pop, 3, device=device)
        problem.evaluate(x)  # warm-up
        synchronize(device)
        t0 = time.perf_counter()
        for _ in range(args.repeats):
            problem.evaluate(x)
        synchronize(device)
        per_eval = (time.perf_counter() - t0) / args.repeats
        print(f"{size:>6} {size * size:>11,} {1000 * setup:>9.1f} {1000 * per_eval:>12.3f}")


if __name__ == "__main__":
    main()
