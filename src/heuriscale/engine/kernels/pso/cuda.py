"""PSO's iteration as one Triton kernel: the fused fast path of the CUDA engine.

The math is `algorithms/pso.py`'s, which stays the reference (the tests compare the two
with the same random numbers); what changes is how many times the population crosses
memory. The compiled step needs about twenty kernels per iteration; here there is one
launch (two where the problem is evaluated between them), chained to the next one
(`cuda_chain`):

`_move`, one program per block of particles of one run: the run's gbest after the last
iteration, from that iteration's block bests (the best of them replaces gbest when strictly
better; eager PSO takes the first argmin of pbest_f: on exact ties the two may keep different,
equally good points), and block 0 the engine's bookkeeping of that iteration; r1, r2
(cuda_common.uniform_pairs), velocity (2) with the +-vmax clamp, position (3) clamped to the
box, the objective (built-in functions inline; any other problem is evaluated between a move
launch and a select launch), NaN -> +inf counted per run, personal bests replaced where
strictly better, and the block's best new value with its point for the next launch.

State tensors are updated in place, so a CUDA graph of K iterations replays over the same
buffers.
"""

from __future__ import annotations

import triton
import triton.language as tl

from ..cuda_chain import (
    ChainedIteration,
    finish_pending,
    let_next_start,
    load_pending,
    pass_counts,
    start_after_last,
    store_block_best_row,
)
from ..cuda_common import row_tiles, tile, uniform_pairs_at, values_and_nans, where_row

#: Widest dimension the fused kernels take (one program keeps a particle's row in registers).
MAX_DIM = 4096
#: In D = 2 a thread holds whole rows (`tile`'s DENSE: one load of a row, and a Philox call's
#: two pairs are its r1 and r2, so no exchange between threads), and a program holds at most
#: PAIR_TILE_ROWS of them with 2 warps: at paper 001's 65,536 x 2 on an H200 an iteration took
#: 3.00 us, against 3.25 with `row_tiles`' 512 rows and 4 warps and 3.04 with 256 and 4 (the
#: block-wide reductions' barriers are shorter over fewer warps; docs/benchmarks.md).
PAIR, PAIR_TILE_ROWS = 2, 256


def pso_tiles(dim: int, pop: int) -> tuple[int, int, int]:
    """(BLOCK_D, BLOCK_P, num_warps) of PSO's programs: `row_tiles`', but in D = 2 at most
    PAIR_TILE_ROWS rows and 2 warps."""
    block_d, block_p, num_warps = row_tiles(dim, pop)
    if dim == PAIR:
        return block_d, min(block_p, PAIR_TILE_ROWS), 2
    return block_d, block_p, num_warps


@triton.jit(do_not_specialize=["record_ptr"])  # (see cuda_common.track_args)
def _move(
    x_ptr, v_ptr, f_ptr, f_in_ptr, pbest_x_ptr, pbest_f_ptr, gbest_x_in_ptr, gbest_x_out_ptr, gbest_f_in_ptr,
    gbest_f_out_ptr, lower_ptr, upper_ptr, vmax_ptr, coef_ptr, block_f_in_ptr, block_f_out_ptr, block_x_in_ptr,
    block_x_out_ptr, nan_ptr, counter_in_ptr, counter_out_ptr, it_in_ptr, it_out_ptr, r_ptr,
    best_x_ptr, best_f_ptr, hit_ptr, record_ptr,
    seed, P, D, NB, RPD,
    FITNESS: tl.constexpr, USER_FN: tl.constexpr, MOVE: tl.constexpr, SELECT: tl.constexpr, PENDING: tl.constexpr,
    GIVEN_R: tl.constexpr, EMIT_R: tl.constexpr, WIDE: tl.constexpr, HAS_TARGET: tl.constexpr, PDL: tl.constexpr,
    DENSE: tl.constexpr, ALL: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_B: tl.constexpr,
):
    block, run, p, d, pm, dm, mask, row, off = tile(P, D, BLOCK_P, BLOCK_D, WIDE, DENSE)
    start_after_last(PDL)
    # Every load first, the last launch's block bests too: a warp issues in order, so a load
    # after the first use of another would wait for it. Then one round trip for all.
    x = tl.load(x_ptr + off, mask=mask, other=0.0)
    if SELECT:  # loaded with the others, not after the stores below (which it might alias)
        pbest_f = tl.load(pbest_f_ptr + row, mask=pm, other=float("inf"))
    if MOVE:
        v = tl.load(v_ptr + off, mask=mask, other=0.0)
        pbest = tl.load(pbest_x_ptr + off, mask=mask, other=0.0)
        if GIVEN_R:  # the test hook: the eager step's own random numbers
            r1 = tl.load(r_ptr + off, mask=mask, other=0.0)
            r2 = tl.load(r_ptr + RPD + off, mask=mask, other=0.0)
        w, c1, c2 = tl.load(coef_ptr + 1), tl.load(coef_ptr + 2), tl.load(coef_ptr + 3)
        vmax = tl.load(vmax_ptr + d, mask=dm, other=0.0)[None, :]
        lower = tl.load(lower_ptr + d, mask=dm, other=0.0)[None, :]
        upper = tl.load(upper_ptr + d, mask=dm, other=0.0)[None, :]
    if MOVE or not SELECT:  # (not the select launch after a problem's evaluation) the chain's links
        count, it = tl.load(counter_in_ptr), tl.load(it_in_ptr)
        gbest_f = tl.load(gbest_f_in_ptr + run)
        gbest = tl.load(gbest_x_in_ptr + run * D + d, mask=dm, other=0.0)
        if PENDING:
            pending = load_pending(block_f_in_ptr, block_x_in_ptr, best_f_ptr, hit_ptr, coef_ptr, run, NB, D, d, dm,
                                   BLOCK_B, ALL)

        pass_counts(count, it, counter_out_ptr, it_out_ptr, block, run, MOVE, PENDING)
        if PENDING:  # the last iteration's best new point: gbest's candidate, and its bookkeeping
            m, best = finish_pending(pending, it, block_f_in_ptr, block_x_in_ptr, best_x_ptr, best_f_ptr, hit_ptr,
                                     record_ptr, block, run, NB, D, d, dm, HAS_TARGET, BLOCK_B, ALL, DENSE)
            new_gbest = m < gbest_f
            gbest_f = tl.where(new_gbest, m, gbest_f)
            gbest = tl.where(new_gbest, best, gbest)
        tl.store(gbest_f_out_ptr + run, gbest_f, mask=block == 0)
        tl.store(gbest_x_out_ptr + run * D + d, gbest, mask=where_row(dm, block == 0))

    if MOVE:
        if not GIVEN_R:
            r1, r2 = uniform_pairs_at(seed, count, row, BLOCK_P, BLOCK_D, WIDE)
            r1, r2 = r1.to(x.dtype), r2.to(x.dtype)
            if EMIT_R:  # the test hook: hand the numbers drawn out
                tl.store(r_ptr + off, r1, mask=mask)
                tl.store(r_ptr + RPD + off, r2, mask=mask)
        v = w * v + c1 * r1 * (pbest - x) + c2 * r2 * (gbest[None, :] - x)  # (2)
        v = tl.minimum(tl.maximum(v, -vmax), vmax)
        x = tl.minimum(tl.maximum(x + v, lower), upper)  # (3)
        tl.store(v_ptr + off, v, mask=mask)
        tl.store(x_ptr + off, x, mask=mask)

    if SELECT:
        f, nan = values_and_nans(x, f_in_ptr, row, pm, d, dm, D, FITNESS, USER_FN)
        tl.store(f_ptr + row, f, mask=pm)
        improved = f < pbest_f
        tl.store(pbest_f_ptr + row, f, mask=pm & improved)
        tl.store(pbest_x_ptr + off, x, mask=mask & improved[:, None])
        store_block_best_row(f, nan, x, pm, block, run, NB, D, d, dm, block_f_out_ptr, block_x_out_ptr, nan_ptr,
                             BLOCK_P)
    let_next_start(PDL)


class FusedPSO(ChainedIteration):
    """One engine iteration of `PSO`, in place on the state's buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        self.block_d, block_p, self.num_warps = pso_tiles(problem.dim, algorithm.pop_size)
        self.dense = problem.dim == PAIR
        super().__init__(problem, runs, algorithm.pop_size, block_p, [algorithm.w, algorithm.c1, algorithm.c2],
                         target, seed)
        self.vmax = algorithm.velocity_limit(problem).contiguous()

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        args = dict(
            x_ptr=s.x, v_ptr=s.v, f_ptr=s.f, pbest_x_ptr=s.pbest_x, pbest_f_ptr=s.pbest_f,
            lower_ptr=self.lower, upper_ptr=self.upper, vmax_ptr=self.vmax, nan_ptr=self.problem.nan_evals,
            P=self.pop, D=self.dim, NB=self.blocks, FITNESS=self.fitness, USER_FN=self.user_fn, DENSE=self.dense,
            BLOCK_P=self.block_p, BLOCK_D=self.block_d, num_warps=self.num_warps, **self.random_args(s.x),
            **self.book_args(best_x, hit, best_f, record),
        )
        self.launch_linked(_move, args, {"gbest_f": s.gbest_f, "gbest_x": s.gbest_x}, it, s.x, s.f)
        return s, best_x, hit, it, best_f


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = FusedPSO
