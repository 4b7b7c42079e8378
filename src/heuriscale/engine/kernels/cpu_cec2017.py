"""The CEC 2017 functions one row at a time, for the native kernels to compute inline: the
official C code's row function in float64, equal to `problems.cec2017.CEC2017.evaluate`,
quirks included (they are listed there), on `cpu_cec.py`'s machinery (`sr_func`'s shift,
scale and rotation, the basic functions, `cf_cal`'s weights) with the basic functions CEC
2022 lacks (Weierstrass, sum of different powers, Lunacek bi-Rastrigin).

One compiled function serves all thirty functions and every dimension: what differs is data,
packed by `packed(problem)` into the float64 numbers the kernels pass it (`cpu_objectives`'s
fdata after the address):

    [structure, components K, bias, shift/rotation sets S, records R,
     R records of RECORD numbers (kind, rate, rotated, offset, scale, bias, delta, start, size),
     S shifts (D each), S rotations (D x D each, by columns), S shuffles (D each, if any)]

The first K records are the components; a component of kind HYBRID_KIND shifts and rotates
x by its set, shuffles it and sums its parts, records start ... start + size - 1 (each a
basic function on its segment). A simple function is one basic component on set 0, a hybrid
one hybrid component on set 0; a composition gives component k set k and weighs the
components' values by closeness to each shift (F29 and F30 compose hybrids).

The compiled wrapper that calls `cec2017_row` is cached beside `cpu_objectives.py`, and
Numba's disk cache checks only that file: after editing this one (or `cpu_cec.py`,
`cpu_classic.py`), touch `cpu_objectives.py`, or its cached wrapper keeps the old code.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...problems import cec2017
from ...problems.cec2022 import _segments
from . import cpu_cec
from .cpu_jobs import inner

SIMPLE, COMPOSITION = 0, 2
HEADER, RECORD = 5, cpu_cec.RECORD

#: The basic functions' ids: CEC 2022's, and the three only CEC 2017 has; HYBRID_KIND marks
#: a component that is a hybrid function.
HYBRID_KIND, WEIERSTRASS, SUM_DIFF_POW, BI_RASTRIGIN = 0, 17, 18, 19
BASIC_IDS = {**cpu_cec.BASIC_IDS, "weierstrass": WEIERSTRASS, "sum_diff_pow": SUM_DIFF_POW,
             "bi_rastrigin": BI_RASTRIGIN}
#: What each adds to its scaled, rotated vector: CEC 2022's, but the 2017 Levy takes z as is.
OFFSETS = {**cpu_cec.OFFSETS, "levy": 0.0}


def packed(problem: cec2017.CEC2017) -> list[float]:
    """The numbers `cec2017_row` reads for `problem` (its shifts, rotations and shuffles in
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
    records = components + hybrid_parts
    sets = problem.shifts.shape[0]
    numbers = [float(structure), float(len(components)), 100.0 * fn, float(sets), float(len(records))]
    numbers += [float(v) for r in records for v in r]
    tensors = [problem.shifts, problem.rotations.transpose(1, 2)]  # by columns: see cpu_cec.shift_rotate
    if getattr(problem, "shuffles", None) is not None:
        tensors.append(problem.shuffles)
    for t in tensors:
        numbers += t.to("cpu", torch.float64).reshape(-1).tolist()
    return numbers


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


@inner
def component(x, data, r, s, shifts, rotations, shuffles, work):
    """The value of the component recorded at data[r:] on set s (shift, rotation, shuffle);
    work: 2n numbers."""
    n, kind = x.shape[0], int(data[r])
    shift, rotation = shifts + s * n, rotations + s * n * n
    if kind == HYBRID_KIND:
        cpu_cec.shift_rotate(x, data, shift, rotation, 1.0, True, 0.0, work)
        for i in range(n):
            work[i] = work[n + int(data[shuffles + s * n + i])]
        total, first = 0.0, int(data[r + 7])
        for p in range(int(data[r + 8])):
            q = HEADER + (first + p) * RECORD
            which, rate, offset, start, size = int(data[q]), data[q + 1], data[q + 3], int(data[q + 7]), int(data[q + 8])
            for i in range(size):
                work[n + i] = work[start + i] * rate + offset
            if which == BI_RASTRIGIN:  # mirrored by the first entries of the shift, unrotated
                total += bi_rastrigin(work[n:n + size], data, shift, rotation, False, work[n + size:])
            else:
                total += basic(which, work[n:n + size])
        return total
    if kind == BI_RASTRIGIN:  # y = (x - o) * rate into work[n:]
        cpu_cec.shift_rotate(x, data, shift, rotation, data[r + 1], False, 0.0, work)
        return bi_rastrigin(work[n:2 * n], data, shift, rotation, True, work[:n])
    cpu_cec.shift_rotate(x, data, shift, rotation, data[r + 1], data[r + 2] != 0.0, data[r + 3], work)
    return basic(kind, work[n:2 * n])


@inner
def cec2017_row(x, data):
    """The CEC 2017 function packed in `data` (`packed`) at the point x."""
    n, k, sets, count = x.shape[0], int(data[1]), int(data[3]), int(data[4])
    shifts = HEADER + count * RECORD
    rotations = shifts + sets * n
    shuffles = rotations + sets * n * n
    work = np.empty(3 * n + 2 * k)  # y, z, scratch, then the components' values and weights
    if int(data[0]) == SIMPLE:
        return component(x, data, HEADER, 0, shifts, rotations, shuffles, work) + data[2]
    fits, weights = 3 * n, 3 * n + k
    for c in range(k):
        r = HEADER + c * RECORD
        work[fits + c] = data[r + 4] * component(x, data, r, c, shifts, rotations, shuffles, work) + data[r + 5]
        work[weights + c] = cpu_cec.cf_weight(x, data, shifts + c * n, data[r + 6])
    return cpu_cec.cf_sum(work[fits:fits + k], work[weights:weights + k]) + data[2]
