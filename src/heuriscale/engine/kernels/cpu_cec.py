"""The CEC 2022 functions for the native kernels to compute inline: `packed(problem)`, the
float64 numbers `cpu_cec_block.cec_block` reads (the layout is described there: a simple
function is one basic component, a hybrid one hybrid component whose parts are the later
records, a composition one component per shift/rotation set), and the basic functions CEC
2022 adds to the classic ones, one point at a time (`basic`), in float64, as the official C
code and `problems.cec2022.CEC2022.evaluate` compute them (quirks included: listed there).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...problems import cec2022
from . import cpu_classic as rows
from .cpu_jobs import inner

SIMPLE, COMPOSITION = 0, 2  # the packed structures (cpu_cec_block.py)
#: A packed component that is a hybrid function (its parts: the records it names).
HYBRID_KIND = 0
RECORD = 9

#: The basic functions' ids in the packed data, and what each adds to its scaled, rotated
#: vector before the base function (the torch table's `lambda z: f(z + offset)`).
BASIC_IDS = {"zakharov": 1, "rosenbrock": 2, "rastrigin": 3, "levy": 4, "bent_cigar": 5, "hgbat": 6, "katsuura": 7,
             "ackley": 8, "schwefel": 9, "happycat": 10, "grie_rosen": 11, "ellips": 12, "discus": 13,
             "escaffer6": 14, "griewank": 15, "schaffer_f7": 16}
OFFSETS = {"rosenbrock": 1.0, "levy": 1.0, "hgbat": -1.0}


def packed(problem: cec2022.CEC2022) -> list[float]:
    """The numbers `cec_block` reads for `problem` (its shifts, rotations and shuffle in the
    problem's dtype, as its own `evaluate` uses them, widened to float64)."""
    fn, dim = problem.function, problem.dim

    def record(name, rotated=True, scale=1.0, bias=0.0, delta=0.0, start=0, size=dim):
        rate = cec2022.BASIC[name][1] if name in cec2022.BASIC else 1.0
        return [BASIC_IDS[name], rate, float(rotated), OFFSETS.get(name, 0.0), scale, bias, delta, start, size]

    if fn in cec2022.SIMPLE:  # F3's Schaffer F7 reads the shifted, unrotated vector
        name = cec2022.SIMPLE[fn]
        structure, components, parts = SIMPLE, [record(name, rotated=name != "schaffer_f7")], []
    elif fn in cec2022.HYBRID:
        shares = cec2022.HYBRID[fn]
        # Schaffer F7 reads the first entries of the shuffled vector, unscaled
        parts = [record(name, start=0 if name == "schaffer_f7" else start, size=size)
                 for (name, _), (start, size) in zip(shares, cec2022._segments(dim, [s for _, s in shares]))]
        structure, components = SIMPLE, [[HYBRID_KIND, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1, len(parts)]]
    else:
        members, deltas, biases = cec2022.COMPOSITION[fn]
        structure, parts = COMPOSITION, []
        components = [record(name, rotated, scale, bias, delta)
                      for (name, rotated, scale), delta, bias in zip(members, deltas, biases)]
    sets = len(components)
    return layout(structure, components, parts, cec2022.BIAS[fn], problem.shifts[:sets], problem.rotations[:sets],
                  problem.shuffle[None] if parts else None)


def layout(structure: int, components: list, parts: list, bias: float, shifts, rotations, shuffles) -> list[float]:
    """The numbers in `cpu_cec_block`'s layout: the header, the components' records, then the
    hybrids' parts', then the S shifts (S, D), rotations (S, D, D), by columns, and shuffles
    (S, D) or None, in the problem's dtype widened to float64."""
    records = components + parts
    numbers = [float(structure), float(len(components)), float(bias), float(shifts.shape[0]), float(len(records))]
    numbers += [float(v) for r in records for v in r]
    tensors = [shifts, rotations.transpose(1, 2)] + ([] if shuffles is None else [shuffles])  # (M^T: see cec_block)
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
