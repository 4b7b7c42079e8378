"""Tile sweep of the fused Triton kernels (how their block sizes were chosen).

    PYTHONPATH=src python3 benchmarks/fused_tiles.py              # on a CUDA machine
    PYTHONPATH=src python3 benchmarks/fused_tiles.py --only apo   # one algorithm's sweep

Times one iteration (CUDA-graph replay, after a warm-up chunk) of PSO at paper 001's size
and at 1,000,000 x 30, and of Firefly at N = 16,384, D = 32, for several tiles, warps and
(Firefly) product precisions; FEP's selection program at paper 004's size for several
tiles and warps; and APO at paper 003's size (10,000 x 1,000: bent cigar, evaluated between
two launches, and Griewank, inside the kernel) for several rows per program and warps.
"""

from __future__ import annotations

import argparse
import math
import time

import torch

import heuriscale as hs
from heuriscale.engine.device import synchronize


def per_iteration(problem, algo, steps: int, **tiles) -> float:
    runner = hs.Runner(problem, algo, device="cuda", engine="fused", seed=0)
    fused = runner._kernels
    for name, value in tiles.items():
        setattr(fused, name, value)
    fused.blocks = math.ceil(fused.pop / fused.block_p)
    fused.block_f = torch.empty(1, fused.blocks, device="cuda", dtype=torch.float32)
    fused.block_i = torch.empty(1, fused.blocks, device="cuda", dtype=torch.int64)
    runner.step(2 * runner.chunk)
    synchronize(runner.device)
    started = time.perf_counter()
    runner.step(steps)
    synchronize(runner.device)
    return (time.perf_counter() - started) / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="pso,firefly,fep,apo", help="comma-separated: pso, firefly, fep, apo")
    only = ap.parse_args().only.split(",")
    for label, problem, algo, steps, block_ps in [] if "pso" not in only else [
        ("pso 65,536 x 2", hs.get_problem("euclidean", dim=2),
         hs.get_algorithm("pso", preset="paper001", pop_size=65_536), 6400, (64, 128, 256, 512, 1024)),
        ("pso 1M x 30", hs.get_problem("sphere", dim=30), hs.PSO(pop_size=1_000_000), 320, (8, 16, 32, 64, 128)),
    ]:
        for bp in block_ps:
            times = "  ".join(f"warps {nw}: {per_iteration(problem, algo, steps, block_p=bp, num_warps=nw) * 1e6:.1f} us"
                              for nw in (1, 2, 4, 8))
            print(f"{label}  block_p {bp}  {times}", flush=True)
    problem, algo = hs.get_problem("sphere", dim=32), hs.Firefly(pop_size=16_384)
    for precision in ("tf32x3", "ieee") if "firefly" in only else ():
        for bp, bj, nw in [(64, 64, 4), (128, 64, 8), (128, 32, 4), (64, 32, 4), (64, 128, 8)]:
            t = per_iteration(problem, algo, 64, block_p=bp, block_j=bj, num_warps=nw, precision=precision)
            print(f"firefly 16,384 x 32  {precision}  block {bp} x {bj}  warps {nw}: {t * 1e6:.0f} us", flush=True)
    problem, algo = hs.get_problem("fep-f5"), hs.FEP(pop_size=6400)
    for tile in (1024, 2048, 4096, 8192, 16384) if "fep" in only else ():
        times = "  ".join(f"warps {nw}: {per_iteration(problem, algo, 1280, select_tile=tile, select_warps=nw) * 1e6:.1f} us"
                          for nw in (4, 8, 16, 32))
        print(f"fep 6,400 x 32  selection tile {tile}  {times}", flush=True)
    for name in ("bent-cigar", "griewank") if "apo" in only else ():
        problem, algo = hs.get_problem(name, dim=1000, bounds=(-100, 100)), hs.APO(pop_size=10_000, max_iters=10**6)
        for bp in (1, 2, 4):
            times = "  ".join(f"warps {nw}: {per_iteration(problem, algo, 640, block_p=bp, num_warps=nw) * 1e6:.1f} us"
                              for nw in (2, 4, 8, 16))
            print(f"apo 10,000 x 1,000 {name}  rows per program {bp}  {times}", flush=True)
        for tile in (1024, 2048, 4096, 8192):
            t = per_iteration(problem, algo, 640, renew_tile=tile)
            print(f"apo 10,000 x 1,000 {name}  renewal tile {tile}: {t * 1e6:.1f} us", flush=True)


if __name__ == "__main__":
    main()
