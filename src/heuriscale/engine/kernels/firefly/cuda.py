"""The synchronous Firefly iteration as Triton kernels (the pairs that can attract, no N x N matrix).

`algorithms/firefly.py` is the reference. Only a brighter firefly (strictly lower f) attracts,
so each iteration visits a run's population in order of f: `torch.sort` orders the values and
`_gather` writes the positions in that order, relative to a centre inside the swarm (below),
with their |x|^2. The firefly at sorted place i can then only be attracted by places before it,
and `_attract` visits only the tiles of pairs on or below the diagonal, about half of them.
Each of its programs takes a tile of receivers i and a range ("chunk") of attractor tiles j,
from a table made once (`chunks`: about the same work per program, whatever a tile's number
of attractors), and streams the tiles of j past i as flash attention streams keys: per tile
it forms r_ij^2 = |x_i|^2 + |x_j|^2 - 2 x_i.x_j (one matrix product), the weights
e_ij = [f_j < f_i] exp(-gamma r_ij^2) (the mask is applied in every tile: ties stay exact),
and adds up sum_j e_ij x_j (a second product) and sum_j e_ij into its chunk's partial sums.
`_move` adds a tile's partials in a fixed order (the same sum at every run), forms the
attraction beta0 (sum_j e_ij x_j - (sum_j e_ij) x_i), adds the noise alpha U(-1, 1) to the
fireflies that have a brighter one (f_i above the run's least f), clamps, and writes each
firefly to its own row, whose Philox counters draw its noise as without the sort; then the
objective. `_finish` reduces the block bests for the engine's bookkeeping.

Precision. float32 products are each three TF32 products on the tensor cores (a = a_hi + a_lo
with both halves TF32 numbers; a_lo b_hi + a_hi b_lo + a_hi b_hi: about float32's accuracy,
where one TF32 product would wreck r^2 by cancellation; docs/benchmarks.md has the errors
measured). `_gather` splits the positions once an iteration, stored by row for the first
product and by coordinate for the second (the layouts the tensor cores read without a
transpose); `_attract` splits only the weights. Positions are taken relative to the mean of
a sample of the run's fireflies (`_center`; r^2 and the attraction do not change): what
cancels in r^2 and in sum_j e_ij x_j - (sum_j e_ij) x_i is then the swarm's spread around
its middle, not its distance from the origin nor from the brightest firefly, which may sit
at its edge (measured in docs/benchmarks.md: the largest part of the error was there).
float64 products are IEEE. The tiles' and chunks' sums are added in float32 (in float64 on
request: `FusedFirefly.float64_sums`).

The update is synchronous (every firefly moves from the previous positions), so the new
population goes to a second buffer; the two buffers alternate.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..cuda_common import (
    FusedIteration,
    finish_run,
    launch,
    new_values,
    tile,
    uniform_pairs,
)

#: Widest dimension taken (BLOCK_D = 256: the largest tiles of TILES still fit).
MAX_DIM = 256
#: `FusedFirefly.tiles`' arguments (receivers per tile, attractors per tile, least attractors per
#: chunk, warps, pipeline stages) by float32 products (True) or float64, and BLOCK_D. float32 at
#: BLOCK_D = 32 is the fastest of 10 settings measured on an H200 at N = 16,384
#: (benchmarks/fused_tiles.py; 64 x 64 tiles, 4 warps: 1.37x slower); the others are the largest
#: tiles whose shared memory fits (227 KB) with few or no spilled registers (ptxas, sm_90).
TILES = {
    True: {16: (128, 64, 4096, 8, 2), 32: (128, 64, 4096, 8, 2), 64: (64, 32, 2048, 4, 2),
           128: (64, 16, 2048, 4, 2), 256: (64, 16, 2048, 4, 1)},
    False: {16: (64, 32, 2048, 4, 2), 32: (64, 32, 2048, 4, 2), 64: (64, 32, 2048, 4, 1),
            128: (64, 16, 2048, 4, 1), 256: (64, 16, 2048, 4, 1)},
}
#: `_center` averages this many rows (a point inside the swarm, within about a sixth of its spread).
CENTER_SAMPLE = tl.constexpr(32)
#: log2(e) = LOG2E_HI + LOG2E_LO, the first a float32 number.
LOG2E_HI = tl.constexpr(1.4426950216293335)
LOG2E_LO = tl.constexpr(1.92596298909109e-08)
#: A receiver tile has at most this many chunks (their partial sums take about MAX_CHUNKS / 2
#: times the population's memory per run).
MAX_CHUNKS = 8


@triton.jit
def _tf32(x):
    """x rounded to TF32 (10 fraction bits; to nearest, ties away from zero): a float32 that
    the tensor cores take exactly."""
    bits = x.to(tl.uint32, bitcast=True)
    return ((bits + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)


@triton.jit
def _mma_order(p):
    """Where place p's column goes in the by-coordinate copy: within each group of 8 places,
    8i + 2q + b goes to 8i + 4b + q. The weights e_ij come out of the first product with
    columns 2q, 2q + 1 of each group of 8 in thread q of a quad, and the second product takes
    its left operand with columns q, q + 4 there: `_attract` relabels e's columns by the same
    permutation (a reshape and a transpose that move no number between threads), and the
    second product sums over j in that order, reading this copy."""
    return (p & ~7) | ((p & 1) << 2) | ((p >> 1) & 3)


@triton.jit
def _center(x_ptr, runs_before, N, D, d, dm, SAMPLE: tl.constexpr):
    """The mean of the run's first SAMPLE rows (its first N if fewer) whose coordinates are
    all finite, 0 if none: a point inside the swarm, which every program computes alike."""
    k = tl.arange(0, SAMPLE)
    km = k < N
    xs = tl.load(x_ptr + (runs_before * N + k)[:, None] * D + d[None, :], mask=km[:, None] & dm[None, :], other=0.0)
    finite = km & (tl.sum(tl.where(tl.abs(xs) < float("inf"), 0, 1), 1) == 0)  # (NaN < inf is false)
    count = tl.sum(finite.to(xs.dtype), 0)
    return tl.sum(tl.where(finite[:, None], xs, 0.0), 0) / tl.maximum(count, 1.0)


@triton.jit
def _gather(x_ptr, order_ptr, values_ptr, center_ptr, hi_ptr, lo_ptr, hi_t_ptr, lo_t_ptr, sq_ptr, fs_ptr, N, D,
            PADDED, SPLIT: tl.constexpr, WIDE: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr):
    """Sorted place p of run `run` gets firefly order[p]'s x - c (c: `_center`, written to
    center_ptr for `_move`), as hi + lo (SPLIT, float32) by row (runs, PADDED, BLOCK_D) and by
    coordinate (runs, BLOCK_D, PADDED), or as is by row; its |x - c|^2 and its f. Places from
    N on and coordinates from D on are padding (x - c = 0, f = +inf: never brighter), so that
    `_attract` reads whole tiles."""
    block, run, p, d, pm, dm, mask, sorted_at, _ = tile(N, D, BLOCK_G, BLOCK_D, WIDE)  # (sorted_at: run * N + p)
    runs_before = run
    if WIDE:
        runs_before = run.to(tl.int64)
    member = tl.load(order_ptr + sorted_at, mask=pm, other=0)
    center = _center(x_ptr, runs_before, N, D, d, dm, SAMPLE=CENTER_SAMPLE)
    if block == 0:
        tl.store(center_ptr + runs_before * BLOCK_D + d, center)
    x = tl.load(x_ptr + (runs_before * N + member)[:, None] * D + d[None, :], mask=mask, other=0.0)
    x = tl.where(mask, x - center[None, :], 0.0)
    place = runs_before * PADDED + p
    tl.store(sq_ptr + place, tl.sum(x * x, 1))
    tl.store(fs_ptr + place, tl.load(values_ptr + sorted_at, mask=pm, other=float("inf")))
    by_row = place[:, None] * BLOCK_D + d[None, :]
    if SPLIT:
        hi = _tf32(x)
        lo = _tf32(x - hi)
        by_coordinate = (runs_before * BLOCK_D + d[None, :]) * PADDED + _mma_order(p)[:, None]
        tl.store(hi_ptr + by_row, hi)
        tl.store(lo_ptr + by_row, lo)
        tl.store(hi_t_ptr + by_coordinate, hi)
        tl.store(lo_t_ptr + by_coordinate, lo)
    else:
        tl.store(hi_ptr + by_row, x)


@triton.jit
def _attract(hi_ptr, lo_ptr, hi_t_ptr, lo_t_ptr, sq_ptr, fs_ptr, work_ptr, pull_ptr, weight_ptr, coef_ptr,
             PADDED, SLOTS, SPLIT: tl.constexpr, SUMS64: tl.constexpr, WIDE: tl.constexpr, BLOCK_P: tl.constexpr,
             BLOCK_J: tl.constexpr, BLOCK_D: tl.constexpr):
    """One chunk's partial sums for one tile of receivers: sum_j e_ij (x_j - c) and sum_j e_ij
    over the attractors at sorted places [start, stop) (work_ptr's row: tile, start, stop, slot).
    `_gather`'s padding makes every tile whole: no masks on the loads."""
    item = tl.program_id(0)
    run = tl.program_id(1)
    block = tl.load(work_ptr + 4 * item)
    start = tl.load(work_ptr + 4 * item + 1)
    stop = tl.load(work_ptr + 4 * item + 2)
    slot = tl.load(work_ptr + 4 * item + 3)
    runs_before = run
    if WIDE:
        runs_before = run.to(tl.int64)
    base = runs_before * PADDED
    p = block * BLOCK_P + tl.arange(0, BLOCK_P)
    d = tl.arange(0, BLOCK_D)
    rows = (base + p)[:, None] * BLOCK_D + d[None, :]
    xi = tl.load(hi_ptr + rows)
    sq_i = tl.load(sq_ptr + base + p)
    f_i = tl.load(fs_ptr + base + p)
    gamma = tl.load(coef_ptr + 3)
    a_hi = -2.0 * xi  # (exact: so is a_lo's)
    a_lo = a_hi
    if SPLIT:
        a_lo = -2.0 * tl.load(lo_ptr + rows)
    if SUMS64:  # (float32 positions: the tiles' sums added in float64, see FusedFirefly.float64_sums)
        pull = tl.zeros((BLOCK_P, BLOCK_D), dtype=tl.float64)
        weight = tl.zeros((BLOCK_P,), dtype=tl.float64)
    else:
        pull = tl.zeros((BLOCK_P, BLOCK_D), dtype=xi.dtype)
        weight = tl.zeros((BLOCK_P,), dtype=xi.dtype)
    for tile_j in range(start // BLOCK_J, stop // BLOCK_J):  # (the table's places are whole tiles)
        j = tile_j * BLOCK_J + tl.arange(0, BLOCK_J)
        by_row = (base + j)[:, None] * BLOCK_D + d[None, :]
        xj = tl.load(hi_ptr + by_row)
        sq_j = tl.load(sq_ptr + base + j)
        f_j = tl.load(fs_ptr + base + j)
        # Each tile's products start from zero and are added in float32 (or float64): the cores' own
        # sums are not float32's, and a chunk's tiles chained in one accumulator drifted (4e-4
        # of the largest move against float64 at N = 16,384, D = 32; docs/benchmarks.md).
        if SPLIT:  # (the small terms first)
            xj_lo = tl.load(lo_ptr + by_row)
            dots = tl.dot(a_lo, tl.trans(xj), input_precision="tf32")
            dots = tl.dot(a_hi, tl.trans(xj_lo), dots, input_precision="tf32")
            dots = tl.dot(a_hi, tl.trans(xj), dots, input_precision="tf32")
        else:
            dots = tl.dot(a_hi, tl.trans(xj), input_precision="ieee", out_dtype=xj.dtype)
        r2 = (sq_i[:, None] + sq_j[None, :]) + dots
        # exp(-gamma r2) = exp2(-log2(e) gamma r2), with log2(e) in two parts: one float32
        # log2(e) gamma, rounded once, would be a gamma off by up to 1e-7 for every pair alike
        t = tl.maximum(r2, 0.0) * gamma
        e = tl.exp2(t * -LOG2E_HI - t * LOG2E_LO)
        e = tl.where(f_j[None, :] < f_i[:, None], e, 0.0)
        weight += tl.sum(e, 1).to(weight.dtype)
        if SPLIT:
            by_coordinate = (runs_before * BLOCK_D + d[:, None]) * PADDED + j[None, :]
            xt = tl.load(hi_t_ptr + by_coordinate)
            xt_lo = tl.load(lo_t_ptr + by_coordinate)
            # columns in `_mma_order`: the left operand is then e's registers as they are
            e = tl.reshape(tl.permute(tl.reshape(e, (BLOCK_P, BLOCK_J // 8, 4, 2)), (0, 1, 3, 2)), (BLOCK_P, BLOCK_J))
            e_hi = _tf32(e)
            e_lo = e - e_hi
            dots = tl.dot(e_lo, tl.trans(xt), input_precision="tf32")
            dots = tl.dot(e_hi, tl.trans(xt_lo), dots, input_precision="tf32")
            pull += tl.dot(e_hi, tl.trans(xt), dots, input_precision="tf32").to(pull.dtype)
        else:
            pull += tl.dot(e, xj, input_precision="ieee", out_dtype=xj.dtype).to(pull.dtype)
    at = (runs_before * SLOTS + slot) * BLOCK_P + tl.arange(0, BLOCK_P)
    tl.store(pull_ptr + at[:, None] * BLOCK_D + d[None, :], pull.to(xi.dtype))
    tl.store(weight_ptr + at, weight.to(xi.dtype))


@triton.jit
def _move(x_ptr, order_ptr, fs_ptr, center_ptr, pull_ptr, weight_ptr, first_ptr, x_out_ptr, f_out_ptr, f_in_ptr,
          lower_ptr, upper_ptr, coef_ptr, block_f_ptr, block_i_ptr, nan_ptr, counter_ptr, it_ptr, r_ptr, seed, N, D, NB,
          SLOTS, RPD, FITNESS: tl.constexpr, USER_FN: tl.constexpr, MOVE: tl.constexpr, SELECT: tl.constexpr,
          GIVEN_R: tl.constexpr, EMIT_R: tl.constexpr, SUMS64: tl.constexpr, WIDE: tl.constexpr,
          BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr):
    """Moves the fireflies at one tile of sorted places (their partial sums from `_attract`),
    each to its own row, and evaluates them; without MOVE (the objective evaluated between
    two launches) takes a tile of rows as they are."""
    block, run, p, d, pm, dm, mask, place, off = tile(N, D, BLOCK_P, BLOCK_D, WIDE)
    member = p
    row = place
    if MOVE:
        member = tl.load(order_ptr + place, mask=pm, other=0)  # the firefly at each sorted place
        row = run.to(tl.int64) * N + member
        off = row[:, None] * D + d[None, :]
        xi = tl.load(x_ptr + off, mask=mask, other=0.0)
        f_i = tl.load(fs_ptr + place, mask=pm, other=float("-inf"))
        least = tl.load(fs_ptr + run.to(tl.int64) * N)  # the run's brightest (NaN sorts last)
        center = tl.load(center_ptr + run.to(tl.int64) * BLOCK_D + d)  # `_gather`'s
        alpha, beta0 = tl.load(coef_ptr + 1), tl.load(coef_ptr + 2)
        lanes = tl.arange(0, BLOCK_P)
        if SUMS64:
            pulls = tl.zeros((BLOCK_P, BLOCK_D), dtype=tl.float64)
            weight = tl.zeros((BLOCK_P,), dtype=tl.float64)
        else:
            pulls = tl.zeros((BLOCK_P, BLOCK_D), dtype=xi.dtype)
            weight = tl.zeros((BLOCK_P,), dtype=xi.dtype)
        for slot in range(tl.load(first_ptr + block), tl.load(first_ptr + block + 1)):
            at = (run.to(tl.int64) * SLOTS + slot) * BLOCK_P + lanes
            pulls += tl.load(pull_ptr + at[:, None] * BLOCK_D + d[None, :]).to(pulls.dtype)
            weight += tl.load(weight_ptr + at).to(weight.dtype)
        relative = tl.where(mask, xi - center[None, :], 0.0)  # as `_gather` wrote it
        pull = (beta0 * (pulls - weight[:, None] * relative.to(pulls.dtype))).to(xi.dtype)
        if GIVEN_R:  # the test hook: the eager step's own random numbers
            u = tl.load(r_ptr + off, mask=mask, other=0.0)
        else:
            u, _ = uniform_pairs(seed, counter_ptr, row, BLOCK_P, BLOCK_D, WIDE)
            u = u.to(xi.dtype)
            if EMIT_R:
                tl.store(r_ptr + off, u, mask=mask)
        noise = alpha * (2.0 * u - 1.0)
        x = xi + pull + tl.where((f_i > least)[:, None], noise, 0.0)  # f_i > least: some j is brighter
        lower = tl.load(lower_ptr + d, mask=dm, other=0.0)[None, :]
        upper = tl.load(upper_ptr + d, mask=dm, other=0.0)[None, :]
        x = tl.minimum(tl.maximum(x, lower), upper)
        tl.store(x_out_ptr + off, x, mask=mask)
        if (block == 0) & (run == 0):
            tl.store(it_ptr, tl.load(it_ptr) + 1)
    else:
        x = tl.load(x_out_ptr + off, mask=mask, other=0.0)

    if SELECT:
        f = new_values(x, f_in_ptr, nan_ptr, run, row, pm, d, dm, D, FITNESS, USER_FN)
        tl.store(f_out_ptr + row, f, mask=pm)
        best_f, best_at = tl.min(tl.where(pm, f, float("inf")), 0, return_indices=True)
        best_i = tl.sum(tl.where(tl.arange(0, BLOCK_P) == best_at, member, 0), 0)
        tl.store(block_f_ptr + run * NB + block, best_f)
        tl.store(block_i_ptr + run * NB + block, best_i)


@triton.jit(do_not_specialize=["record_ptr"])  # (see cuda_common.track_args)
def _finish(
    block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, counter_ptr, coef_ptr,
    N, D, NB, HAS_TARGET: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr,
):
    finish_run(block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, counter_ptr,
               coef_ptr, N, D, NB, HAS_TARGET, BLOCK_B, BLOCK_D)


def chunks(pop: int, block_p: int, block_j: int, min_chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`_attract`'s work table, (items, 4) int32 rows (receiver tile, first and last sorted
    place of its attractors, slot of its partial sums), most work first; and each receiver
    tile's first slot (tiles + 1 entries: its slots are first[b]..first[b + 1] - 1, in order).
    A chunk holds at least `min_chunk` attractors, a receiver tile at most MAX_CHUNKS chunks."""
    attractor_tiles = [math.ceil(min((b + 1) * block_p, pop) / block_j) for b in range(math.ceil(pop / block_p))]
    per_chunk = max(math.ceil(min_chunk / block_j), math.ceil(max(attractor_tiles) / MAX_CHUNKS))
    work, first = [], [0]
    for b, count in enumerate(attractor_tiles):
        for c in range(math.ceil(count / per_chunk)):
            span = (c * per_chunk, min((c + 1) * per_chunk, count))
            work.append((b, span[0] * block_j, span[1] * block_j, first[-1] + c))
        first.append(first[-1] + math.ceil(count / per_chunk))
    work.sort(key=lambda w: w[1] - w[2])  # (stable) longest first: the short ones fill the tail
    return torch.tensor(work, dtype=torch.int32), torch.tensor(first, dtype=torch.int32)


class FusedFirefly(FusedIteration):
    """One engine iteration of synchronous `Firefly`; the population alternates between two buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        self.block_d = max(16, triton.next_power_of_2(problem.dim))  # tl.dot needs 16 or more
        split = problem.lower.dtype == torch.float32
        tiles = TILES[split][self.block_d]
        super().__init__(problem, runs, algorithm.pop_size, tiles[0],
                         [float(c) for c in algorithm.coefficients(problem)], target, seed)
        self.split = split
        #: True: with float32 positions, `_attract` adds its tiles' sums and `_move` the chunks'
        #: and the attraction in float64: half the error, 27% more time at N = 16,384, D = 32 on
        #: an H200 (docs/benchmarks.md; benchmarks/firefly_precision.py --sums float64)
        self.float64_sums = False
        self.tiles(*tiles)

    def tiles(self, block_p: int, block_j: int, min_chunk: int, num_warps: int = 4, num_stages: int = 2) -> None:
        """The tiles (powers of 2, block_j >= 16; TILES has the defaults) and the buffers that
        depend on them."""
        self.block_p, self.block_j, self.num_warps, self.num_stages = block_p, block_j, num_warps, num_stages
        runs, device, dtype = self.runs, self.lower.device, self.lower.dtype
        self.blocks = math.ceil(self.pop / block_p)
        self.block_f = torch.empty(runs, self.blocks, device=device, dtype=dtype)
        self.block_i = torch.empty(runs, self.blocks, device=device, dtype=torch.int64)
        work, first = chunks(self.pop, block_p, block_j, min_chunk)
        self.work, self.first = work.to(device), first.to(device)
        self.slots = int(first[-1])
        self.padded = triton.cdiv(self.pop, max(block_p, block_j)) * max(block_p, block_j)  # whole tiles of both
        rows, by_row, by_coordinate = (runs, self.padded), (runs, self.padded, self.block_d), (runs, self.block_d,
                                                                                                 self.padded)
        self.values = torch.empty(runs, self.pop, device=device, dtype=dtype)
        self.order = torch.empty(runs, self.pop, device=device, dtype=torch.int64)
        self.fs, self.sq = (torch.empty(rows, device=device, dtype=dtype) for _ in range(2))
        self.center = torch.empty(runs, self.block_d, device=device, dtype=dtype)
        self.hi = torch.empty(by_row, device=device, dtype=dtype)
        unused = (1,)  # float64: positions as they are, by row only
        self.lo = torch.empty(by_row if self.split else unused, device=device, dtype=dtype)
        self.hi_t, self.lo_t = (torch.empty(by_coordinate if self.split else unused, device=device, dtype=dtype)
                                for _ in range(2))
        self.pulls = torch.empty(runs, self.slots, block_p, self.block_d, device=device, dtype=dtype)
        self.weights = torch.empty(runs, self.slots, block_p, device=device, dtype=dtype)

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        out = self.other_buffers(s)
        wide = s.x.numel() >= 2**31
        torch.sort(s.f, dim=-1, out=(self.values, self.order))
        launch(_gather, (self.padded // 64, self.runs), s.x, self.order, self.values, self.center, self.hi,
               self.lo, self.hi_t, self.lo_t, self.sq, self.fs, self.pop, self.dim, self.padded, SPLIT=self.split,
               WIDE=wide, BLOCK_G=64, BLOCK_D=self.block_d)
        launch(_attract, (len(self.work), self.runs), self.hi, self.lo, self.hi_t, self.lo_t, self.sq, self.fs,
               self.work, self.pulls, self.weights, self.coef, self.padded, self.slots, SPLIT=self.split,
               SUMS64=self.float64_sums, WIDE=wide,
               BLOCK_P=self.block_p, BLOCK_J=self.block_j, BLOCK_D=self.block_d, num_warps=self.num_warps,
               num_stages=self.num_stages)
        args = dict(
            x_ptr=s.x, order_ptr=self.order, fs_ptr=self.values, center_ptr=self.center, pull_ptr=self.pulls,
            weight_ptr=self.weights, first_ptr=self.first, x_out_ptr=out.x, f_out_ptr=out.f, lower_ptr=self.lower,
            upper_ptr=self.upper,
            coef_ptr=self.coef, block_f_ptr=self.block_f, block_i_ptr=self.block_i, nan_ptr=self.problem.nan_evals,
            counter_ptr=self.counter, it_ptr=it, N=self.pop, D=self.dim, NB=self.blocks, SLOTS=self.slots,
            FITNESS=self.fitness, USER_FN=self.user_fn, SUMS64=self.float64_sums, BLOCK_P=self.block_p,
            BLOCK_D=self.block_d, num_warps=4,
            **self.random_args(s.x),
        )
        self.move_and_select(_move, args, out.x, out.f)
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
