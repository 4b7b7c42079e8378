"""`TritonFunction`: your objective as a Triton function, computed inside the fused CUDA kernels.

    @triton.jit
    def sphere(x, mask):                 # a block of points, one per row of x
        return tl.sum(x * x, 1)          # one value per row

    problem = hs.TritonFunction(sphere, dim=30, lower=-100, upper=100)

`x` holds a block of points, one per row, (rows, BLOCK_D) with BLOCK_D the dimension
rounded up to a power of two; the coordinates past the D real ones are 0, and `mask`
(1, BLOCK_D) is True on the real ones (use it where a padding 0 would change the value,
e.g. a product or a `cos`). The function returns one value per row, in x's dtype. It is
Triton's idiom of "a function of one point": block code over many points at once.

The fused CUDA kernels (`engine="fused"`, PSO, PRS, FEP, synchronous Firefly, APO) call it
inline, in the same program that moves the points: Triton takes a `@triton.jit` function
as a `tl.constexpr` argument and specialises the kernel for it (compiled once per function,
then cached on disk by Triton). Elsewhere (eager, graph and compiled steps, other
algorithms) a small Triton kernel evaluates the points; on a CPU only Triton's interpreter
(`TRITON_INTERPRET=1`) can run it.
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

from .base import BoundLike, Problem

#: What @triton.jit makes: a JITFunction, or under TRITON_INTERPRET=1 an InterpretedFunction.
_TRITON_FUNCTIONS = (triton.runtime.JITFunction,) + tuple(
    cls for cls in (getattr(getattr(triton.runtime, "interpreter", None), "InterpretedFunction", None),) if cls)


@triton.jit
def _each_row(x_ptr, out_ptr, N, D, FN: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr):
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    d = tl.arange(0, BLOCK_D)
    mask = (d < D)[None, :]
    x = tl.load(x_ptr + p.to(tl.int64)[:, None] * D + d[None, :], mask=(p < N)[:, None] & mask, other=0.0)
    tl.store(out_ptr + p, FN(x, mask), mask=p < N)


class TritonFunction(Problem):
    """`fn(x[rows, BLOCK_D], mask[1, BLOCK_D]) -> f[rows]`, a `@triton.jit` function."""

    def __init__(self, fn, dim: int, lower: BoundLike, upper: BoundLike, *, name: str | None = None,
                 optimum_f: float | None = None, optimum_x: BoundLike | None = None) -> None:
        if not isinstance(fn, _TRITON_FUNCTIONS):
            raise ValueError(f"TritonFunction takes a @triton.jit function of a block of points (x, mask) returning "
                             f"one value per row, got {type(fn).__name__}; use TorchFunction for torch code")
        super().__init__(dim, lower, upper, optimum_f=optimum_f, optimum_x=optimum_x)
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "triton-function")

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type != "cuda" and os.environ.get("TRITON_INTERPRET", "0") != "1":
            raise ValueError(f"objective {self.name!r} is a Triton function: it runs on CUDA devices (or on the CPU "
                             "under TRITON_INTERPRET=1); use device='cuda'")
        rows = x.detach().reshape(-1, self.dim).contiguous()
        out = torch.empty(rows.shape[0], device=x.device, dtype=x.dtype)
        block_d = max(2, triton.next_power_of_2(self.dim))
        block_p = max(1, min(128, 4096 // block_d))
        _each_row[(triton.cdiv(rows.shape[0], block_p),)](rows, out, rows.shape[0], self.dim, FN=self.fn,
                                                          BLOCK_P=block_p, BLOCK_D=block_d)
        return out.reshape(x.shape[:-1])
