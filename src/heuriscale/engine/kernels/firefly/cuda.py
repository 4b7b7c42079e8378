"""The synchronous Firefly iteration as two Triton kernels (all pairs without an N x N matrix).

`algorithms/firefly.py` is the reference. `_attract` takes a block of fireflies i of one run
and streams every firefly j past it, as flash attention streams keys: per tile of j it
forms r_ij^2 = |x_i|^2 + |x_j|^2 - 2 x_i.x_j (one matrix product), the weights
w_ij = [f_j < f_i] beta0 exp(-gamma r_ij^2), and accumulates sum_j w_ij x_j (a second
product) and sum_j w_ij in registers; the attraction is their difference. The move, the
noise alpha U(-1, 1) (for fireflies with a brighter one), the clamp and the objective follow
in the same program. float32 products use 3xTF32 (float32 accuracy on tensor cores; plain
TF32 would wreck r^2 by cancellation), float64 ones IEEE.
`_finish` reduces the block bests for the engine's bookkeeping.

The update is synchronous (every firefly moves from the previous positions), so the new
population goes to a second buffer; the two buffers alternate.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..cuda_common import (
    FusedIteration,
    finish_run,
    launch,
    new_values,
    store_block_best,
    tile,
    uniform_pairs,
)

#: Widest dimension taken: a block of 64 fireflies' rows and its accumulator stay in registers.
MAX_DIM = 256


@triton.jit
def _attract(
    x_ptr, f_ptr, x_out_ptr, f_out_ptr, f_in_ptr, lower_ptr, upper_ptr, coef_ptr, block_f_ptr, block_i_ptr,
    nan_ptr, counter_ptr, it_ptr, r_ptr, seed, N, D, NB, RPD,
    FITNESS: tl.constexpr, USER_FN: tl.constexpr, MOVE: tl.constexpr, SELECT: tl.constexpr, GIVEN_R: tl.constexpr,
    EMIT_R: tl.constexpr, WIDE: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_J: tl.constexpr, BLOCK_D: tl.constexpr,
    PRECISION: tl.constexpr,
):
    block, run, i, d, im, dm, mask, row, off = tile(N, D, BLOCK_P, BLOCK_D, WIDE)

    if MOVE:
        xi = tl.load(x_ptr + off, mask=mask, other=0.0)
        fi = tl.load(f_ptr + row, mask=im, other=float("-inf"))  # padding rows have no brighter j
        alpha, beta0, gamma = tl.load(coef_ptr + 1), tl.load(coef_ptr + 2), tl.load(coef_ptr + 3)
        sq_i = tl.sum(xi * xi, 1)
        pull = tl.zeros((BLOCK_P, BLOCK_D), dtype=xi.dtype)
        weight_sum = tl.zeros((BLOCK_P,), dtype=xi.dtype)
        brighter_count = tl.zeros((BLOCK_P,), dtype=tl.int32)
        for start in range(0, N, BLOCK_J):
            j = start + tl.arange(0, BLOCK_J)
            jm = j < N
            xj = tl.load(x_ptr + (run * N + j)[:, None] * D + d[None, :], mask=jm[:, None] & dm[None, :], other=0.0)
            fj = tl.load(f_ptr + run * N + j, mask=jm, other=float("inf"))
            sq_j = tl.sum(xj * xj, 1)
            r2 = sq_i[:, None] + sq_j[None, :] - 2.0 * tl.dot(xi, tl.trans(xj), input_precision=PRECISION)
            brighter = fj[None, :] < fi[:, None]
            w = tl.where(brighter, beta0 * tl.exp(-gamma * tl.maximum(r2, 0.0)), 0.0)
            pull += tl.dot(w, xj, input_precision=PRECISION)
            weight_sum += tl.sum(w, 1)
            brighter_count += tl.sum(brighter.to(tl.int32), 1)
        pull = pull - weight_sum[:, None] * xi
        if GIVEN_R:  # the test hook: the eager step's own random numbers
            u = tl.load(r_ptr + off, mask=mask, other=0.0)
        else:
            u, _ = uniform_pairs(seed, counter_ptr, row, BLOCK_P, BLOCK_D, WIDE)
            u = u.to(xi.dtype)
            if EMIT_R:
                tl.store(r_ptr + off, u, mask=mask)
        noise = alpha * (2.0 * u - 1.0)
        x = xi + pull + tl.where((brighter_count > 0)[:, None], noise, 0.0)
        lower = tl.load(lower_ptr + d, mask=dm, other=0.0)[None, :]
        upper = tl.load(upper_ptr + d, mask=dm, other=0.0)[None, :]
        x = tl.minimum(tl.maximum(x, lower), upper)
        tl.store(x_out_ptr + off, x, mask=mask)
        if (block == 0) & (run == 0):
            tl.store(it_ptr, tl.load(it_ptr) + 1)
    else:
        x = tl.load(x_out_ptr + off, mask=mask, other=0.0)

    if SELECT:
        f = new_values(x, f_in_ptr, nan_ptr, run, row, im, d, dm, D, FITNESS, USER_FN)
        tl.store(f_out_ptr + row, f, mask=im)
        store_block_best(f, im, block, run, NB, block_f_ptr, block_i_ptr, BLOCK_P)


@triton.jit(do_not_specialize=["record_ptr"])  # (see cuda_common.track_args)
def _finish(
    block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, counter_ptr, coef_ptr,
    N, D, NB, HAS_TARGET: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr,
):
    finish_run(block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, counter_ptr,
               coef_ptr, N, D, NB, HAS_TARGET, BLOCK_B, BLOCK_D)


class FusedFirefly(FusedIteration):
    """One engine iteration of synchronous `Firefly`; the population alternates between two buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        self.block_d = max(16, triton.next_power_of_2(problem.dim))  # tl.dot needs 16 or more
        # Tiles of 64 x 64 pairs, 4 warps, 3xTF32 products (float32 accuracy on tensor cores):
        # the fastest measured on an H100 for N = 16,384, D = 32 (IEEE products: 2x slower).
        self.block_j = 64
        super().__init__(problem, runs, algorithm.pop_size, 64, [float(c) for c in algorithm.coefficients(problem)],
                         target, seed)
        self.num_warps = 4
        self.precision = "tf32x3"

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        out = self.other_buffers(s)
        args = dict(
            x_ptr=s.x, f_ptr=s.f, x_out_ptr=out.x, f_out_ptr=out.f, lower_ptr=self.lower, upper_ptr=self.upper,
            coef_ptr=self.coef, block_f_ptr=self.block_f, block_i_ptr=self.block_i, nan_ptr=self.problem.nan_evals,
            counter_ptr=self.counter, it_ptr=it, N=self.pop, D=self.dim, NB=self.blocks, FITNESS=self.fitness,
            USER_FN=self.user_fn,
            BLOCK_P=self.block_p, BLOCK_J=self.block_j, BLOCK_D=self.block_d, num_warps=self.num_warps,
            PRECISION=self.precision if s.x.dtype == torch.float32 else "ieee", **self.random_args(s.x),
        )
        self.move_and_select(_attract, args, out.x, out.f)
        launch(_finish, (self.runs,),
            self.block_f, self.block_i, out.x, N=self.pop, D=self.dim, NB=self.blocks, BLOCK_D=self.block_d,
            **self.track_args(best_x, hit, it, best_f, record), **self.reduce_args(),
        )
        return out, best_x, hit, it, best_f


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = FusedFirefly


def unsupported(algorithm) -> str | None:
    """These kernels move every firefly from the previous generation (the synchronous update)."""
    if algorithm.update != "synchronous":
        return (f"the fused Firefly kernels implement update='synchronous' only, not {algorithm.update!r} "
                "(paper 002's sequential CPU listing)")
    return None
