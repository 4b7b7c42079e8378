"""Fast Evolutionary Programming's generation as four Triton kernels: the fused fast path.

`algorithms/fep.py` is the reference. Its compiled step spends most of paper 004's
generation (mu = 6,400, D = 32) in the selection: two full sorts for the fitness ranks and
a top-k, each a chain of radix passes and memsets. Here the union of parents and offspring
is never built or sorted:

- `_mutate`, per block of parents: Cauchy (or Gaussian) steps, the self-adaptive step
  sizes, clipping, the objective inline (other problems are evaluated between a mutate
  launch and a select launch); offspring go to buffers of their own. Union member i is
  parent i for i < mu, else offspring i - mu.
- `_tournament`, per block of union members: q opponents drawn uniformly from the union,
  wins counted where f <= the opponent's f.
- `_select`, one program per run: the survivors are the mu smallest keys
  (q - wins, f), found by counting, not sorting: a histogram of q - wins gives the
  level holding the mu-th survivor, then radix passes over f's bits (8 at a time, as an
  order-preserving unsigned integer; over the members at that level only, gathered by one
  pass over the union) give the mu-th key itself; one more pass writes the
  survivors' indices (ties at the threshold key by index). Also the engine's bookkeeping
  (the best of the union always survives: it wins every bout).
- `_survive`, per block of survivors: parents' or offspring's rows gathered into the next
  population (the other of two state buffers, as the parents are still being read).

Survivors come out in union order, eager's in key order; the order of a population has no
effect on the algorithm (opponents are drawn uniformly), and the tests compare the two as sets.
Random numbers: Philox stream 0 per pair of coordinates (words a, b: their Cauchy steps,
or a Box-Muller pair for the Gaussian step; c, e: a Box-Muller pair for their N_j(0,1)),
2 per individual (N(0,1)), 3 + k for opponents 4k..4k + 3 (one word each).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ....algorithms.fep import learning_rates
from ..cuda_common import (
    FusedIteration,
    interleave,
    launch,
    new_values,
    pair_uniforms,
    row_tiles,
    tile,
    track_best,
    where_row,
)

#: Widest dimension the fused kernels take (one program keeps a row in registers).
MAX_DIM = 4096
#: Union members per tournament program: each member's q bouts are a chain of gathers, so
#: more, smaller programs (paper 004's 12,800 members: 100, not 13 of 1,024) overlap them.
TOURNAMENT_BLOCK = 128
_TWO_PI = tl.constexpr(6.283185307179586)
_PI = tl.constexpr(3.141592653589793)


@triton.jit
def _box_muller(u, v):
    """Two independent N(0, 1) from two U[0, 1) (1 - u is in (0, 1], so the log is finite)."""
    radius = tl.sqrt(-2.0 * tl.log(1.0 - u))
    return radius * tl.cos(v * _TWO_PI), radius * tl.sin(v * _TWO_PI)


@triton.jit
def _cauchy(u):
    """A standard Cauchy number, tan(pi (u - 1/2)), from a U[0, 1)."""
    angle = (u - 0.5) * _PI
    return tl.sin(angle) / tl.cos(angle)


@triton.jit
def _steps(seed, counter_ptr, row, dtype: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr,
           WIDE: tl.constexpr, GAUSSIAN: tl.constexpr):
    """delta_j and N_j(0,1) of a tile, one Philox call per pair of coordinates: its words c, e
    give both coordinates' N_j(0,1) (a Box-Muller pair), a and b their delta_j."""
    a, b, c, e = pair_uniforms(seed, counter_ptr, row, BLOCK_D, WIDE, 0)
    n0, n1 = _box_muller(c.to(dtype), e.to(dtype))
    if GAUSSIAN:
        d0, d1 = _box_muller(a.to(dtype), b.to(dtype))
    else:
        d0, d1 = _cauchy(a.to(dtype)), _cauchy(b.to(dtype))
    return interleave(d0, d1, BLOCK_P, BLOCK_D), interleave(n0, n1, BLOCK_P, BLOCK_D)


@triton.jit
def _mutate(
    x_ptr, eta_ptr, cx_ptr, ceta_ptr, cf_ptr, f_in_ptr, lower_ptr, upper_ptr, coef_ptr, nan_ptr, counter_ptr, it_ptr,
    r_ptr, seed, P, D, RPD,
    FITNESS: tl.constexpr, USER_FN: tl.constexpr, MOVE: tl.constexpr, SELECT: tl.constexpr, GIVEN_R: tl.constexpr,
    EMIT_R: tl.constexpr,
    WIDE: tl.constexpr, GAUSSIAN: tl.constexpr, ETA_FLOOR: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr,
):
    block, run, p, d, pm, dm, mask, row, off = tile(P, D, BLOCK_P, BLOCK_D, WIDE)

    if MOVE:
        x = tl.load(x_ptr + off, mask=mask, other=0.0)
        eta = tl.load(eta_ptr + off, mask=mask, other=0.0)
        if GIVEN_R:  # the test hook: the eager step's delta_j, N_j(0,1) and N(0,1) (repeated along D)
            delta = tl.load(r_ptr + off, mask=mask, other=0.0)
            n_j = tl.load(r_ptr + RPD + off, mask=mask, other=0.0)
            n_i = tl.load(r_ptr + 2 * RPD + off, mask=mask, other=0.0)
        else:
            delta, n_j = _steps(seed, counter_ptr, row, x.dtype, BLOCK_P, BLOCK_D, WIDE, GAUSSIAN)
            zero = (row * 0).to(tl.uint32)
            high = zero
            if WIDE:
                high = (row >> 32).to(tl.uint32)
            a, b, _, _ = tl.random.philox(seed, row.to(tl.uint32), high, zero + tl.load(counter_ptr).to(tl.uint32),
                                          zero + 2)
            n_i, _ = _box_muller(tl.random.uint_to_uniform_float(a).to(x.dtype),
                                 tl.random.uint_to_uniform_float(b).to(x.dtype))
            n_i = tl.broadcast_to(n_i[:, None], (BLOCK_P, BLOCK_D))
            if EMIT_R:
                tl.store(r_ptr + off, delta, mask=mask)
                tl.store(r_ptr + RPD + off, n_j, mask=mask)
                tl.store(r_ptr + 2 * RPD + off, n_i, mask=mask)
        tau, tau_prime, eta_min = tl.load(coef_ptr + 1), tl.load(coef_ptr + 2), tl.load(coef_ptr + 3)
        lower = tl.load(lower_ptr + d, mask=dm, other=0.0)[None, :]
        upper = tl.load(upper_ptr + d, mask=dm, other=0.0)[None, :]
        x = tl.minimum(tl.maximum(x + eta * delta, lower), upper)  # x' from the old eta
        eta = eta * tl.exp(tau_prime * n_i + tau * n_j)
        if ETA_FLOOR:
            eta = tl.maximum(eta, eta_min)
        tl.store(cx_ptr + off, x, mask=mask)
        tl.store(ceta_ptr + off, eta, mask=mask)
        if (block == 0) & (run == 0):
            tl.store(it_ptr, tl.load(it_ptr) + 1)
    else:
        x = tl.load(cx_ptr + off, mask=mask, other=0.0)

    if SELECT:
        f = new_values(x, f_in_ptr, nan_ptr, run, row, pm, d, dm, D, FITNESS, USER_FN)
        tl.store(cf_ptr + row, f, mask=pm)


@triton.jit
def _union_f(f_ptr, cf_ptr, run, i, im, N):
    """f of union members i: parent i for i < N, else offspring i - N."""
    parent = i < N
    fp = tl.load(f_ptr + run * N + i, mask=im & parent, other=0.0)
    fc = tl.load(cf_ptr + run * N + i - N, mask=im & (i >= N), other=0.0)
    return tl.where(parent, fp, fc)


@triton.jit
def _tournament(f_ptr, cf_ptr, wins_ptr, opponents_ptr, counter_ptr, seed, N, Q,
                GIVEN: tl.constexpr, BLOCK: tl.constexpr):
    block = tl.program_id(0)
    run = tl.program_id(1)
    M = 2 * N
    i = block * BLOCK + tl.arange(0, BLOCK)
    im = i < M
    f = _union_f(f_ptr, cf_ptr, run, i, im, N)
    zero = (i * 0).to(tl.uint32)
    step = zero + tl.load(counter_ptr).to(tl.uint32)
    wins = tl.zeros((BLOCK,), dtype=tl.int32)
    if GIVEN:  # the test hook: the eager step's opponents, (runs, M * q)
        for k in range(Q):
            j = tl.load(opponents_ptr + (run.to(tl.int64) * M + i) * Q + k, mask=im, other=0).to(tl.int32)
            wins += (f <= _union_f(f_ptr, cf_ptr, run, j, im, N)).to(tl.int32)
    else:
        for k in range(0, Q, 4):  # four opponents per Philox call
            a, b, c, e = tl.random.philox(seed, i.to(tl.uint32), zero + run.to(tl.uint32), step,
                                          (i * 0 + 3 + k // 4).to(tl.uint32))
            left = i * 0 + Q - k  # (a tensor: the interpreter's masks must be)
            wins += _bout(f, a, im, f_ptr, cf_ptr, run, N)
            wins += _bout(f, b, im & (left > 1), f_ptr, cf_ptr, run, N)
            wins += _bout(f, c, im & (left > 2), f_ptr, cf_ptr, run, N)
            wins += _bout(f, e, im & (left > 3), f_ptr, cf_ptr, run, N)
    tl.store(wins_ptr + run * M + i, wins, mask=im)


@triton.jit
def _bout(f, word, live, f_ptr, cf_ptr, run, N):
    """1 where a live member's f <= that of the opponent drawn from `word` (uniform on
    [0, 2N): the high word of a 32 x 32-bit product), else 0."""
    j = ((word.to(tl.uint64) * (2 * N).to(tl.uint64)) >> 32).to(tl.int32)
    return ((f <= _union_f(f_ptr, cf_ptr, run, j, live, N)) & live).to(tl.int32)


@triton.jit
def _ordered(f, FP64: tl.constexpr):
    """Unsigned integers in the order of the floats f (negative ones flipped, positive ones
    with the sign bit set)."""
    if FP64:  # (if/else, not an early return: the compiler builds both branches otherwise)
        bits = f.to(tl.int64, bitcast=True)
        u = bits.to(tl.uint64, bitcast=True)
        key = tl.where(bits < 0, ~u, u | 0x8000000000000000)
    else:
        bits32 = f.to(tl.int32, bitcast=True)
        u32 = bits32.to(tl.uint32, bitcast=True)
        key = tl.where(bits32 < 0, ~u32, u32 | 0x80000000).to(tl.uint64)
    return key


@triton.jit
def _keys(f_ptr, cf_ptr, wins_ptr, run, i, im, N, Q, FP64: tl.constexpr):
    """Union members' keys: level q - wins (0 = won every bout) and f as ordered bits."""
    level = Q - tl.load(wins_ptr + run * 2 * N + i, mask=im, other=0)
    return level, _ordered(_union_f(f_ptr, cf_ptr, run, i, im, N), FP64)


@triton.jit(do_not_specialize=["record_ptr"])  # (see cuda_common.track_args)
def _select(
    f_ptr, cf_ptr, x_ptr, cx_ptr, wins_ptr, keep_ptr, cand_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr,
    counter_ptr, coef_ptr, N, D, Q,
    HAS_TARGET: tl.constexpr, FP64: tl.constexpr, BITS: tl.constexpr, LEVELS: tl.constexpr,
    TILE: tl.constexpr, BLOCK_D: tl.constexpr,
):
    run = tl.program_id(0)
    M = 2 * N
    lanes = tl.arange(0, TILE)

    # How many members at each level, and the best member of the union.
    hist = tl.zeros((LEVELS,), dtype=tl.int32)
    best_f = tl.zeros((TILE,), dtype=f_ptr.dtype.element_ty) + float("inf")
    best_i = tl.zeros((TILE,), dtype=tl.int32)
    for start in range(0, M, TILE):
        i = start + lanes
        im = i < M
        level = Q - tl.load(wins_ptr + run * M + i, mask=im, other=0)
        hist += tl.histogram(level, LEVELS, mask=im)
        f = tl.where(im, _union_f(f_ptr, cf_ptr, run, i, im, N), float("inf"))
        better = f < best_f
        best_f = tl.where(better, f, best_f)
        best_i = tl.where(better, i, best_i)
    cum = tl.cumsum(hist, 0)
    cut = tl.sum((cum < N).to(tl.int32), 0)  # the level that holds the N-th survivor
    need = N - tl.sum(tl.where(tl.arange(0, LEVELS) < cut, hist, 0), 0)  # still to take there

    # The need-th smallest f (as ordered bits) at that level, 8 bits at a time from the top:
    # `prefix` holds the digits found, `high` marks their bits. The first pass walks the union
    # and keeps the members at that level (their keys, in union order) in `cand_ptr`'s row;
    # the later passes walk only those. A loop, not unrolled: unrolled, its 4-8 passes made
    # this the longest kernel of FEP's first run to compile.
    prefix = (cut * 0).to(tl.uint64)
    high = (cut * 0).to(tl.uint64)
    count = cut * 0
    for start in range(0, M, TILE):
        i = start + lanes
        im = i < M
        level, u = _keys(f_ptr, cf_ptr, wins_ptr, run, i, im, N, Q, FP64)
        at_cut = im & (level == cut)
        slot = count + tl.cumsum(at_cut.to(tl.int32), 0) - 1
        tl.store(cand_ptr + run * M + slot, u.to(tl.int64, bitcast=True), mask=at_cut)
        count += tl.sum(at_cut.to(tl.int32), 0)
    tl.debug_barrier()  # (the passes below read what other threads of this program stored)
    for k in range(BITS // 8):
        shift = BITS - 8 * (k + 1)
        hist8 = tl.zeros((256,), dtype=tl.int32)
        for start in range(0, count, TILE):
            i = start + lanes
            u = tl.load(cand_ptr + run * M + i, mask=i < count, other=0).to(tl.uint64, bitcast=True)
            candidate = (i < count) & ((u & high) == prefix)
            hist8 += tl.histogram(((u >> shift) & 255).to(tl.int32), 256, mask=candidate)
        cum8 = tl.cumsum(hist8, 0)
        digit = tl.sum((cum8 < need).to(tl.int32), 0)
        need -= tl.sum(tl.where(tl.arange(0, 256) < digit, hist8, 0), 0)
        prefix = prefix | (digit.to(tl.uint64) << shift)
        high = high | ((digit * 0 + 255).to(tl.uint64) << shift)

    # Survivors: every key below (cut, prefix), and the first `need` equal to it.
    taken = cut * 0
    ties = cut * 0
    for start in range(0, M, TILE):
        i = start + lanes
        im = i < M
        level, u = _keys(f_ptr, cf_ptr, wins_ptr, run, i, im, N, Q, FP64)
        below = im & ((level < cut) | ((level == cut) & (u < prefix)))
        tie = im & (level == cut) & (u == prefix)
        tie_rank = ties + tl.cumsum(tie.to(tl.int32), 0) - 1
        keep = below | (tie & (tie_rank < need))
        tl.store(keep_ptr + run * N + taken + tl.cumsum(keep.to(tl.int32), 0) - 1, i, mask=keep)
        taken += tl.sum(keep.to(tl.int32), 0)
        ties += tl.sum(tie.to(tl.int32), 0)

    # The engine's bookkeeping.
    m, lane = tl.min(best_f, 0, return_indices=True)
    b = tl.sum(tl.where(lanes == lane, best_i, 0), 0)
    d = tl.arange(0, BLOCK_D)
    dm = d < D
    x = tl.load(x_ptr + (run.to(tl.int64) * N + b) * D + d, mask=where_row(dm, b < N), other=0.0)
    x += tl.load(cx_ptr + (run.to(tl.int64) * N + b - N) * D + d, mask=where_row(dm, b >= N), other=0.0)
    track_best(m, x, d, dm, run, D, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, tl.load(coef_ptr),
               HAS_TARGET)
    if run == 0:
        tl.store(counter_ptr, tl.load(counter_ptr) + 1)


@triton.jit
def _survive(x_ptr, eta_ptr, f_ptr, cx_ptr, ceta_ptr, cf_ptr, keep_ptr, ox_ptr, oeta_ptr, of_ptr, N, D,
             WIDE: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr):
    block, run, j, d, jm, dm, mask, row, off = tile(N, D, BLOCK_P, BLOCK_D, WIDE)  # survivor j's new row
    src = tl.load(keep_ptr + row, mask=jm, other=0)  # its union index
    parent = jm & (src < N)
    child = jm & (src >= N)
    src_row = row - j + src  # the parent's row; the offspring's row + N
    p_off = src_row[:, None] * D + d[None, :]
    c_off = p_off - N * D
    pmask = parent[:, None] & dm[None, :]
    cmask = child[:, None] & dm[None, :]
    x = tl.load(x_ptr + p_off, mask=pmask, other=0.0) + tl.load(cx_ptr + c_off, mask=cmask, other=0.0)
    eta = tl.load(eta_ptr + p_off, mask=pmask, other=0.0) + tl.load(ceta_ptr + c_off, mask=cmask, other=0.0)
    f = tl.where(parent, tl.load(f_ptr + src_row, mask=parent, other=0.0),
                 tl.load(cf_ptr + src_row - N, mask=child, other=0.0))
    tl.store(ox_ptr + off, x, mask=mask)
    tl.store(oeta_ptr + off, eta, mask=mask)
    tl.store(of_ptr + row, f, mask=jm)


class FusedFEP(FusedIteration):
    """One engine generation of `FEP`; the population alternates between two buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        self.block_d, block_p, self.num_warps = row_tiles(problem.dim)
        tau, tau_prime = learning_rates(problem.dim)
        eta_min = 0.0 if algorithm.eta_min is None else algorithm.eta_min
        super().__init__(problem, runs, algorithm.pop_size, block_p, [tau, tau_prime, eta_min], target, seed)
        self.q = algorithm.q
        self.gaussian = algorithm.mutation == "gaussian"
        self.eta_floor = algorithm.eta_min is not None
        device, dtype = self.lower.device, self.lower.dtype
        shape = (runs, self.pop, self.dim)
        self.child_x = torch.empty(shape, device=device, dtype=dtype)
        self.child_eta = torch.empty(shape, device=device, dtype=dtype)
        self.child_f = torch.empty(runs, self.pop, device=device, dtype=dtype)
        self.wins = torch.empty(runs, 2 * self.pop, device=device, dtype=torch.int32)
        self.keep = torch.empty(runs, self.pop, device=device, dtype=torch.int32)
        self.cand = torch.empty(runs, 2 * self.pop, device=device, dtype=torch.int64)  # keys at the cut level
        # The selection program (one per run) walks the union in tiles of select_tile members.
        self.select_tile, self.select_warps = 4096, 8
        # Test hook, (runs, 2 * pop * q): opponents to use instead of Philox's.
        self.given_opponents: torch.Tensor | None = None

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        out = self.other_buffers(s)
        fp64 = s.x.dtype == torch.float64
        args = dict(
            x_ptr=s.x, eta_ptr=s.eta, cx_ptr=self.child_x, ceta_ptr=self.child_eta, cf_ptr=self.child_f,
            lower_ptr=self.lower, upper_ptr=self.upper, coef_ptr=self.coef, nan_ptr=self.problem.nan_evals,
            counter_ptr=self.counter, it_ptr=it, P=self.pop, D=self.dim, FITNESS=self.fitness,
            USER_FN=self.user_fn,
            GAUSSIAN=self.gaussian, ETA_FLOOR=self.eta_floor, BLOCK_P=self.block_p, BLOCK_D=self.block_d,
            num_warps=self.num_warps, **self.random_args(s.x),
        )
        self.move_and_select(_mutate, args, self.child_x, self.child_f)
        union = 2 * self.pop
        given = self.given_opponents is not None
        bouts = min(TOURNAMENT_BLOCK, triton.next_power_of_2(union))
        launch(_tournament, (triton.cdiv(union, bouts), self.runs),
            s.f, self.child_f, self.wins, self.given_opponents if given else self.wins, self.counter, self.seed,
            self.pop, self.q, GIVEN=given, BLOCK=bouts, num_warps=4,
        )
        launch(_select, (self.runs,),
            s.f, self.child_f, s.x, self.child_x, self.wins, self.keep, self.cand, N=self.pop, D=self.dim, Q=self.q,
            FP64=fp64, BITS=64 if fp64 else 32, LEVELS=triton.next_power_of_2(self.q + 1), TILE=min(self.select_tile, triton.next_power_of_2(union)),
            BLOCK_D=self.block_d, num_warps=self.select_warps, **self.track_args(best_x, hit, it, best_f, record),
        )
        launch(_survive, (self.blocks, self.runs),
            s.x, s.eta, s.f, self.child_x, self.child_eta, self.child_f, self.keep, out.x, out.eta, out.f,
            self.pop, self.dim, WIDE=s.x.numel() >= 2**31, BLOCK_P=self.block_p, BLOCK_D=self.block_d,
            num_warps=self.num_warps,
        )
        return out, best_x, hit, it, best_f


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = FusedFEP
