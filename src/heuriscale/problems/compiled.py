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
def call_row(typingctx, address, xs, start, n):
    """`fn(xs[start:start + n])` for the compiled function at `address` (an integer):
    `double fn(T *data, intp n)` over n values of the 1-D contiguous float array `xs` from
    `start`. A call through a pointer known only at run time, so one compiled (and
    disk-cached) kernel serves every user's function; with no slice made (an array made per
    point costs atomic reference counts Numba cannot prune: 22 ns a point against 4 ns
    without, measured in `block_values`)."""
    if not (isinstance(xs, types.Array) and xs.ndim == 1 and isinstance(xs.dtype, types.Float)):
        return None
    if not all(isinstance(t, types.Integer) for t in (address, start, n)):
        return None

    def codegen(context, builder, signature, args):
        addr, array, first, count = args
        view = context.make_array(signature.args[1])(context, builder, array)
        data = builder.gep(view.data, [first])
        count = context.cast(builder, count, signature.args[3], types.intp)
        fn = builder.inttoptr(addr, ir.FunctionType(ir.DoubleType(), [data.type, count.type]).as_pointer())
        return builder.call(fn, [data, count])

    return types.float64(address, xs, start, n), codegen


@njit(cache=True, inline="always")
def call_point(address, x):
    """`fn(x)` for the compiled function at `address`, `x` one point (a 1-D contiguous array)."""
    return call_row(address, x, 0, x.shape[0])


@njit(cache=True)
def _each_row(address, rows, out):
    for i in range(rows.shape[0]):
        out[i] = call_point(address, rows[i])


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
        """The address of `double wrapper(T *point, intp dim)` calling `fn` on a point of
        `dtype`, compiled on first use (a clear error if `fn` does not compile for it)."""
        dtype = np.dtype(torch.empty(0, dtype=dtype).numpy().dtype if isinstance(dtype, torch.dtype) else dtype)
        if dtype not in self._wrappers:
            element = {np.dtype(np.float32): types.float32, np.dtype(np.float64): types.float64}[dtype]
            fn = self.fn
            try:
                wrapper = cfunc(types.float64(types.CPointer(element), types.intp))(
                    lambda data, n: fn(carray(data, n)))
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
        _each_row(self.address(rows.dtype), rows, out)
        return out


def _what_numba_says(exc: Exception) -> str:
    """The line of a Numba compile error that says what is wrong (its first lines only name
    the compiler's pass, its last ones where it was)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    said = [line for line in lines if not line.startswith(("Failed in", "During:", "File ", "<source", "^"))]
    return (said or lines or [type(exc).__name__])[0]
