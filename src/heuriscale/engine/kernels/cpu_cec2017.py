"""The CEC 2017 functions for the native kernels to compute inline: `packed(problem)`, the
float64 numbers `cpu_cec_block.cec_block` reads (the layout is described there), and the
basic functions CEC 2022 lacks (Weierstrass, sum of different powers, Lunacek
bi-Rastrigin), one point at a time, in float64, as the official C code and
`problems.cec2017.CEC2017.evaluate` compute them (quirks included: listed there).
"""

from __future__ import annotations

import math

import numpy as np

from ...problems import cec2017
from ...problems.cec2022 import _segments
from . import cpu_cec
from .cpu_jobs import inner

SIMPLE, COMPOSITION, HYBRID_KIND = cpu_cec.SIMPLE, cpu_cec.COMPOSITION, cpu_cec.HYBRID_KIND

#: The basic functions' ids: CEC 2022's, and the three only CEC 2017 has.
WEIERSTRASS, SUM_DIFF_POW, BI_RASTRIGIN = 17, 18, 19
BASIC_IDS = {**cpu_cec.BASIC_IDS, "weierstrass": WEIERSTRASS, "sum_diff_pow": SUM_DIFF_POW,
             "bi_rastrigin": BI_RASTRIGIN}
#: What each adds to its scaled, rotated vector: CEC 2022's, but the 2017 Levy takes z as is.
OFFSETS = {**cpu_cec.OFFSETS, "levy": 0.0}


def packed(problem: cec2017.CEC2017) -> list[float]:
    """The numbers `cec_block` reads for `problem` (its shifts, rotations and shuffles in
    the problem's dtype, as its own `evaluate` uses them, widened to float64)."""
    fn, dim = problem.function, problem.dim

    def record(name, rotated=True, scale=1.0, bias=0.0, delta=0.0, start=0, size=dim):
        rate = cec2017.LUNACEK_RATE if name == "bi_rastrigin" else cec2017.BASIC.get(name, (None, 1.0))[1]
        return [BASIC_IDS[name], rate, float(rotated), OFFSETS.get(name, 0.0), scale, bias, delta, start, size]

    def parts(number):
        shares = cec2017.HYBRID[number]
        # Schaffer F7 reads the first entries of the shuffled vector, unscaled
        return [record(name, start=0 if name == "schaffer_f7" else start, size=size)
                for (name, _), (start, size) in zip(shares, _segments(dim, [s for _, s in shares]))]

    components, hybrid_parts = [], []

    def hybrid(number, scale=1.0, bias=0.0, delta=0.0, count=1):
        sub = parts(number)
        first = count + len(hybrid_parts)  # its parts' record index, after the count components
        hybrid_parts.extend(sub)
        return [HYBRID_KIND, 1.0, 1.0, 0.0, scale, bias, delta, first, len(sub)]

    if fn in cec2017.SIMPLE:  # F6's Schaffer F7 reads the shifted, unrotated vector
        name = cec2017.SIMPLE[fn]
        structure, components = SIMPLE, [record(name, rotated=name != "schaffer_f7")]
    elif fn in cec2017.HYBRID:
        structure, components = SIMPLE, [hybrid(fn)]
    else:
        structure = COMPOSITION
        members, deltas = cec2017.COMPOSITION[fn]
        for k, ((name, scale), delta) in enumerate(zip(members, deltas)):
            if isinstance(name, int):
                components.append(hybrid(name, scale, 100.0 * k, delta, len(members)))
            else:
                components.append(record(name, True, scale, 100.0 * k, delta))
    return cpu_cec.layout(structure, components, hybrid_parts, 100.0 * fn, problem.shifts, problem.rotations,
                          getattr(problem, "shuffles", None))


# -- the basic functions CEC 2022 has not, on z (1-D) in float64 ------------------------------
@inner
def weierstrass(z):
    """sum_i sum_k a^k cos(2 pi b^k (z_i + 0.5)) - D sum_k a^k cos(pi b^k), a = 0.5, b = 3, k <= 20,
    each product in the torch function's order."""
    n, acc, offset = z.shape[0], 0.0, 0.0
    for k in range(21):
        offset += 0.5 ** k * math.cos(2.0 * math.pi * 3.0 ** k * 0.5)
    for i in range(n):
        v, row = np.float64(z[i]) + 0.5, 0.0
        for k in range(21):
            row += 0.5 ** k * math.cos(2.0 * math.pi * 3.0 ** k * v)
        acc += row
    return acc - n * offset


@inner
def sum_diff_pow(z):
    acc = 0.0
    for i in range(z.shape[0]):
        acc += math.pow(abs(np.float64(z[i])), i + 1.0)
    return acc


@inner
def bi_rastrigin(y, data, shift, rotation, rotated, scratch):
    """Lunacek bi-Rastrigin on y = (x - o) * 10/100 (a segment of it in hybrids): mirrored
    where the shift data[shift + i] is negative, rotated (M at data[rotation:] by columns) in
    the cosine term only; `scratch` (n numbers, not y) holds the mirrored vector."""
    n = y.shape[0]
    mu0, d = 2.5, 1.0
    s = 1.0 - 1.0 / (2.0 * (n + 20.0) ** 0.5 - 8.2)
    mu1 = -(((mu0 * mu0 - d) / s) ** 0.5)
    near, far, cosines = 0.0, 0.0, 0.0
    for i in range(n):
        z = -(2.0 * y[i]) if data[shift + i] < 0.0 else 2.0 * y[i]
        scratch[i] = z
        t = z + mu0
        near += (t - mu0) ** 2
        far += (t - mu1) ** 2
    for i in range(n):
        r = scratch[i]
        if rotated:  # r_i = sum_j z_j M_ij
            r = 0.0
            for j in range(n):
                r += scratch[j] * data[rotation + j * n + i]
        cosines += math.cos(2.0 * math.pi * r)
    return min(near, far * s + d * n) + 10.0 * (n - cosines)


@inner
def basic(which, z):
    """Basic function `which` (BASIC_IDS, but Lunacek's, which needs the shift) of z."""
    if which == WEIERSTRASS:
        return weierstrass(z)
    if which == SUM_DIFF_POW:
        return sum_diff_pow(z)
    return cpu_cec.basic(which, z)
