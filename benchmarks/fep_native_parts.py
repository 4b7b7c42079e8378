"""Where a generation of FEP's native kernel goes, one thread (paper 004's f5, D = 32, q = 10).

Prints, for each mu:
- `Runner.step` per generation, the fastest of many short batches (steadier on a noisy VM
  than `benchmarks/cpu.py`'s few long ones), and eager's the same way (fewer batches);
- the kernel's parts, each called from a compiled loop (no Python between calls): the draws
  alone, the mutation (draws, N(0,1) per individual, move) without and with the objective,
  the union's values, the tournament, the survivors' selection and gather.

    PYTHONPATH=src python benchmarks/fep_native_parts.py --mu 400 800

The parts call the kernel's private functions with the arguments `NativeFEP` would pass: keep
them in step with `src/heuriscale/engine/kernels/fep/cpu.py`.
"""
import argparse
import time

import numpy as np
from numba import njit

import heuriscale as hs
from heuriscale.engine import set_cpu_threads
from heuriscale.engine.kernels.fep import cpu
from heuriscale.engine.kernels.cpu_common import BLOCK_ROWS
from heuriscale.engine.kernels.cpu_jobs import compiled_jobs

DIM, Q = 32, 10


def per_generation(engine: str, mu: int, batches: int, steps: int) -> float:
    runner = hs.Runner(hs.get_problem("fep-f5"), hs.get_algorithm("fep", preset="paper004", pop_size=mu), runs=1,
                       seed=0, device="cpu", engine=engine)
    runner.step(steps)  # build or load the kernels, warm the caches
    best = float("inf")
    for _ in range(batches):
        started = time.perf_counter()
        runner.step(steps)
        best = min(best, (time.perf_counter() - started) / steps)
    return best


@njit
def _part(which, reps, x, eta, cx, ceta, cf, f, lower, upper, pi_err, key, half, none, scratch, fdata, union_f, wins,
          keep, opponents, no_opponents, ox, oeta, of, q, fid, block_nan, helpers):
    mu = x.shape[1]
    blocks, union_blocks = (mu + BLOCK_ROWS - 1) // BLOCK_ROWS, (2 * mu + BLOCK_ROWS - 1) // BLOCK_ROWS
    tau, tau_prime, eta_min = x.dtype.type(0.1), x.dtype.type(0.1), x.dtype.type(0.0)
    rows = scratch.shape[2] // (2 * half)
    for i in range(reps):
        step = np.int64(i)
        for b in range(union_blocks if which == 4 else 1 if which == 5 else blocks):
            p0, p1 = b * BLOCK_ROWS, min(mu, (b + 1) * BLOCK_ROWS)
            if which == 0:
                for s0 in range(p0, p1, rows):
                    cpu._draw(key, step, s0, min(s0 + rows, p1), half, False, pi_err, scratch[b, 0], scratch[b, 1],
                              scratch[b, 3:])
            elif which <= 2:
                cpu._mutate(x, eta, cx, ceta, cf, lower, upper, tau, tau_prime, eta_min, pi_err, False, 0, p0, p1,
                            step, key, half, none, none, scratch[b], fid if which == 2 else 0, fdata, True, helpers)
            elif which == 3:
                cpu._evaluate(b, cf, f, union_f, cf.reshape(-1), True, block_nan)
            elif which == 4:
                cpu._tournament(union_f[0], wins[0], no_opponents, 0, b * BLOCK_ROWS, min(2 * mu, (b + 1) * BLOCK_ROWS),
                                q, step, key, opponents[b])
            elif which == 5:
                cpu._survivors(union_f[0], wins[0], keep[0], q)
            else:
                cpu._gather(x, eta, f, cx, ceta, cf, ox, oeta, of, keep, 0, p0, p1)


PARTS = ("draws", "mutation, no objective", "mutation + objective", "union's values", "tournament", "survivors",
         "gather")


def parts(mu: int, reps: int) -> dict:
    f32 = np.float32
    rng = np.random.default_rng(0)
    half = DIM // 2
    rows = min(cpu.DRAW_COORDS // (2 * half), mu)
    x = rng.uniform(-5.12, 5.12, (1, mu, DIM)).astype(f32)
    eta = np.full_like(x, 3.0)
    cx, ceta, ox, oeta = (np.empty_like(x) for _ in range(4))
    f, cf, of = rng.random((1, mu)).astype(f32), np.empty((1, mu), f32), np.empty((1, mu), f32)
    union_blocks, blocks = -(-2 * mu // BLOCK_ROWS), -(-mu // BLOCK_ROWS)
    args = (x, eta, cx, ceta, cf, f, np.tile(np.full(DIM, -5.12, f32), rows), np.tile(np.full(DIM, 5.12, f32), rows),
            f32(cpu.pi_error(f32)), np.int64(77), half, None,
            np.empty((blocks, 5, rows * 2 * half), f32), np.empty(1), rng.random((1, 2 * mu)).astype(f32),
            np.empty((1, 2 * mu), np.int64), np.empty((1, mu), np.int64),
            np.empty((union_blocks, -(-Q // 4) * 4, min(BLOCK_ROWS, 2 * mu)), np.uint32), None,
            ox, oeta, of, Q, 3, np.empty((1, blocks), np.int64))  # fid 3: rastrigin
    args += (compiled_jobs(*cpu.helper_specs(args[8], False, 3, args[13], True)),)
    times = {}
    for which in (4, 5, 2, 3, 6, 0, 1):  # the tournament first: the survivors read its wins
        _part(which, 1, *args)
        best = float("inf")
        for _ in range(reps):
            started = time.perf_counter()
            _part(which, 10, *args)
            best = min(best, (time.perf_counter() - started) / 10)
        times[PARTS[which]] = best
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mu", type=int, nargs="+", default=[400, 800])
    parser.add_argument("--batches", type=int, default=80, help="native batches (eager: a quarter as many)")
    parser.add_argument("--steps", type=int, default=40, help="generations per batch")
    parser.add_argument("--no-parts", action="store_true", help="only the per-generation times (any commit's kernel)")
    parser.add_argument("--no-eager", action="store_true", help="skip eager's per-generation time")
    args = parser.parse_args()
    set_cpu_threads(1)  # Numba's and torch's
    for mu in args.mu:
        native = per_generation("native", mu, args.batches, args.steps)
        line = f"mu {mu}: Runner.step per generation, fastest batch: native {native * 1e6:.1f} us"
        if not args.no_eager:
            eager = per_generation("eager", mu, max(3, args.batches // 4), max(5, args.steps // 4))
            line += f", eager {eager * 1e6:.0f} us ({eager / native:.1f}x)"
        print(line, flush=True)
        if args.no_parts:
            continue
        times = parts(mu, 100)
        for name in PARTS:
            print(f"  {name:24s} {times[name] * 1e6:7.1f} us")
        whole = sum(times[k] for k in ("mutation + objective", "union's values", "tournament", "survivors", "gather"))
        print(f"  {'sum of a generation':24s} {whole * 1e6:7.1f} us")


if __name__ == "__main__":
    main()
