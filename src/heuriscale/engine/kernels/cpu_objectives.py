"""The objectives the native CPU kernels compute inline, one row at a time (Numba): the
built-in classic functions (`cpu_classic.py`), the CEC 2022 and CEC 2017 functions
(`cpu_cec.py`, `cpu_cec2017.py`), the spring design (penalty or Deb handling) and Otsu
thresholding, each equal to its torch problem, and a user's `NumbaFunction`. Any other
problem is evaluated by the engine between two calls of the same kernel (`move=True,
select=False`, then `move=False, select=True`): `inline_objective` says which.

Every inline objective is called through a function pointer (`call_row`; the CEC functions
through `call_block`, a block of points a call): a C-callable
wrapper compiled (and cached on disk) for the one objective and dtype a run uses, its
address in fdata[0]. So one build of a kernel serves every objective, and building it
compiles none of them: inlining all of them behind a branch on fid made every kernel build
compile (and LLVM optimise, once per parallel loop) all sixteen functions, Otsu's sort and
the spring's constraints, a third of a first run's wait (measured: 2.1-2.5 s of 7-16 s). A pointer call also costs less per point than that branch did (16 ns a point:
PSO at 32 x 2 went from 1.85 to 1.35 us per iteration for a user's function).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from llvmlite import ir
from . import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import carray, cfunc, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ...problems import classic
from ...problems.compiled import call_row
from ...problems.classic import ClassicProblem
from . import cpu_cec, cpu_cec2017, cpu_cec_block
from . import cpu_classic as rows
from .cpu_jobs import inner

#: Built-in objectives computed inside the kernels; 0 means "evaluated by the problem".
INLINE = {
    classic.sphere: 1, classic.euclidean: 2, classic.rastrigin: 3, classic.ackley: 4, classic.griewank: 5,
    classic.rosenbrock: 6, classic.schwefel_1_2: 7, classic.schwefel_2_21: 8, classic.schwefel_2_22: 9,
    classic.schwefel_2_26: 10, classic.step: 11, classic.zakharov: 12, classic.levy: 13, classic.bent_cigar: 14,
    classic.elliptic: 15, classic.hgbat: 16,
}


#: Application problems computed inside the kernels from their data (`inline_objective`), a
#: user's compiled objective (`NumbaFunction`), the CEC 2022 functions (`cpu_cec.py`) and the
#: CEC 2017 ones (`cpu_cec2017.py`); both CEC suites are computed by `cpu_cec_block.py`, a
#: block of points a call.
SPRING_PENALTY, SPRING_DEB, OTSU, USER, CEC2022, CEC2017 = 17, 18, 19, 20, 21, 22


def inline_fid(problem) -> int:
    """The id of the objective the kernels compute inline for `problem`, 0 for one the engine
    evaluates between kernel calls. Exact types only: a subclass may change the objective."""
    from ...problems.cec2017 import CEC2017 as CEC2017Problem
    from ...problems.cec2022 import CEC2022 as CEC2022Problem
    from ...problems.compiled import NumbaFunction
    from ...problems.constraints import Constrained
    from ...problems.engineering import SpringDesign
    from ...problems.otsu import OtsuThresholding

    if type(problem) is NumbaFunction:
        return USER
    if type(problem) is ClassicProblem:
        return INLINE.get(problem.fn, 0)
    if type(problem) is Constrained and type(problem.inner) is SpringDesign:
        return SPRING_PENALTY if problem.method == "penalty" else SPRING_DEB
    return {OtsuThresholding: OTSU, CEC2022Problem: CEC2022, CEC2017Problem: CEC2017}.get(type(problem), 0)


def inline_objective(problem) -> tuple[int, np.ndarray]:
    """(fid, fdata): the objective the kernels compute inline (`inline_fid`), 0 for one the
    engine evaluates between kernel calls, and the float64 numbers they pass it: fdata[0] the
    address of its compiled wrapper for the problem's dtype (`compiled_objective`; user-space
    addresses are below 2^53, so exact), then its data: the spring design's penalty weight or
    Deb offset, Otsu's cumulative sums omega and mu (257 each, as `OtsuThresholding` keeps
    them), a CEC 2022 or CEC 2017 function's structure, shifts, rotations and shuffles
    (`cpu_cec.packed`, `cpu_cec2017.packed`)."""
    dtype = problem.lower.dtype
    fid = inline_fid(problem)
    if fid == USER:
        return USER, np.array([float(problem.address(dtype))])
    if not fid:
        return 0, NO_DATA
    data = {SPRING_PENALTY: lambda: (problem.weight,), SPRING_DEB: lambda: (problem.offset,),
            OTSU: lambda: torch.cat([problem.omega, problem.mu]).to("cpu", torch.float64).tolist(),
            CEC2022: lambda: cpu_cec.packed(problem), CEC2017: lambda: cpu_cec2017.packed(problem)}.get(fid, tuple)()
    return fid, np.array([float(compiled_objective(fid, dtype).address), *data])


#: fdata of objectives that need none.
NO_DATA = np.zeros(1)


@njit(cache=True, inline="always")
def spring(x, penalty, weight_or_offset):
    """`Constrained(SpringDesign())`: the weight (N + 2) D d^2 with its four constraints
    g <= 0 folded in, as a static penalty f + weight v or Deb's offset + v (v the total
    violation, for infeasible points only); the terms in the eager problem's order."""
    d, D, N = np.float64(x[0]), np.float64(x[1]), np.float64(x[2])
    f = (N + 2.0) * D * d * d
    d4 = math.pow(d, 4.0)  # powers as torch takes them: squares and cubes multiplied out, pow() for d^4
    g1 = 1.0 - D * D * D * N / (71785.0 * d4)
    g2 = (4.0 * (D * D) - d * D) / (12566.0 * (D * (d * d * d) - d4)) + 1.0 / (5108.0 * (d * d)) - 1.0
    g3 = 1.0 - 140.45 * d / ((D * D) * N)
    g4 = (d + D) / 1.5 - 1.0
    v = max(g1, 0.0) + max(g2, 0.0) + max(g3, 0.0) + max(g4, 0.0)
    if not v > 0:
        return f
    return f + weight_or_offset * v if penalty else weight_or_offset + v


@inner
def _spring_penalty(x, data):
    return spring(x, True, data[0])


@inner
def _spring_deb(x, data):
    return spring(x, False, data[0])


@inner
def otsu(x, sums):
    """Minus the between-class variance of the thresholds floor(x) in 0..255 (sorted), from
    the cumulative sums omega = sums[:257], mu = sums[257:]: `OtsuThresholding.evaluate`."""
    levels, top = x.shape[0], 256
    for d in range(levels):
        if x[d] != x[d]:
            return math.nan
    t = np.empty(levels + 2, np.int64)  # the class edges: 0, t_1 + 1, ..., t_K + 1, 256
    t[0], t[levels + 1] = 0, top
    for d in range(levels):
        t[d + 1] = np.int64(min(max(math.floor(np.float64(x[d])), 0.0), 255.0)) + 1
    t[1:levels + 1].sort()
    mu_t, acc = sums[top + 1 + top], 0.0  # mu[256]: the mean grey level
    for j in range(levels + 1):
        w = sums[t[j + 1]] - sums[t[j]]
        m = sums[top + 1 + t[j + 1]] - sums[top + 1 + t[j]]
        if w > 0:  # w_j (mu_j - mu_T)^2, mu_j = m_j / w_j; empty classes add nothing
            acc += (m - w * mu_t) ** 2 / w
    return -acc


#: The objective of each fid, f(x, data) -> float64, x one point (1-D), data its numbers.
OBJECTIVES = (None, rows.sphere, rows.euclidean, rows.rastrigin, rows.ackley, rows.griewank, rows.rosenbrock,
              rows.schwefel_1_2, rows.schwefel_2_21, rows.schwefel_2_22, rows.schwefel_2_26, rows.step, rows.zakharov,
              rows.levy, rows.bent_cigar, rows.elliptic, rows.hgbat, _spring_penalty, _spring_deb, otsu,
              None)  # (USER: the user's function has a wrapper of its own; CEC2022, CEC2017: `compiled_objective`)

_compiled: dict = {}


def compiled_objective(fid: int, dtype) -> object:
    """The C-callable `double f(T *x, intp n, double *data, intp m)` of built-in objective
    `fid` for points of `dtype` (a Numba cfunc; `.address` is what the kernels call), compiled
    on first use and cached on disk: one small function, not every objective. For the CEC
    functions, `cpu_cec_block.compiled_block`'s `void f(T *xs, intp rows, intp n, double
    *data, intp m, double *out)` (one for both suites), which `call_block` calls."""
    if fid in (CEC2022, CEC2017):
        return cpu_cec_block.compiled_block(dtype)
    return compiled_row_function(_compiled, _wrapper, fid, dtype)


def compiled_row_function(compiled: dict, wrapper_of, fid: int, dtype) -> object:
    """`wrapper_of(fid)` as the C-callable `double f(T *x, intp n, double *data, intp m)` for
    points of `dtype`, kept in `compiled` (and on disk) once made: what `call_row` calls."""
    element = {torch.float32: types.float32, torch.float64: types.float64}[dtype]
    key = (fid, element)
    if key not in compiled:
        compiled[key] = cfunc(types.float64(types.CPointer(element), types.intp, types.CPointer(types.float64),
                                            types.intp), cache=True)(wrapper_of(fid))
    return compiled[key]


def _wrapper(fid: int):
    # fid is a closure constant: the cache keys each wrapper by it (an int pickles the same in
    # every process, so later processes load the machine code)
    def wrapper(x, n, data, m):
        return OBJECTIVES[fid](carray(x, n), carray(data, m))
    return wrapper


# -- what the kernels call ---------------------------------------------------------------------
def _block_call(context, builder, signature, args, out_ptr):
    """`fn(xs + start, rows, n, fdata + 1, len(fdata) - 1, out_ptr)` for the function at the
    address args[0] (see `call_block`)."""
    addr, array, first, rows, count, numbers = args[:6]
    view = context.make_array(signature.args[1])(context, builder, array)
    data = builder.gep(view.data, [first])
    rows = context.cast(builder, rows, signature.args[3], types.intp)
    count = context.cast(builder, count, signature.args[4], types.intp)
    extra = context.make_array(signature.args[5])(context, builder, numbers)
    one = context.get_constant(types.intp, 1)
    after = builder.gep(extra.data, [one])  # the numbers after the address
    m = builder.sub(builder.extract_value(extra.shape, 0), one)
    fnty = ir.FunctionType(ir.VoidType(), [data.type, rows.type, count.type, after.type, m.type, out_ptr.type])
    builder.call(builder.inttoptr(addr, fnty.as_pointer()), [data, rows, count, after, m, out_ptr])


def _block_types(xs, fdata, *integers) -> bool:
    return (isinstance(xs, types.Array) and xs.ndim == 1 and xs.layout == "C" and isinstance(xs.dtype, types.Float)
            and isinstance(fdata, types.Array) and fdata.ndim == 1 and fdata.dtype == types.float64
            and all(isinstance(t, types.Integer) for t in integers))


@intrinsic
def call_block(typingctx, address, xs, start, rows, n, fdata, out):
    """`fn` at `address` (`cpu_cec_block.compiled_block`) on the `rows` points of n values
    each of the 1-D contiguous float array xs from `start`, with the numbers after fdata[0],
    into out[:rows] (float64, contiguous): `call_row`'s way for a block of points."""
    if not (_block_types(xs, fdata, address, start, rows, n) and isinstance(out, types.Array)
            and out.dtype == types.float64 and out.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        into = context.make_array(signature.args[6])(context, builder, args[6]).data
        _block_call(context, builder, signature, args, into)
        return context.get_dummy_value()

    return types.none(address, xs, start, rows, n, fdata, out), codegen


@intrinsic
def call_block_one(typingctx, address, xs, start, n, fdata):
    """`call_block` for the one point xs[start:start + n]: its value, through a number on
    the stack (no array made per point)."""
    if not _block_types(xs, fdata, address, start, n):
        return None

    def codegen(context, builder, signature, args):
        one = context.get_constant(types.intp, 1)
        into = cgutils.alloca_once(builder, ir.DoubleType())
        sig = types.none(signature.args[0], signature.args[1], signature.args[2], types.intp, *signature.args[3:])
        _block_call(context, builder, sig, [*args[:3], one, *args[3:]], into)
        return builder.load(into)

    return types.float64(address, xs, start, n, fdata), codegen


@njit(cache=True, inline="always")
def value_of(fid, x, fdata):
    """The inline objective (fid > 0) at the point x (1-D contiguous), through its pointer."""
    if fid == CEC2022 or fid == CEC2017:
        return call_block_one(np.int64(fdata[0]), x, 0, x.shape[0], fdata)
    return call_row(np.int64(fdata[0]), x, 0, x.shape[0], fdata)


@njit(cache=True, inline="always")
def new_value(fid, fdata, x, f_in, row):
    """The row's objective value, NaN -> +inf (and whether it was NaN): inline, or for
    fid == 0 the one the engine's (already guarded) problem wrote to f_in."""
    f = value_of(fid, x, fdata) if fid else np.float64(f_in[row])
    if f != f:
        return math.inf, 1
    return f, 0


@inner
def block_values(fid, fdata, xs, dim, f_in, row0, vals):
    """The objective of a block's rows (flat coordinates xs) into vals (float64, NaN kept):
    sphere and euclidean as passes over coordinates that vectorise, the CEC functions as one
    call for the block, the other inline objectives row by row through their pointer (with
    no slice made per point), other problems read from f_in (rows row0, row0 + 1, ...)."""
    rows = xs.shape[0] // dim
    if fid == CEC2022 or fid == CEC2017:
        call_block(np.int64(fdata[0]), xs, 0, rows, dim, fdata, vals)
    elif fid == 1 or fid == 2:
        vals[:rows] = 0.0
        for d in range(dim):
            for i in range(rows):
                v = np.float64(xs[i * dim + d])
                vals[i] += v * v
        if fid == 2:
            for i in range(rows):
                vals[i] = math.sqrt(vals[i])
    elif fid:
        address = np.int64(fdata[0])
        for i in range(rows):
            vals[i] = call_row(address, xs, i * dim, dim, fdata)
    else:
        for i in range(rows):
            vals[i] = f_in[row0 + i]


@njit(cache=True)
def _each_block(fid, fdata, rows, block, out):
    """`block_values` over `block` rows at a time (the last block shorter), or with block = 0
    `value_of` row by row."""
    n, dim = rows.shape
    flat = rows.reshape(-1)
    if block == 0:
        for i in range(n):
            out[i] = value_of(fid, rows[i], fdata)
        return
    for r0 in range(0, n, block):
        r1 = min(n, r0 + block)
        block_values(fid, fdata, flat[r0 * dim:r1 * dim], dim, out, r0, out[r0:r1])


def values(problem, rows: np.ndarray, block: int = 256) -> np.ndarray:
    """The problem's inline objective (`inline_objective`) at each row of `rows` (n, D), as
    the kernels compute it, through the same pointer: float64 values (n,), `block` rows a
    call (as `block_values`; 0: one point a call, as `value_of`). For tests."""
    fid, fdata = inline_objective(problem)
    if not fid:
        raise ValueError(f"problem {problem.name!r} has no inline objective: the engine evaluates it between "
                         "kernel calls")
    rows = np.ascontiguousarray(rows, dtype=torch.empty(0, dtype=problem.lower.dtype).numpy().dtype)
    out = np.empty(rows.shape[0])
    _each_block(fid, fdata, rows, block, out)
    return out
