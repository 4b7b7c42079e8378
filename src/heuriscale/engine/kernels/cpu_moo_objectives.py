"""The multi-objective problems the native CPU kernels compute inline (Numba): ZDT1-4, ZDT6
and DTLZ1-7 for any number of objectives, each equal to its torch problem (`problems/zdt.py`,
`problems/dtlz.py`, pymoo's definitions). Computed in float64 one point at a time and
stored in the run's dtype (the torch problems compute in the run's dtype: in float32 the
two may differ in the last bits). Any other problem is evaluated by the engine between two
calls of the kernel (`moo_objective` gives 0).

Each family (ZDT, DTLZ) is compiled apart from the kernels, for the one problem and dtype a
run uses, and called through a pointer (`call_row`), as `cpu_objectives.py` does it for one
objective.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from . import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import carray, njit

from ...problems.compiled import call_row
from .cpu_jobs import inner
from .cpu_objectives import compiled_row_function

#: Problem ids of the inline objectives; 0: evaluated by the problem between kernel calls.
MOO_INLINE = {"zdt1": 1, "zdt2": 2, "zdt3": 3, "zdt4": 4, "zdt6": 5, "dtlz1": 6, "dtlz2": 7, "dtlz3": 8,
              "dtlz4": 9, "dtlz5": 10, "dtlz6": 11, "dtlz7": 12}


def moo_objective(problem) -> tuple[int, float]:
    """(id, DTLZ4's alpha) of the problem's inline objective; id 0 where the engine evaluates
    it. Exact types only: a subclass may change the objective."""
    from ...problems.dtlz import DTLZ
    from ...problems.zdt import ZDT

    if type(problem) is ZDT or type(problem) is DTLZ:
        return MOO_INLINE.get(problem.name, 0), float(getattr(problem, "alpha", 1.0))
    return 0, 1.0


@inner
def _zdt(fid, x, out):
    dim = x.shape[0]
    f1 = np.float64(x[0])
    tail = 0.0
    for d in range(1, dim):
        v = np.float64(x[d])
        if fid == 4:  # ZDT4: Rastrigin-like g
            tail += v * v - 10.0 * math.cos(4.0 * math.pi * v)
        else:
            tail += v
    if fid == 4:
        g = 1.0 + 10.0 * (dim - 1) + tail
    elif fid == 5:  # ZDT6
        f1 = 1.0 - math.exp(-4.0 * f1) * math.sin(6.0 * math.pi * f1) ** 6
        g = 1.0 + 9.0 * (tail / (dim - 1)) ** 0.25
    else:
        g = 1.0 + 9.0 / (dim - 1) * tail
    ratio = f1 / g
    if fid == 2 or fid == 5:
        f2 = g * (1.0 - ratio * ratio)
    elif fid == 3:
        f2 = g * (1.0 - math.sqrt(ratio) - ratio * math.sin(10.0 * math.pi * f1))
    else:
        f2 = g * (1.0 - math.sqrt(ratio))
    out[0], out[1] = f1, f2


@inner
def _dtlz(fid, x, out, alpha):
    dim, M = x.shape[0], out.shape[0]
    k = dim - M + 1
    g = 0.0
    for d in range(M - 1, dim):
        v = np.float64(x[d])
        if fid == 6 or fid == 8:  # DTLZ1, 3: multimodal
            s = v - 0.5
            g += s * s - math.cos(20.0 * math.pi * s)
        elif fid == 11:  # DTLZ6
            g += v ** 0.1
        elif fid == 12:  # DTLZ7
            g += v
        else:
            s = v - 0.5
            g += s * s
    if fid == 6 or fid == 8:
        g = 100.0 * (k + g)
    if fid == 6:  # DTLZ1: the simplex
        for i in range(M):
            f = 0.5 * (1.0 + g)
            for j in range(M - 1 - i):
                f *= np.float64(x[j])
            if i > 0:
                f *= 1.0 - np.float64(x[M - 1 - i])
            out[i] = f
        return
    if fid == 12:  # DTLZ7: f_i = x_i, then (1 + g) h
        g = 1.0 + 9.0 / k * g
        h = np.float64(M)
        for i in range(M - 1):
            v = np.float64(x[i])
            out[i] = v
            h -= v / (1.0 + g) * (1.0 + math.sin(3.0 * math.pi * v))
        out[M - 1] = (1.0 + g) * h
        return
    power = alpha if fid == 9 else 1.0
    for i in range(M):  # the sphere: cosines of the first M - 1 - i angles, the sine of the next
        f = 1.0 + g
        for j in range(M - i):
            if j == M - 1 - i and i == 0:
                break
            a = np.float64(x[j])
            if (fid == 10 or fid == 11) and j > 0:  # DTLZ5, 6: the other angles pulled towards 1/2
                a = (1.0 + 2.0 * g * a) / (2.0 * (1.0 + g))
            elif power != 1.0:
                a = a ** power
            f *= math.cos(a * (math.pi / 2)) if j < M - 1 - i else math.sin(a * (math.pi / 2))
        out[i] = f


_compiled: dict = {}


def compiled_moo_objective(fid: int, dtype) -> object:
    """The C-callable `double f(T *x, intp n, double *data, intp m)` of problem `fid` for
    points of `dtype` (a Numba cfunc, cached on disk; `.address` is what the kernels call
    through `call_row`): data[0] is DTLZ4's alpha, data[1:m] receives the M objectives. One
    family (ZDT or DTLZ) compiled for the one problem a run uses, apart from the kernel: in
    the kernel, all twelve problems were a quarter of its first build."""
    return compiled_row_function(_compiled, _wrapper, fid, dtype)


def _wrapper(fid: int):
    # fid is a closure constant: the cache keys each wrapper by it
    if fid <= 5:
        def wrapper(x, n, data, m):
            out = carray(data, m)
            _zdt(fid, carray(x, n), out[1:])
            return 0.0
    else:
        def wrapper(x, n, data, m):
            out = carray(data, m)
            _dtlz(fid, carray(x, n), out[1:], out[0])
            return 0.0
    return wrapper


def objective_buffers(problem, runs: int) -> tuple[int, np.ndarray]:
    """(fid, fbuf): the problem's id (0: evaluated by the engine) and per run the numbers its
    compiled objective takes through `call_row`: fbuf[r] = (address, alpha, M outputs)."""
    fid, alpha = moo_objective(problem)
    M = int(getattr(problem, "objectives", 1))
    fbuf = np.zeros((runs, 2 + M))
    if fid:
        fbuf[:, 0], fbuf[:, 1] = float(compiled_moo_objective(fid, problem.lower.dtype).address), alpha
    return fid, fbuf


@njit(cache=True)
def _each_row(rows, fbuf, out):
    address = np.int64(fbuf[0])
    for i in range(rows.shape[0]):
        call_row(address, rows[i], 0, rows.shape[1], fbuf)
        for m in range(out.shape[1]):
            out[i, m] = fbuf[2 + m]


def values(problem, rows: np.ndarray) -> np.ndarray:
    """The problem's inline objectives (`moo_objective`) at each row of `rows` (n, D), as the
    kernels compute them, through the same pointer: float64 (n, M). For tests."""
    fid, fbuf = objective_buffers(problem, 1)
    if not fid:
        raise ValueError(f"problem {problem.name!r} has no inline objective: the engine evaluates it between "
                         "kernel calls")
    rows = np.ascontiguousarray(rows, dtype=torch.empty(0, dtype=problem.lower.dtype).numpy().dtype)
    out = np.empty((rows.shape[0], problem.objectives))
    _each_row(rows, fbuf[0], out)
    return out
