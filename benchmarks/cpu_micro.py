"""What one core costs for the operations the native kernels are made of, to compare CPUs.

Prints ns per Philox 4x32-10 call (the kernels' random numbers), per array allocation inside
a kernel, per element of a SIMD multiply-add over 4,096 floats and of a random gather from
4 MB. Run it on two machines to see whether a kernel's slowdown is the CPU's own or the code
Numba built for it (`benchmarks/cpu.py` prints what Numba compiles for).

    PYTHONPATH=src python benchmarks/cpu_micro.py
"""
import time

import numpy as np
from numba import njit

from heuriscale.engine.kernels.cpu_random import philox


@njit
def philox_calls(n):
    s = np.uint64(0)
    for i in range(n):
        a, b, c, d = philox(12345, i, 0, 0, 0)
        s ^= a ^ d  # keeps the calls from being optimised away
    return s


@njit
def allocations(n, m):
    s = 0.0
    for _ in range(n):
        x = np.empty(m, np.float32)
        x[0] = 1.0
        s += x[0]
    return s


@njit
def multiply_adds(x, y, n):
    for _ in range(n):
        for i in range(x.size):
            x[i] = x[i] * np.float32(0.999) + y[i]
    return x[0]


@njit
def gathers(x, idx, n):
    s = np.float32(0)
    for _ in range(n):
        for i in range(idx.size):
            s += x[idx[i]]
    return s


def best_of_3(f, *args):
    f(*args)  # compile
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        f(*args)
        best = min(best, time.perf_counter() - started)
    return best


def main():
    n = 2_000_000
    print(f"philox: {best_of_3(philox_calls, n) / n * 1e9:.2f} ns per call")
    for m, times in ((2048, 200_000), (1_000_000, 2000)):
        print(f"allocation of {m:,} floats: {best_of_3(allocations, times, m) / times * 1e9:.1f} ns")
    x, y = np.ones(4096, np.float32), np.full(4096, 1e-3, np.float32)
    print(f"multiply-add over 4,096 floats: {best_of_3(multiply_adds, x, y, 20_000) / 20_000 / 4096 * 1e9:.3f} ns per element")
    rng = np.random.default_rng(0)
    big, idx = rng.random(1 << 20).astype(np.float32), rng.integers(0, 1 << 20, 4096)
    print(f"random gather from 4 MB: {best_of_3(gathers, big, idx, 2000) / 2000 / 4096 * 1e9:.3f} ns per element")


if __name__ == "__main__":
    main()
