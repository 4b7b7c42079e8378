"""The CEC 2017 and CEC 2022 functions over a block of points at once, for the native kernels
to compute inline: the official C code's row function (`sr_func`'s shift, scale and
rotation, the basic functions, hybrids over a shuffled vector, compositions by `cf_cal`'s
weights) in float64, equal to `CEC2017.evaluate` and `CEC2022.evaluate` (their quirks are
listed there), for the rows of a block.

Why a block: the row function of one point at a time (a work array allocated per point,
scalar code per point) took 300-350 ns a point at D = 10, where torch's batched evaluation
takes 150-200. Over a block, the work arrays are allocated once per call and the vectors are
held by coordinates (element (i, r) of a block of `rows` points at i * rows + r), so that
every inner loop runs over the block's points, contiguous, and vectorises: the shift and
rotation are one small matrix product over the block, the cheap basic functions and the
cosines of Rastrigin and Ackley (`cpu_math`'s polynomial cos(2 pi v), about an ulp) are
passes over the block. Each point's numbers are summed in the order the row function sums
them, so a point's value does not depend on the block it is in (a test checks blocks of 1
against whole blocks bit for bit).

One compiled function serves both suites, all functions and every dimension: what differs
is data, packed by `cpu_cec.packed` and `cpu_cec2017.packed` into the float64 numbers the
kernels pass it (`cpu_objectives`'s fdata after the address):

    [structure, components K, bias, shift/rotation sets S, records R,
     R records of RECORD numbers (kind, rate, rotated, offset, scale, bias, delta, start, size),
     S shifts (D each), S rotations (D x D each, by columns), S shuffles (D each, if any)]

The first K records are the components; a component of kind HYBRID_KIND shifts and rotates
x by its set, shuffles it and sums its parts, records start ... start + size - 1 (each a
basic function on its segment). A simple function is one basic component on set 0, a hybrid
one hybrid component on set 0; a composition gives component k set k and weighs the
components' values by closeness to each shift.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from . import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import carray, cfunc, types

from ...problems.cec2022 import INF  # cf_cal's weight at a component's optimum
from . import cpu_cec2017
from .cpu_cec import RECORD, cf_sum
from .cpu_jobs import inner
from .fep.cpu_math import cos_turns

SIMPLE, COMPOSITION = 0, 2
HEADER = 5  # numbers before the records
#: The basic functions' ids (cpu_cec.BASIC_IDS, cpu_cec2017.BASIC_IDS) that have a pass over
#: the block; the others are computed point by point from a gathered copy.
ZAKHAROV, ROSENBROCK, RASTRIGIN, BENT_CIGAR, HGBAT, ACKLEY, HAPPYCAT, ELLIPS, DISCUS = 1, 2, 3, 5, 6, 8, 10, 12, 13
HYBRID_KIND, BI_RASTRIGIN = cpu_cec2017.HYBRID_KIND, cpu_cec2017.BI_RASTRIGIN


@inner
def shift_rotate(xs, rows, n, data, shift, rotation, rate, rotated, offset, y, z):
    """`sr_func` over the block (xs: its rows one after another): y = (x - o) * rate, z = M y
    (or y) + offset, by coordinates; o at data[shift:], M at data[rotation:] by columns (M^T
    row-major). z_i = sum_j M_ij y_j in the order j = 0, 1, ..., as the row function adds."""
    for r in range(rows):
        for i in range(n):
            y[i * rows + r] = (np.float64(xs[r * n + i]) - data[shift + i]) * rate
    if not rotated:
        for e in range(n * rows):
            z[e] = y[e] + offset
        return
    for i in range(n):
        zi = i * rows
        for r in range(rows):
            z[zi + r] = 0.0
        for j in range(n):
            m, yj = data[rotation + j * n + i], j * rows
            for r in range(rows):
                z[zi + r] += y[yj + r] * m
        for r in range(rows):
            z[zi + r] += offset


@inner
def basic(which, z, m, rows, out, acc, column):
    """Basic function `which` of each point of the block z (m coordinates by `rows` points)
    into out[:rows]; acc: `rows` numbers of scratch, column: m. Each sum in the row
    function's order (cpu_classic.py, cpu_cec.py), the terms as it writes them."""
    if which == ZAKHAROV or which == HGBAT or which == HAPPYCAT:  # sum of squares and sum
        shift = -1.0 if which == HAPPYCAT else 0.0
        weight = 0.5 if which == ZAKHAROV else 0.0
        for r in range(rows):
            out[r], acc[r] = 0.0, 0.0
        for i in range(m):
            c = weight * (i + 1)
            for r in range(rows):
                v = z[i * rows + r] + shift
                out[r] += v * v
                acc[r] += c * v if which == ZAKHAROV else v
        for r in range(rows):
            sq, s = out[r], acc[r]
            if which == ZAKHAROV:
                out[r] = sq + s * s + s ** 4
            elif which == HGBAT:
                out[r] = math.sqrt(abs(sq * sq - s * s)) + (0.5 * sq + s) / m + 0.5
            else:
                out[r] = math.pow(abs(sq - m), 0.25) + (0.5 * sq + s) / m + 0.5
    elif which == RASTRIGIN or which == ACKLEY:
        for r in range(rows):
            out[r], acc[r] = 0.0, 0.0
        for i in range(m):
            for r in range(rows):
                v = z[i * rows + r]
                if which == RASTRIGIN:
                    out[r] += v * v - 10.0 * cos_turns(v)
                else:
                    out[r] += v * v
                    acc[r] += cos_turns(v)
        for r in range(rows):
            if which == RASTRIGIN:
                out[r] = 10.0 * m + out[r]
            else:
                out[r] = -20.0 * math.exp(-0.2 * math.sqrt(out[r] / m)) - math.exp(acc[r] / m) + 20.0 + math.e
    elif which == BENT_CIGAR or which == DISCUS or which == ELLIPS:  # weighted squares
        ratio, weight = 1e6 ** (1.0 / max(m - 1, 1)), 1.0
        for r in range(rows):
            out[r] = 0.0
        first = 0 if which == ELLIPS else 1
        for i in range(first, m):
            for r in range(rows):
                v = z[i * rows + r]
                out[r] += weight * v * v if which == ELLIPS else v * v
            weight *= ratio
        if which != ELLIPS:
            for r in range(rows):
                v = z[r]
                out[r] = v * v + 1e6 * out[r] if which == BENT_CIGAR else 1e6 * (v * v) + out[r]
    elif which == ROSENBROCK:
        for r in range(rows):
            out[r] = 0.0
        for i in range(m - 1):
            for r in range(rows):
                a, b = z[i * rows + r], z[(i + 1) * rows + r]
                out[r] += 100.0 * (b - a * a) ** 2 + (a - 1.0) ** 2
    else:  # point by point, each gathered into `column`
        for r in range(rows):
            for i in range(m):
                column[i] = z[i * rows + r]
            out[r] = cpu_cec2017.basic(which, column)


@inner
def component(xs, rows, n, data, rec, s, shifts, rotations, shuffles, y, z, out, part, acc, column, mirror):
    """The value of the component recorded at data[rec:] on set s (shift, rotation,
    shuffle) at each point of the block, into out[:rows]; y, z: n x rows; part, acc: rows;
    column, mirror: n numbers."""
    kind = int(data[rec])
    shift, rotation = shifts + s * n, rotations + s * n * n
    if kind == HYBRID_KIND:
        shift_rotate(xs, rows, n, data, shift, rotation, 1.0, True, 0.0, y, z)
        for i in range(n):  # shuffled: y's coordinate i is z's coordinate shuffle[i]
            src = int(data[shuffles + s * n + i]) * rows
            for r in range(rows):
                y[i * rows + r] = z[src + r]
        for r in range(rows):
            out[r] = 0.0
        first = int(data[rec + 7])
        for p in range(int(data[rec + 8])):
            q = HEADER + (first + p) * RECORD
            which, rate, offset, start, size = int(data[q]), data[q + 1], data[q + 3], int(data[q + 7]), int(data[q + 8])
            for e in range(size * rows):
                z[e] = y[start * rows + e] * rate + offset
            if which == BI_RASTRIGIN:  # mirrored by the first entries of the shift, unrotated
                for r in range(rows):
                    for i in range(size):
                        column[i] = z[i * rows + r]
                    part[r] = cpu_cec2017.bi_rastrigin(column[:size], data, shift, rotation, False, mirror)
            else:
                basic(which, z, size, rows, part, acc, column[:size])
            for r in range(rows):
                out[r] += part[r]
    elif kind == BI_RASTRIGIN:  # on y = (x - o) * rate, rotated in its cosine term only
        shift_rotate(xs, rows, n, data, shift, rotation, data[rec + 1], False, 0.0, y, z)
        for r in range(rows):
            for i in range(n):
                column[i] = z[i * rows + r]
            out[r] = cpu_cec2017.bi_rastrigin(column, data, shift, rotation, True, mirror)
    else:
        shift_rotate(xs, rows, n, data, shift, rotation, data[rec + 1], data[rec + 2] != 0.0, data[rec + 3], y, z)
        basic(kind, z, n, rows, out, acc, column)


@inner
def cec_block(xs, rows, n, data, out):
    """The CEC function packed in `data` at each of the block's points (xs: `rows` rows of n
    coordinates, one after another) into out[:rows]."""
    k, sets, count = int(data[1]), int(data[3]), int(data[4])
    shifts = HEADER + count * RECORD
    rotations = shifts + sets * n
    shuffles = rotations + sets * n * n
    block, kept, t = n * rows, 2 * k * rows if int(data[0]) == COMPOSITION else 0, max(n, k)
    work = np.empty(2 * block + 2 * rows + kept + 2 * t)  # one allocation per block
    y, z = work[:block], work[block:2 * block]
    part, acc = work[2 * block:2 * block + rows], work[2 * block + rows:2 * block + 2 * rows]
    fits, weights, small = 2 * block + 2 * rows, 2 * block + 2 * rows + k * rows, 2 * block + 2 * rows + kept
    column, mirror = work[small:small + n], work[small + t:small + 2 * t]
    if int(data[0]) == SIMPLE:
        component(xs, rows, n, data, HEADER, 0, shifts, rotations, shuffles, y, z, out, part, acc, column, mirror)
        for r in range(rows):
            out[r] += data[2]
        return
    for c in range(k):
        rec = HEADER + c * RECORD
        component(xs, rows, n, data, rec, c, shifts, rotations, shuffles, y, z, out, part, acc, column, mirror)
        scale, bias, delta, shift = data[rec + 4], data[rec + 5], data[rec + 6], shifts + c * n
        for r in range(rows):
            work[fits + c * rows + r] = scale * out[r] + bias
            # cf_cal's weight: INF at the component's optimum o, else
            # exp(-|x - o|^2 / (2 D delta^2)) / |x - o|
            d2 = 0.0
            for i in range(n):
                d = np.float64(xs[r * n + i]) - data[shift + i]
                d2 += d * d
            work[weights + c * rows + r] = INF if d2 == 0.0 else math.exp(-d2 / 2.0 / n / (delta * delta)) / math.sqrt(d2)
    fk, wk = work[small:small + k], mirror[:k]
    for r in range(rows):
        for c in range(k):
            fk[c], wk[c] = work[fits + c * rows + r], work[weights + c * rows + r]
        out[r] = cf_sum(fk, wk) + data[2]


def _wrapper(xs, rows, n, data, m, out):
    cec_block(carray(xs, rows * n), rows, n, carray(data, m), carray(out, rows))


_compiled: dict = {}


def compiled_block(dtype) -> object:
    """The C-callable `void f(T *xs, intp rows, intp n, double *data, intp m, double *out)`
    of `cec_block` for points of `dtype` (a Numba cfunc; `.address` is what the kernels call
    through `cpu_objectives.call_block`), compiled on first use and cached on disk."""
    element = {torch.float32: types.float32, torch.float64: types.float64}[dtype]
    if element not in _compiled:
        _compiled[element] = cfunc(types.void(types.CPointer(element), types.intp, types.intp,
                                              types.CPointer(types.float64), types.intp, types.CPointer(types.float64)),
                                   cache=True)(_wrapper)
    return _compiled[element]
