"""Prism Refraction Search's iteration as one Triton kernel: the fused fast path.

`algorithms/prs.py` is the reference (the tests compare the two with the same random
numbers). Paper 000's configuration (1,024 rays, D = 4) is tiny: its compiled step is
bound by launching about ten kernels per iteration, not by arithmetic. Here there is one
launch (two where the problem is evaluated between them), chained to the next one
(`cuda_chain`):

`_refract`, one program per block of rays of one run: from the last iteration's block bests
and block sums, the mean deviation (10) and the apex angle's decay (12) (the chain's t
counted once per iteration), block 0 the engine's bookkeeping of that iteration; mu (10), E
(9), the refracted angle (11) with r = 2 U - 1 from Philox, the angle mapped onto the box,
the objective inline (other problems are evaluated between a refract launch and a select
launch), NaN -> +inf counted, and the block's best value, its point and its sum of values
for the next launch.

The mean deviation between chains is kept in a buffer of the fused iteration (`mean`, one
per run), computed from the state's values when the run starts.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..cuda_chain import (
    ChainedIteration,
    finish_pending,
    let_next_start,
    load_pending,
    pass_counts,
    product_rounded,
    start_after_last,
    store_block_best_row,
)
from ..cuda_common import row_tiles, sum_blocks_from, tile, uniform_pairs_at, values_and_nans

#: Widest dimension the fused kernels take (one program keeps a ray's row in registers).
MAX_DIM = 4096
_DEG = tl.constexpr(0.017453292519943295)  # radians per degree


@triton.jit
def _sqrt(a, FP64: tl.constexpr):
    """Correctly rounded square root (float32's tl.sqrt may be approximate)."""
    if FP64:  # (if/else, not an early return: the compiler builds both branches otherwise)
        root = tl.sqrt(a)
    else:
        root = tl.sqrt_rn(a)
    return root


@triton.jit
def _asin(a, FP64: tl.constexpr):
    """arcsin on [-1, 1] from core operations (Triton's interpreter has no libdevice):
    Cephes' asinf polynomial on [0, 1/2] (2.4 ulp in float32), asin(a) = pi/2 - 2 asin(s)
    with s = sqrt((1 - a) / 2) above; in float64 one Newton step on sin(y) = s (s <= 1/2, so
    cos(y) >= 0.87) takes the polynomial's 1e-8 to 1 ulp."""
    size = tl.abs(a)
    above = size > 0.5
    s = tl.where(above, _sqrt((1.0 - size) * 0.5, FP64), size)
    z = s * s
    p = (((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z + 1.6666752422e-1
    y = s + s * z * p
    if FP64:
        y = y - (tl.sin(y) - s) / tl.cos(y)
    y = tl.where(above, 1.5707963267948966 - 2.0 * y, y)
    return tl.where(a < 0, -y, y)


@triton.jit(do_not_specialize=["record_ptr"])  # (see cuda_common.track_args)
def _refract(
    theta_ptr, x_ptr, f_ptr, f_in_ptr, apex_in_ptr, apex_out_ptr, t_in_ptr, t_out_ptr, mean_ptr, lower_ptr, upper_ptr,
    block_f_in_ptr, block_f_out_ptr, block_x_in_ptr, block_x_out_ptr, block_s_in_ptr, block_s_out_ptr, nan_ptr,
    counter_in_ptr, counter_out_ptr, it_in_ptr, it_out_ptr, r_ptr, best_x_ptr, best_f_ptr, hit_ptr, record_ptr, coef_ptr,
    seed, P, D, NB, RPD,
    FITNESS: tl.constexpr, USER_FN: tl.constexpr, MOVE: tl.constexpr, SELECT: tl.constexpr, PENDING: tl.constexpr,
    GIVEN_R: tl.constexpr, EMIT_R: tl.constexpr, WIDE: tl.constexpr, FP64: tl.constexpr, HAS_TARGET: tl.constexpr,
    PDL: tl.constexpr, ALL: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_B: tl.constexpr,
):
    block, run, p, d, pm, dm, mask, row, off = tile(P, D, BLOCK_P, BLOCK_D, WIDE)
    start_after_last(PDL)
    # Every load first, the last launch's block bests too: a warp issues in order, so a load
    # after the first use of another would wait for it. Then one round trip for all.
    lower = tl.load(lower_ptr + d, mask=dm, other=0.0)[None, :]
    upper = tl.load(upper_ptr + d, mask=dm, other=0.0)[None, :]
    if MOVE:
        theta = tl.load(theta_ptr + off, mask=mask, other=0.0)
        delta = tl.load(f_ptr + row, mask=pm, other=0.0)  # this ray's deviation (its value)
        if GIVEN_R:  # the test hook: the eager step's own U[0, 1) numbers
            u = tl.load(r_ptr + off, mask=mask, other=0.0)
    else:
        x = tl.load(x_ptr + off, mask=mask, other=0.0)
    if MOVE or not SELECT:  # (not the select launch after a problem's evaluation) the chain's links
        count, it = tl.load(counter_in_ptr), tl.load(it_in_ptr)
        A = tl.load(apex_in_ptr + run)
        t = tl.load(t_in_ptr)  # the last iteration's t
        if PENDING:
            alpha, T = tl.load(coef_ptr + 1), tl.load(coef_ptr + 2)
            sums = tl.load(block_s_in_ptr + run * NB + tl.arange(0, BLOCK_B), mask=tl.arange(0, BLOCK_B) < NB,
                           other=0.0)
            pending = load_pending(block_f_in_ptr, block_x_in_ptr, best_f_ptr, hit_ptr, coef_ptr, run, NB, D, d, dm,
                                   BLOCK_B, ALL)
        else:
            mean = tl.load(mean_ptr + run)

        pass_counts(count, it, counter_out_ptr, it_out_ptr, block, run, MOVE, PENDING)
        if PENDING:
            mean = sum_blocks_from(sums, block_s_in_ptr, run, NB, BLOCK_B) / P  # (10)'s, of the last iteration's values
            finish_pending(pending, it, block_f_in_ptr, block_x_in_ptr, best_x_ptr, best_f_ptr, hit_ptr, record_ptr,
                           block, run, NB, D, d, dm, HAS_TARGET, BLOCK_B, ALL)
            A = product_rounded(A, tl.exp(-alpha * t / T))  # (12), rounded as when it was stored
            t = t + 1.0
            tl.store(mean_ptr + run, mean, mask=block == 0)  # (read by no launch of a chain but its first)
        tl.store(apex_out_ptr + run, A, mask=block == 0)
        tl.store(t_out_ptr, t, mask=(block == 0) & (run == 0))

    if MOVE:
        if not GIVEN_R:
            u, _ = uniform_pairs_at(seed, count, row, BLOCK_P, BLOCK_D, WIDE)
            u = u.to(theta.dtype)
            if EMIT_R:
                tl.store(r_ptr + off, u, mask=mask)
    if MOVE:
        mu = tl.sin((A + mean) / 2) / tl.sin(A / 2)  # (10), radians
        E = delta[:, None] - theta + A  # (9)
        r = 2.0 * u - 1.0
        sin_E = tl.sin(E * _DEG)
        A_rad = A * _DEG
        radicand = tl.maximum(mu * mu - sin_E * sin_E, 0.0)
        arg = -sin_E * tl.cos(A_rad) + r * tl.sin(A_rad) * _sqrt(radicand, FP64)
        theta = _asin(tl.minimum(tl.maximum(arg, -1.0), 1.0), FP64) / _DEG  # (11)
        x = tl.minimum(tl.maximum(lower + (upper - lower) * (theta + 90.0) / 180.0, lower), upper)  # as to_box
        tl.store(theta_ptr + off, theta, mask=mask)
        tl.store(x_ptr + off, x, mask=mask)

    if SELECT:
        f, nan = values_and_nans(x, f_in_ptr, row, pm, d, dm, D, FITNESS, USER_FN)
        tl.store(f_ptr + row, f, mask=pm)
        store_block_best_row(f, nan, x, pm, block, run, NB, D, d, dm, block_f_out_ptr, block_x_out_ptr, nan_ptr,
                             BLOCK_P)
        tl.store(block_s_out_ptr + run * NB + block, tl.sum(tl.where(pm, f, 0.0), 0))
    let_next_start(PDL)


class FusedPRS(ChainedIteration):
    """One engine iteration of `PRS`, in place on the state's buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        self.block_d, block_p, self.num_warps = row_tiles(problem.dim, algorithm.pop_size)
        super().__init__(problem, runs, algorithm.pop_size, block_p, [algorithm.alpha, float(algorithm.max_iters)],
                         target, seed, block_fields={"block_s": ()})
        self.mean = torch.empty(runs, device=self.lower.device, dtype=self.lower.dtype)  # the deviations' mean
        self.counters = (self.counter, self.mean)

    def prepare(self, state):
        state = super().prepare(state)
        self.mean.copy_(state.f.mean(-1))  # for the first iteration's (10)
        return state

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        args = dict(
            theta_ptr=s.theta, x_ptr=s.x, f_ptr=s.f, mean_ptr=self.mean, lower_ptr=self.lower, upper_ptr=self.upper,
            nan_ptr=self.problem.nan_evals, P=self.pop, D=self.dim, NB=self.blocks, FITNESS=self.fitness,
            USER_FN=self.user_fn, FP64=s.x.dtype == torch.float64,
            BLOCK_P=self.block_p, BLOCK_D=self.block_d, num_warps=self.num_warps, **self.random_args(s.x),
            **self.book_args(best_x, hit, best_f, record),
        )
        self.launch_linked(_refract, args, {"apex": s.apex, "t": s.t}, it, s.x, s.f)
        return s, best_x, hit, it, best_f


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = FusedPRS
