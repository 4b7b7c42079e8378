"""The instances of COCO's `bbob` functions: optima, rotations and peaks from COCO's own generator.

COCO draws every instance's data (xopt, fopt, rotation matrices, Gallagher's peaks) from the
BBOB 2009 legacy generator (`suite_bbob_legacy_code.c` in github.com/numbbo/coco-experiment):
a Park-Miller "minimal standard" generator (16807 x seed mod 2^31 - 1, in Schrage's form)
behind a 32-entry shuffle table, its Gaussians by Box-Muller, its rotations by Gram-Schmidt
on a matrix of Gaussians. This module is that generator, written again in Python on exact
integers so that its numbers are COCO's; it runs once per problem, at construction, and the
arrays it returns become the problem's tensors (`bbob.BBOB`).

Seeds, as `suite_bbob.c` and the `f_*.c` files set them, for function f and instance i:
rseed = f + 10000 i (f4 uses 3 + 10000 i and f18 uses 17 + 10000 i, the seeds of f3 and
f17); xopt from rseed (f12: rseed + 1000000); the rotation called R in the definitions from
rseed + 1000000 and Q from rseed (f9, f19 and Gallagher rotate with rseed alone); fopt from
rseed' + 10000 i and rseed' + 10000 i + 1, where rseed' is f except 3 for f4 and 17 for f18.

Every array is float64 in COCO's conventions: a matrix M acts as z = M x, rows first.
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: COCO's rotations fill a buffer of 2000 numbers (its legacy code asserts D * D < 2000).
MAX_ROTATED_DIM = 44
#: Seeds stay below 2^31 - 1 up to this instance (the largest is 24 + 10000 i + 1000000).
MAX_INSTANCE = 214_647
#: Functions whose data has no rotation, defined in any dimension >= 2.
UNROTATED = frozenset({1, 2, 3, 4, 5, 20})


# -- the legacy generator (bbob2009_unif, bbob2009_gauss, bbob2009_compute_rotation) ---------------
def uniform(n: int, seed: int) -> np.ndarray:
    """`n` uniform numbers in (0, 1] of the legacy generator started from `seed`."""
    state = max(abs(int(seed)), 1)
    table = [0] * 32
    for i in range(39, -1, -1):  # 8 warm-up draws, then the shuffle table, filled from its end
        state = _next(state)
        if i < 32:
            table[i] = state
    last = table[0]
    out = np.empty(n)
    for i in range(n):
        state = _next(state)
        slot = last // 67108865  # 0..31: the previous output picks the table entry
        last = table[slot]
        table[slot] = state
        r = last / 2.147483647e9
        out[i] = r if r != 0.0 else 1e-99
    return out


def _next(state: int) -> int:
    """16807 x state mod 2^31 - 1 by Schrage's method, as the C code computes it."""
    q = state // 127773
    state = 16807 * (state - q * 127773) - 2836 * q
    return state + 2147483647 if state < 0 else state


def gauss(n: int, seed: int) -> np.ndarray:
    """`n` standard normal numbers: Box-Muller on 2n uniforms (never exactly 0)."""
    u = uniform(2 * n, seed)
    g = [math.sqrt(-2 * math.log(u[i])) * math.cos(2 * math.pi * u[n + i]) for i in range(n)]
    return np.array([v if v != 0.0 else 1e-99 for v in g])


@functools.lru_cache(maxsize=64)
def rotation(seed: int, dim: int) -> np.ndarray:
    """COCO's D x D orthogonal matrix for `seed`: column-major Gaussians, orthonormalised column
    by column (modified Gram-Schmidt, in the C code's order)."""
    b = gauss(dim * dim, seed).reshape(dim, dim).T.copy()  # B[i][j] = g[j * D + i]
    for i in range(dim):
        for j in range(i):
            b[:, i] -= in_order(b[:, i] * b[:, j]) * b[:, j]
        b[:, i] /= math.sqrt(in_order(b[:, i] * b[:, i]))
    b.setflags(write=False)
    return b


def in_order(terms: np.ndarray, axis: int = 0) -> np.ndarray:
    """The sum of `terms` along `axis` taken left to right, as the C loops add.

    Why not `sum` or `@`: NumPy and BLAS add in other orders, and the Gram-Schmidt above carries
    a last-bit difference into the last columns as 1e-13, which f19 at D = 40 turns into
    relative errors of 1e-7. Summed in COCO's order, the matrices are COCO's to the bit."""
    return np.cumsum(terms, axis=axis).take(-1, axis=axis)


def ordered_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b with every sum in the C loops' order (see `in_order`)."""
    return in_order(a[:, :, None] * b[None, :, :], axis=1)


def xopt(seed: int, dim: int) -> np.ndarray:
    """The optimum's location, on a 1e-4 grid in [-4, 4) (0 moved to -1e-5)."""
    u = uniform(dim, seed)
    x = np.array([8 * math.floor(1e4 * v) / 1e4 - 4 for v in u])
    x[x == 0.0] = -1e-5
    return x


def fopt(function: int, instance: int) -> float:
    """The optimal value: a Cauchy-like draw (ratio of two Gaussians) x 100, rounded to 0.01,
    clipped to [-1000, 1000]."""
    rseed = {4: 3, 18: 17}.get(function, function) + 10000 * instance
    g1, g2 = gauss(1, rseed)[0], gauss(1, rseed + 1)[0]
    return min(1000.0, max(-1000.0, math.floor(100.0 * 100.0 * g1 / g2 + 0.5) / 100.0))


# -- per-function data -----------------------------------------------------------------------------
def ramp(dim: int) -> np.ndarray:
    """i / (D - 1), i = 0..D-1: the exponent of every conditioning in the suite."""
    return np.array([i / (dim - 1.0) for i in range(dim)])


def powers(base: float, exponents: np.ndarray) -> np.ndarray:
    return np.array([math.pow(base, e) for e in exponents])


def scaled_rotations(seed: int, dim: int, base: float) -> np.ndarray:
    """R diag(base^(k / (D - 1))) Q, the "R Lambda Q" of f6, f13, f15, f16 and f23."""
    r, q = rotation(seed + 1000000, dim), rotation(seed, dim)
    return ordered_matmul(r * powers(base, ramp(dim)), q)


@functools.lru_cache(maxsize=256)
def instance_data(function: int, dim: int, instance: int) -> tuple[dict[str, np.ndarray | float], np.ndarray, float]:
    """(what the evaluation reads, COCO's best_parameter, fopt) of one instance.

    best_parameter is where COCO says the optimum is: xopt for most functions; the slope's
    corner for f5; 0.75 xopt for f8; R^T 1 / (2 max(1, sqrt(D) / 8)) for f9 and f19; the
    rounding of Schwefel's 4.2096874633 for f20; Gallagher's first peak; +-1.25 for f24.
    """
    seed = {4: 3, 18: 17}.get(function, function) + 10000 * instance
    e, fo = ramp(dim), fopt(function, instance)
    if function in (9, 19):
        factor = max(1.0, math.sqrt(dim) / 8.0)
        m = factor * rotation(seed, dim)
        sums = in_order(rotation(seed, dim) if function == 9 else m)  # column sums; f19 sums the scaled matrix
        return {"m": m}, sums / (2.0 * factor), fo
    if function == 20:
        sign = np.where(uniform(dim, seed) < 0.5, -1.0, 1.0)
        twice = 2 * np.abs(sign * 0.5 * 4.2096874637)
        best = sign * (((420.96874633 / 100 + -twice) + twice) / 2)  # COCO's best_parameter, step by step
        return {"flip": sign < 0, "twice_abs_xopt": twice, "conditioning": _half_ramp_powers(10.0, dim)}, best, fo
    if function in (21, 22):
        return (*_gallagher(dim, seed, 101 if function == 21 else 21), fo)
    if function == 24:
        sign = np.where(gauss(dim, seed) < 0.0, -1.0, 1.0)
        lambda_q = powers(10.0, e)[:, None] * rotation(seed, dim)  # sqrt(100)^(i / (D - 1)) Q, row by row
        return {"flip": sign < 0, "r": rotation(seed + 1000000, dim), "lambda_q": lambda_q}, 1.25 * sign, fo

    shift = xopt(seed + (1000000 if function == 12 else 0), dim)
    if function == 4:
        shift[::2] = np.abs(shift[::2])  # in COCO's legacy code, not in the definitions
    if function == 5:
        corner = np.where(shift < 0.0, -5.0, 5.0)
        return {"corner": corner, "slope": np.sign(corner) * powers(10.0, e)}, corner, fo  # sqrt(100)^(i/(D-1))
    if function == 8:
        shift = shift * 0.75

    def r():  # R in the definitions
        return rotation(seed + 1000000, dim)

    def q():  # Q
        return rotation(seed, dim)

    def asymmetry(beta: float) -> np.ndarray:  # beta i / (D - 1), T_asy's exponents
        return beta * np.arange(dim) / (dim - 1.0)

    extra = {
        1: dict,
        2: lambda: {"weights": powers(1e6, e)},
        3: lambda: {"asymmetry": asymmetry(0.2), "conditioning": _half_ramp_powers(10.0, dim)},
        4: lambda: {"brs": powers(math.sqrt(10.0), e)},
        6: lambda: {"m": scaled_rotations(seed, dim, math.sqrt(10.0))},
        7: lambda: {"lambda_q": np.sqrt(powers(10.0, e))[:, None] * q(), "r": r(), "weights": powers(100.0, e)},
        8: lambda: {"factor": max(1.0, math.sqrt(dim) / 8.0)},
        10: lambda: {"r": r(), "weights": powers(1e6, e)},
        11: lambda: {"r": r()},
        12: lambda: {"r": r(), "asymmetry": asymmetry(0.5)},
        13: lambda: {"m": scaled_rotations(seed, dim, math.sqrt(10.0))},
        14: lambda: {"r": r(), "exponents": 2.0 + 4.0 * np.arange(dim) / (dim - 1.0)},
        15: lambda: {"r": r(), "m": scaled_rotations(seed, dim, math.sqrt(10.0)), "asymmetry": asymmetry(0.2)},
        16: lambda: {"r": r(), "m": scaled_rotations(seed, dim, 1.0 / math.sqrt(100.0))},
        17: lambda: {"r": r(), "m": powers(math.sqrt(10.0), e)[:, None] * q(), "asymmetry": asymmetry(0.5)},
        18: lambda: {"r": r(), "m": powers(math.sqrt(1000.0), e)[:, None] * q(), "asymmetry": asymmetry(0.5)},
        23: lambda: {"m": scaled_rotations(seed, dim, math.sqrt(100.0))},
    }[function]()
    return {"shift": shift, **extra}, shift, fo


def _half_ramp_powers(alpha: float, dim: int) -> np.ndarray:
    """alpha^(0.5 i / (D - 1)): COCO's conditioning transform, exponent as it computes it."""
    return powers(alpha, 0.5 * np.arange(dim) / (dim - 1.0))


def _gallagher(dim: int, seed: int, peaks: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Gallagher's peaks (f_gallagher.c): the rotation, each peak's centre (rotated), diagonal
    scales and height; the first peak is the global optimum, height 10."""
    if peaks == 101:
        first_condition, b, c = math.sqrt(1000.0), 10.0, 5.0
    else:
        first_condition, b, c = 1000.0, 9.8, 4.9
    r = rotation(seed, dim)
    order = np.argsort(uniform(peaks - 1, seed), kind="stable")  # COCO's qsort of (value, index)
    condition = [first_condition] + [math.pow(1000.0, order[i - 1] / (peaks - 2.0)) for i in range(1, peaks)]
    heights = np.array([10.0] + [(i - 1) / (peaks - 2.0) * (9.1 - 1.1) + 1.1 for i in range(1, peaks)])
    scales = np.empty((peaks, dim))
    for i in range(peaks):
        ranks = np.argsort(uniform(dim, seed + 1000 * i), kind="stable")
        scales[i] = [math.pow(condition[i], ranks[j] / (dim - 1.0) - 0.5) for j in range(dim)]
    u = uniform(dim * peaks, seed).reshape(peaks, dim)
    best = 0.8 * (b * u[0] - c)
    centres = ordered_matmul(b * u - c, r.T)  # x_local[i][j] = sum_k R[i][k] (b u[j D + k] - c), here row j
    centres[0] *= 0.8
    # The evaluation expands sum_j s_ij (t_j - y_ij)^2 around the global peak y_0 (see bbob.py)
    offsets = centres - centres[0]
    return {"r": r, "centre": centres[0], "scales": scales, "scaled_offsets": scales * offsets,
            "offset_norms": (scales * offsets * offsets).sum(1), "heights": heights}, best
