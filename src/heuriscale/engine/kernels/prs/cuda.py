"""Prism Refraction Search's iteration as one Triton kernel: the fused fast path.

`algorithms/prs.py` is the reference (the tests compare the two with the same random
numbers). Paper 000's configuration (1,024 rays, D = 4) is tiny: its compiled step is
bound by launching about ten kernels per iteration, not by arithmetic. Here there is one
launch (two where the problem is evaluated between them):

`_refract`, one program per block of rays of one run: mu (10) from the run's mean
deviation, E (9), the refracted angle (11) with r = 2 U - 1 from Philox, the angle mapped
onto the box, the objective inline (other problems are evaluated between a refract launch
and a select launch), NaN -> +inf counted, and the block's best value, its index and its
sum of values. The run's last block to finish (cuda_common.arrived_last) then does the
engine's bookkeeping from the block bests, the mean deviation for the next iteration (10)
from the block sums, and the apex angle's decay (12); the last run's advances the Philox
counter, the iteration count and t.

The mean deviation is carried between iterations in a buffer of the fused iteration
(`mean`, one per run), computed from the state's values when the run starts.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..cuda_common import (
    FusedIteration,
    arrived_last,
    best_of_run,
    finish_iteration,
    new_values,
    row_tiles,
    store_block_best,
    sum_blocks,
    tile,
    uniform_pairs,
)

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
    theta_ptr, x_ptr, f_ptr, f_in_ptr, apex_ptr, t_ptr, mean_ptr, lower_ptr, upper_ptr,
    block_f_ptr, block_i_ptr, block_s_ptr, nan_ptr, counter_ptr, it_ptr, r_ptr,
    best_x_ptr, best_f_ptr, hit_ptr, record_ptr, done_ptr, coef_ptr,
    seed, P, D, NB, RPD,
    FITNESS: tl.constexpr, USER_FN: tl.constexpr, MOVE: tl.constexpr, SELECT: tl.constexpr, GIVEN_R: tl.constexpr,
    EMIT_R: tl.constexpr, WIDE: tl.constexpr, FP64: tl.constexpr, HAS_TARGET: tl.constexpr, BLOCK_P: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_B: tl.constexpr,
):
    block, run, p, d, pm, dm, mask, row, off = tile(P, D, BLOCK_P, BLOCK_D, WIDE)
    lower = tl.load(lower_ptr + d, mask=dm, other=0.0)[None, :]
    upper = tl.load(upper_ptr + d, mask=dm, other=0.0)[None, :]

    if MOVE:
        theta = tl.load(theta_ptr + off, mask=mask, other=0.0)
        delta = tl.load(f_ptr + row, mask=pm, other=0.0)  # this ray's deviation (its value)
        A = tl.load(apex_ptr + run)
        mu = tl.sin((A + tl.load(mean_ptr + run)) / 2) / tl.sin(A / 2)  # (10), radians
        E = delta[:, None] - theta + A  # (9)
        if GIVEN_R:  # the test hook: the eager step's own U[0, 1) numbers
            u = tl.load(r_ptr + off, mask=mask, other=0.0)
        else:
            u, _ = uniform_pairs(seed, counter_ptr, row, BLOCK_P, BLOCK_D, WIDE)
            u = u.to(theta.dtype)
            if EMIT_R:
                tl.store(r_ptr + off, u, mask=mask)
        r = 2.0 * u - 1.0
        sin_E = tl.sin(E * _DEG)
        A_rad = A * _DEG
        radicand = tl.maximum(mu * mu - sin_E * sin_E, 0.0)
        arg = -sin_E * tl.cos(A_rad) + r * tl.sin(A_rad) * _sqrt(radicand, FP64)
        theta = _asin(tl.minimum(tl.maximum(arg, -1.0), 1.0), FP64) / _DEG  # (11)
        x = tl.minimum(tl.maximum(lower + (upper - lower) * (theta + 90.0) / 180.0, lower), upper)  # as to_box
        tl.store(theta_ptr + off, theta, mask=mask)
        tl.store(x_ptr + off, x, mask=mask)
    else:
        x = tl.load(x_ptr + off, mask=mask, other=0.0)

    if SELECT:
        f = new_values(x, f_in_ptr, nan_ptr, run, row, pm, d, dm, D, FITNESS, USER_FN)
        tl.store(f_ptr + row, f, mask=pm)
        store_block_best(f, pm, block, run, NB, block_f_ptr, block_i_ptr, BLOCK_P)
        tl.store(block_s_ptr + run * NB + block, tl.sum(tl.where(pm, f, 0.0), 0))
        if arrived_last(done_ptr, run, NB):  # the run's bookkeeping, by its last block
            best_of_run(block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, coef_ptr,
                        run, P, D, NB, HAS_TARGET, BLOCK_B, BLOCK_D, 1)
            tl.store(mean_ptr + run, sum_blocks(block_s_ptr, run, NB, BLOCK_B) / P)  # next iteration's (10)
            alpha, T = tl.load(coef_ptr + 1), tl.load(coef_ptr + 2)
            t = tl.load(t_ptr)  # this step's t (counted after every run's decay)
            tl.store(apex_ptr + run, tl.load(apex_ptr + run) * tl.exp(-alpha * t / T))  # (12)
            if finish_iteration(done_ptr, counter_ptr, it_ptr):
                tl.store(t_ptr, t + 1.0)


class FusedPRS(FusedIteration):
    """One engine iteration of `PRS`, in place on the state's buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        self.block_d, block_p, self.num_warps = row_tiles(problem.dim, algorithm.pop_size)
        super().__init__(problem, runs, algorithm.pop_size, block_p, [algorithm.alpha, float(algorithm.max_iters)],
                         target, seed)
        self.block_s = torch.empty_like(self.block_f)
        self.mean = torch.empty(runs, device=self.lower.device, dtype=self.lower.dtype)  # the deviations' mean
        self.counters = (self.counter, self.mean)

    def prepare(self, state):
        state = super().prepare(state)
        self.mean.copy_(state.f.mean(-1))  # for the first iteration's (10)
        return state

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        args = dict(
            theta_ptr=s.theta, x_ptr=s.x, f_ptr=s.f, apex_ptr=s.apex, t_ptr=s.t, mean_ptr=self.mean,
            lower_ptr=self.lower, upper_ptr=self.upper, block_f_ptr=self.block_f, block_i_ptr=self.block_i,
            block_s_ptr=self.block_s, nan_ptr=self.problem.nan_evals,
            P=self.pop, D=self.dim, NB=self.blocks, FITNESS=self.fitness,
            USER_FN=self.user_fn, FP64=s.x.dtype == torch.float64,
            BLOCK_P=self.block_p, BLOCK_D=self.block_d, num_warps=self.num_warps, **self.random_args(s.x),
            **self.finish_args(best_x, hit, it, best_f, record),
        )
        self.move_and_select(_refract, args, s.x, s.f)
        return s, best_x, hit, it, best_f


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = FusedPRS
