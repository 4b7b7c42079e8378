"""The CEC 2022 functions one row at a time, for the native kernels to compute inline: the
official C code's row function (`sr_func`'s shift, scale and rotation, the basic functions,
hybrids over a shuffled vector, compositions by `cf_cal`'s weights) in float64, equal to
`problems.cec2022.CEC2022.evaluate`, quirks included (they are listed there).

One compiled function serves all twelve functions and every dimension: what differs is data,
packed by `packed(problem)` into the float64 numbers the kernels pass it (`cpu_objectives`'s
fdata after the address):

    [structure, components K, bias, shift/rotation sets S,
     K records of RECORD numbers (basic function, rate, rotated, offset, scale, bias, delta,
     segment start, segment size),
     S shifts (D each), S rotations (D x D each, by columns), the shuffle (D, hybrids only)]

A simple function is one component on shift 0; a hybrid shifts and rotates once, shuffles,
and gives each component a segment; a composition gives component k shift and rotation k
and weighs the components' values by closeness to each shift.

The compiled wrapper that calls `cec_row` is cached beside `cpu_objectives.py`, and Numba's
disk cache checks only that file: after editing this one (or `cpu_classic.py`), touch
`cpu_objectives.py`, or its cached wrapper keeps the old code.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...problems import cec2022
from . import cpu_classic as rows
from .cpu_jobs import inner

SIMPLE, HYBRID, COMPOSITION = 0, 1, 2
HEADER, RECORD = 4, 9

#: The basic functions' ids in the packed data, and what each adds to its scaled, rotated
#: vector before the base function (the torch table's `lambda z: f(z + offset)`).
BASIC_IDS = {"zakharov": 1, "rosenbrock": 2, "rastrigin": 3, "levy": 4, "bent_cigar": 5, "hgbat": 6, "katsuura": 7,
             "ackley": 8, "schwefel": 9, "happycat": 10, "grie_rosen": 11, "ellips": 12, "discus": 13,
             "escaffer6": 14, "griewank": 15, "schaffer_f7": 16}
OFFSETS = {"rosenbrock": 1.0, "levy": 1.0, "hgbat": -1.0}


def packed(problem: cec2022.CEC2022) -> list[float]:
    """The numbers `cec_row` reads for `problem` (its shifts, rotations and shuffle in the
    problem's dtype, as its own `evaluate` uses them, widened to float64)."""
    fn, dim = problem.function, problem.dim

    def record(name, rotated=True, scale=1.0, bias=0.0, delta=0.0, start=0, size=dim):
        rate = cec2022.BASIC[name][1] if name in cec2022.BASIC else 1.0
        return [BASIC_IDS[name], rate, float(rotated), OFFSETS.get(name, 0.0), scale, bias, delta, start, size]

    if fn in cec2022.SIMPLE:  # F3's Schaffer F7 reads the shifted, unrotated vector
        name = cec2022.SIMPLE[fn]
        structure, records = SIMPLE, [record(name, rotated=name != "schaffer_f7")]
    elif fn in cec2022.HYBRID:
        shares = cec2022.HYBRID[fn]
        structure, records = HYBRID, []
        for (name, _), (start, size) in zip(shares, cec2022._segments(dim, [s for _, s in shares])):
            # Schaffer F7 reads the first entries of the shuffled vector, unscaled
            records.append(record(name, start=0 if name == "schaffer_f7" else start, size=size))
    else:
        components, deltas, biases = cec2022.COMPOSITION[fn]
        structure = COMPOSITION
        records = [record(name, rotated, scale, bias, delta)
                   for (name, rotated, scale), delta, bias in zip(components, deltas, biases)]
    sets = len(records) if structure == COMPOSITION else 1
    numbers = [float(structure), float(len(records)), float(cec2022.BIAS[fn]), float(sets)]
    numbers += [float(v) for r in records for v in r]
    tensors = [problem.shifts[:sets], problem.rotations[:sets].transpose(1, 2)]  # by columns: see shift_rotate
    if structure == HYBRID:
        tensors.append(problem.shuffle)
    for t in tensors:
        numbers += t.to("cpu", torch.float64).reshape(-1).tolist()
    return numbers


# -- the basic functions the classic ones do not cover, on z (1-D) in float64 -----------------
@inner
def katsuura(z):
    n, f = z.shape[0], 1.0
    for i in range(n):
        v, temp = np.float64(z[i]), 0.0
        for j in range(1, 33):
            two_j = 2.0 ** j
            t = two_j * v
            temp += abs(t - math.floor(t + 0.5)) / two_j
        f *= math.pow(1.0 + (i + 1) * temp, 10.0 / n ** 1.2)
    c = 10.0 / n / n
    return f * c - c


@inner
def schwefel(z):
    n, acc = z.shape[0], 0.0
    for i in range(n):
        v = np.float64(z[i]) + 4.209687462275036e002
        if v > 500.0:
            m = np.fmod(v, 500.0)
            acc += -(500.0 - m) * math.sin(math.sqrt(max(500.0 - m, 0.0))) + ((v - 500.0) / 100) ** 2 / n
        elif v < -500.0:
            m = np.fmod(abs(v), 500.0)
            acc += -(-500.0 + m) * math.sin(math.sqrt(max(500.0 - m, 0.0))) + ((v + 500.0) / 100) ** 2 / n
        else:
            acc += -v * math.sin(math.sqrt(abs(v)))
    return acc + 4.189828872724338e002 * n


@inner
def happycat(z):
    n, r2, s = z.shape[0], 0.0, 0.0
    for i in range(n):
        v = np.float64(z[i]) - 1.0
        r2 += v * v
        s += v
    return math.pow(abs(r2 - n), 0.25) + (0.5 * r2 + s) / n + 0.5


@inner
def grie_rosen(z):
    """On z + 1, the pairs (z_i, z_i+1) and the wrap-around (z_n, z_1)."""
    n, acc = z.shape[0], 0.0
    for i in range(n):
        v, nxt = np.float64(z[i]) + 1.0, np.float64(z[(i + 1) % n]) + 1.0
        t = 100.0 * (v * v - nxt) ** 2 + (v - 1.0) ** 2
        acc += t * t / 4000.0 - math.cos(t) + 1.0
    return acc


@inner
def escaffer6(z):
    n, acc = z.shape[0], 0.0
    for i in range(n):
        v, nxt = np.float64(z[i]), np.float64(z[(i + 1) % n])
        r2 = v * v + nxt * nxt
        s = math.sin(math.sqrt(r2)) ** 2
        acc += 0.5 + (s - 0.5) / (1.0 + 0.001 * r2) ** 2
    return acc


@inner
def discus(z):
    acc = 0.0
    for i in range(1, z.shape[0]):
        acc += np.float64(z[i]) * z[i]
    return 1e6 * (np.float64(z[0]) * z[0]) + acc


@inner
def schaffer_f7(z):
    n, total = z.shape[0], 0.0
    for i in range(n - 1):
        a, b = np.float64(z[i]), np.float64(z[i + 1])
        s = math.sqrt(a * a + b * b)
        t = math.sin(50.0 * math.pow(s, 0.2))
        total += math.sqrt(s) + math.sqrt(s) * t * t
    return total * total / (n - 1) / (n - 1)


@inner
def basic(which, z):
    """Basic function `which` (BASIC_IDS) of z."""
    if which == 1:
        return rows.zakharov(z, z)
    if which == 2:
        return rows.rosenbrock(z, z)
    if which == 3:
        return rows.rastrigin(z, z)
    if which == 4:
        return rows.levy(z, z)
    if which == 5:
        return rows.bent_cigar(z, z)
    if which == 6:
        return rows.hgbat(z, z)
    if which == 7:
        return katsuura(z)
    if which == 8:
        return rows.ackley(z, z)
    if which == 9:
        return schwefel(z)
    if which == 10:
        return happycat(z)
    if which == 11:
        return grie_rosen(z)
    if which == 12:
        return rows.elliptic(z, z)
    if which == 13:
        return discus(z)
    if which == 14:
        return escaffer6(z)
    if which == 15:
        return rows.griewank(z, z)
    return schaffer_f7(z)


@inner
def shift_rotate(x, data, shift, rotation, rate, rotated, offset, work):
    """`sr_func`: y = (x - o) * rate into work[:n], z = M y (or y) + offset into work[n:2n];
    o at data[shift:], M at data[rotation:] by columns (M^T row-major)."""
    n = x.shape[0]
    for i in range(n):
        work[i] = (np.float64(x[i]) - data[shift + i]) * rate
    if not rotated:
        for i in range(n):
            work[n + i] = work[i] + offset
        return
    # z_i = sum_j y_j M_ij, each in the order j = 0, 1, ...; j outside (over a column of M,
    # contiguous), so that the n sums advance side by side instead of each waiting on its
    # own previous addition
    for i in range(n):
        work[n + i] = 0.0
    for j in range(n):
        y, column = work[j], rotation + j * n
        for i in range(n):
            work[n + i] += y * data[column + i]
    for i in range(n):
        work[n + i] += offset


@inner
def cec_row(x, data):
    """The CEC function packed in `data` (`packed`) at the point x."""
    n, structure, k, sets = x.shape[0], int(data[0]), int(data[1]), int(data[3])
    shifts = HEADER + k * RECORD
    rotations = shifts + sets * n
    work = np.empty(2 * n + 2 * k)  # y, z, then the components' values and weights
    if structure == HYBRID:
        shuffle = rotations + n * n
        shift_rotate(x, data, shifts, rotations, 1.0, True, 0.0, work)
        for i in range(n):
            work[i] = work[n + int(data[shuffle + i])]
        total = 0.0
        for c in range(k):
            r = HEADER + c * RECORD
            rate, offset, start, size = data[r + 1], data[r + 3], int(data[r + 7]), int(data[r + 8])
            for i in range(size):
                work[n + i] = work[start + i] * rate + offset
            total += basic(int(data[r]), work[n:n + size])
        return total + data[2]
    fits, weights = 2 * n, 2 * n + k
    for c in range(k):
        r, s = HEADER + c * RECORD, c if sets > 1 else 0
        shift_rotate(x, data, shifts + s * n, rotations + s * n * n, data[r + 1], data[r + 2] != 0.0, data[r + 3], work)
        f = basic(int(data[r]), work[n:2 * n])
        if structure == SIMPLE:
            return f + data[2]
        work[fits + c] = data[r + 4] * f + data[r + 5]
        work[weights + c] = cf_weight(x, data, shifts + s * n, data[r + 6])
    return cf_sum(work[fits:fits + k], work[weights:weights + k]) + data[2]


@inner
def cf_weight(x, data, shift, delta):
    """cf_cal's weight of a component whose optimum o is at data[shift:]: the C code's INF
    at o, else exp(-|x - o|^2 / (2 D delta^2)) / |x - o|."""
    n, d2 = x.shape[0], 0.0
    for i in range(n):
        d = np.float64(x[i]) - data[shift + i]
        d2 += d * d
    return cec2022.INF if d2 == 0.0 else math.exp(-d2 / 2.0 / n / (delta * delta)) / math.sqrt(d2)


@inner
def cf_sum(fits, weights):
    """cf_cal's weighted sum of the components' values; where every weight underflowed to 0,
    all weigh the same."""
    k, total_w, all_zero = fits.shape[0], 0.0, True
    for c in range(k):
        all_zero = all_zero and weights[c] == 0.0
    for c in range(k):
        if all_zero:
            weights[c] = 1.0
        total_w += weights[c]
    value = 0.0
    for c in range(k):
        value += weights[c] / total_w * fits[c]
    return value
