"""`NumbaFunction`: your objective compiled with Numba, called inside the native CPU kernels.

    @numba.njit
    def sphere(x):                      # one point: a 1-D float array (float32 or float64)
        s = 0.0
        for i in range(x.shape[0]):
            v = np.float64(x[i])         # in float64, as the built-in functions compute
            s += v * v
        return s                        # one number

    problem = hs.NumbaFunction(sphere, dim=30, lower=-100, upper=100)

The engine's native CPU kernels (`engine="native"`) call it for each point from inside the
kernel, through a function pointer (a C-callable wrapper that Numba compiles once per
dtype): no return to Python between iterations, which is what makes a user's objective as
fast as a built-in one there. Elsewhere (the eager step, CUDA) it is a host objective: the
points are evaluated on the CPU by a compiled loop over them.

The function must compile for a 1-D float32 and float64 array (`numba.njit` infers the
types) and must not raise: a compiled callback has no way to hand an exception back, so
return NaN for a point it cannot evaluate (NaN is counted and never becomes a best).
Compute in float64 as above: float32 products of tiny numbers are subnormal, which an Intel
CPU computed about 4x slower per iteration in our first benchmark (a converging run on the
sphere gets there).
"""

from __future__ import annotations

import numpy as np
import torch
from numba import carray, cfunc, njit, types
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic
from llvmlite import ir

from .adapters import ObjectiveError, _HostFunction
from .base import BoundLike


@intrinsic
def call_row(typingctx, address, xs, start, n, fdata):
    """`fn(xs[start:start + n], fdata[1:])` for the compiled function at `address` (an
    integer): `double fn(T *x, intp n, double *data, intp m)` over n values of the 1-D
    contiguous float array `xs` from `start`, and the m = len(fdata) - 1 float64 numbers after
    fdata[0] (a built-in objective's data; fdata[0] is where kernels keep the address). A
    call through a pointer known only at run time, so one compiled (and disk-cached) kernel
    serves every objective; with no slice made (an array made per point costs atomic
    reference counts Numba cannot prune: 22 ns a point against 4 ns without, measured in
    `block_values`)."""
    if not (isinstance(xs, types.Array) and xs.ndim == 1 and xs.layout == "C" and isinstance(xs.dtype, types.Float)):
        return None  # (the function reads n numbers from xs's data pointer: contiguous only)
    if not (isinstance(fdata, types.Array) and fdata.ndim == 1 and fdata.dtype == types.float64):
        return None
    if not all(isinstance(t, types.Integer) for t in (address, start, n)):
        return None

    def codegen(context, builder, signature, args):
        addr, array, first, count, numbers = args
        view = context.make_array(signature.args[1])(context, builder, array)
        data = builder.gep(view.data, [first])
        count = context.cast(builder, count, signature.args[3], types.intp)
        extra = context.make_array(signature.args[4])(context, builder, numbers)
        one = context.get_constant(types.intp, 1)
        after = builder.gep(extra.data, [one])  # the numbers after the address
        m = builder.sub(builder.extract_value(extra.shape, 0), one)
        fnty = ir.FunctionType(ir.DoubleType(), [data.type, count.type, after.type, m.type])
        fn = builder.inttoptr(addr, fnty.as_pointer())
        return builder.call(fn, [data, count, after, m])

    return types.float64(address, xs, start, n, fdata), codegen


@njit(cache=True)
def _each_row(address, rows, out, fdata):
    for i in range(rows.shape[0]):
        out[i] = call_row(address, rows[i], 0, rows.shape[1], fdata)


#: fdata of a user's function: only its address, no numbers after it (see `call_row`).
_NO_NUMBERS = np.zeros(1)


class NumbaFunction(_HostFunction):
    """`fn(x[D]) -> float`, a `numba.njit` function of one point."""

    def __init__(self, fn, dim: int, lower: BoundLike, upper: BoundLike, *, name: str | None = None,
                 optimum_f: float | None = None, optimum_x: BoundLike | None = None) -> None:
        if not isinstance(fn, CPUDispatcher):
            raise ValueError(f"NumbaFunction takes a numba.njit function of one point (a 1-D float array) returning "
                             f"a number, got {type(fn).__name__}; decorate it with @numba.njit, or use ScalarFunction "
                             "for a plain Python function")
        super().__init__(fn, dim, lower, upper, name=name or getattr(fn, "__name__", "numba-function"),
                         optimum_f=optimum_f, optimum_x=optimum_x)
        self._wrappers: dict = {}  # dtype -> the compiled C-callable wrapper (kept alive with the problem)

    def address(self, dtype: torch.dtype | np.dtype) -> int:
        """The address of `double wrapper(T *point, intp dim, double *data, intp m)` calling
        `fn` on a point of `dtype` (data unused: the built-in objectives' convention, see
        `call_row`), compiled on first use (a clear error if `fn` does not compile for it)."""
        dtype = np.dtype(torch.empty(0, dtype=dtype).numpy().dtype if isinstance(dtype, torch.dtype) else dtype)
        if dtype not in self._wrappers:
            element = {np.dtype(np.float32): types.float32, np.dtype(np.float64): types.float64}[dtype]
            fn = self.fn
            try:
                wrapper = cfunc(types.float64(types.CPointer(element), types.intp, types.CPointer(types.float64),
                                              types.intp))(lambda data, n, numbers, m: fn(carray(data, n)))
            except Exception as exc:  # noqa: BLE001 - Numba's typing errors span many lines
                raise ObjectiveError(f"objective {self.name!r} does not compile for a point of {dtype.name} values "
                                     f"(a 1-D array) returning a number: {_what_numba_says(exc)}") from exc
            self._wrappers[dtype] = wrapper
        return self._wrappers[dtype].address

    def _evaluate_rows(self, rows: np.ndarray) -> np.ndarray:
        """`fn` of each row of `rows` (n, D) as float64 values (n,), by a compiled loop (on the
        host: the eager step's points, a GPU's through pinned buffers, see _HostFunction)."""
        rows = np.ascontiguousarray(rows)
        out = np.empty(rows.shape[0])
        _each_row(self.address(rows.dtype), rows, out, _NO_NUMBERS)
        return out


def _what_numba_says(exc: Exception) -> str:
    """The line of a Numba compile error that says what is wrong (its first lines only name
    the compiler's pass, its last ones where it was)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    said = [line for line in lines if not line.startswith(("Failed in", "During:", "File ", "<source", "^"))]
    return (said or lines or [type(exc).__name__])[0]
