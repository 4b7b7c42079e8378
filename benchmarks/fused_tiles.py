"""Tile sweep of the fused Triton kernels (how their block sizes were chosen).

    PYTHONPATH=src python3 benchmarks/fused_tiles.py              # on a CUDA machine
    PYTHONPATH=src python3 benchmarks/fused_tiles.py --only apo   # one algorithm's sweep

Times one iteration (CUDA-graph replay, after a warm-up chunk) of PSO at paper 001's size
and at 1,000,000 x 30 for several rows per program, warps and ways of letting the next launch
start (`cuda_chain.pdl_mode`), and of Firefly at N = 16,384, D = 32, for several tiles and warps
(Firefly: also pipeline stages and chunks of attractors); FEP's selection program at paper 004's size for several
tiles and warps; and APO at paper 003's sizes (bent cigar, evaluated between two launches;
Griewank, inside the kernel) and at smaller rows (D = 100, 30, 10), for several rows per
program and warps, and its renewal program's tile.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import torch

import heuriscale as hs
from heuriscale.engine.device import synchronize
from heuriscale.engine.kernels.cuda_chain import NO_PDL, PDL_AFTER_WORK, PDL_AT_ONCE


def per_iteration(problem, algo, steps: int, runs: int = 1, firefly_tiles=None, **tiles) -> float:
    runner = hs.Runner(problem, algo, runs=runs, device="cuda", engine="fused", seed=0)
    fused = runner._kernels
    if firefly_tiles is not None:
        fused.tiles(*firefly_tiles)
    for name, value in tiles.items():
        setattr(fused, name, value)
    if tiles:
        fused.blocks = math.ceil(fused.pop / fused.block_p)
        fused.block_f = torch.empty(runs, fused.blocks, device="cuda", dtype=torch.float32)
        fused.block_i = torch.empty(runs, fused.blocks, device="cuda", dtype=torch.int64)
    runner.step(2 * runner.chunk)
    synchronize(runner.device)
    started = time.perf_counter()
    runner.step(steps)
    synchronize(runner.device)
    return (time.perf_counter() - started) / steps


def pso_per_iteration(problem, algo, steps: int, block_p: int, num_warps: int, pdl: int | None) -> float:
    """PSO's iteration with `block_p` rows a program, `num_warps` warps and the PDL mode `pdl`
    (None: the engine's choice): the tiles are chosen when its kernels are set up, so the
    choice is replaced only while the runner's first chunk builds them."""
    from heuriscale.engine.kernels import cuda_chain
    from heuriscale.engine.kernels.pso import cuda as pso_cuda

    tiles, mode = pso_cuda.pso_tiles, cuda_chain.pdl_mode
    pso_cuda.pso_tiles = lambda dim, pop: (tiles(dim, pop)[0], block_p, num_warps)
    if pdl is not None:
        cuda_chain.pdl_mode = lambda programs, device: pdl
    try:
        runner = hs.Runner(problem, algo, runs=1, device="cuda", engine="fused", seed=0)
        runner.step(2 * runner.chunk)
    finally:
        pso_cuda.pso_tiles, cuda_chain.pdl_mode = tiles, mode
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
         hs.get_algorithm("pso", preset="paper001", pop_size=65_536), 30_000, (128, 256, 512, 1024)),
        ("pso 1M x 30", hs.get_problem("sphere", dim=30), hs.PSO(pop_size=1_000_000), 320, (8, 16, 32, 64, 128)),
    ]:
        for bp, pdl in itertools.product(block_ps, (None, NO_PDL, PDL_AFTER_WORK, PDL_AT_ONCE)):
            times = "  ".join(f"warps {nw}: {pso_per_iteration(problem, algo, steps, bp, nw, pdl) * 1e6:.2f} us"
                              for nw in (1, 2, 4, 8))
            print(f"{label}  block_p {bp}  pdl {'default' if pdl is None else pdl}  {times}", flush=True)
    if "firefly" in only:
        firefly_sweep()
    problem, algo = hs.get_problem("fep-f5"), hs.FEP(pop_size=6400)
    for tile in (1024, 2048, 4096, 8192, 16384) if "fep" in only else ():
        times = "  ".join(f"warps {nw}: {per_iteration(problem, algo, 1280, select_tile=tile, select_warps=nw) * 1e6:.1f} us"
                          for nw in (4, 8, 16, 32))
        print(f"fep 6,400 x 32  selection tile {tile}  {times}", flush=True)
    for label, problem, pop, runs in [] if "apo" not in only else [
        ("bent cigar 10,000 x 1,000 (paper 003)", hs.get_problem("bent-cigar", dim=1000, bounds=(-100, 100)), 10_000, 1),
        ("griewank 10,000 x 1,000", hs.get_problem("griewank", dim=1000, bounds=(-100, 100)), 10_000, 1),
        ("griewank 1,000 x 1,000", hs.get_problem("griewank", dim=1000, bounds=(-100, 100)), 1000, 1),
        ("rastrigin 1,000 x 100", hs.get_problem("rastrigin", dim=100), 1000, 1),
        ("rastrigin 100 x 30, 100 runs", hs.get_problem("rastrigin", dim=30), 100, 100),
        ("sphere 100 x 10, 100 runs", hs.get_problem("sphere", dim=10), 100, 100),
    ]:
        algo = hs.APO(pop_size=pop, max_iters=10**6)
        block_d = max(2, 1 << (problem.dim - 1).bit_length())
        for elements in (256, 512, 1024):  # rows per program: elements // BLOCK_D
            bp = max(1, elements // block_d)
            times = "  ".join(f"warps {nw}: {per_iteration(problem, algo, 640, runs, block_p=bp, num_warps=nw) * 1e6:.1f} us"
                              for nw in (4, 8))
            print(f"apo {label}  rows per program {bp} (BLOCK_D {block_d})  {times}", flush=True)
            if bp == 1:
                break
        for tile in (1024, 2048, 4096, 8192) if pop == 10_000 and label.startswith("bent") else ():
            t = per_iteration(problem, algo, 640, renew_tile=tile)
            print(f"apo {label}  renewal tile {tile}: {t * 1e6:.1f} us", flush=True)

#: Firefly's tiles tried: (receivers, attractors per tile, least attractors per chunk, warps,
#: pipeline stages), the arguments of `FusedFirefly.tiles`.
FIREFLY_TILES = [(64, 64, 2048, 4, 2), (128, 64, 2048, 8, 2), (64, 32, 2048, 4, 3), (128, 32, 2048, 8, 2),
                 (128, 32, 2048, 8, 3), (64, 32, 2048, 4, 2), (64, 64, 2048, 4, 1), (64, 64, 1024, 4, 2),
                 (64, 64, 4096, 4, 2), (128, 64, 4096, 8, 2)]


def firefly_sweep(steps: int = 256) -> None:
    """Firefly at N = 16,384, D = 32 (float32) in each of FIREFLY_TILES: their kernels are
    compiled first, all at once in threads (`compiled_together`), then each is timed."""
    from heuriscale.engine.kernels.cuda_common import compiled_together

    problem, algo = hs.get_problem("sphere", dim=32), hs.Firefly(pop_size=16_384)
    runner = hs.Runner(problem, algo, runs=1, device="cuda", engine="fused", seed=0)
    fused = runner._kernels
    with compiled_together():
        for tiles in FIREFLY_TILES:
            fused.tiles(*tiles)
            fused(fused.prepare(runner.state), runner.best_x.clone(), runner._hit_iter.clone(), runner._it.clone(),
                  runner.best_f.clone(), record=torch.empty_like(runner.best_f))
    for tiles in FIREFLY_TILES:
        t = per_iteration(problem, algo, steps, firefly_tiles=tiles)
        print(f"firefly 16,384 x 32  tiles {tiles[0]} x {tiles[1]}, chunks of >= {tiles[2]}, warps {tiles[3]}, "
              f"stages {tiles[4]}: {t * 1e6:.1f} us", flush=True)


if __name__ == "__main__":
    main()
