"""Fast Evolutionary Programming's generation as Triton kernels: the fused fast path.

`algorithms/fep.py` is the reference. Its compiled step spends most of paper 004's
generation (mu = 6,400, D = 32) in the selection: two full sorts for the fitness ranks and
a top-k, each a chain of radix passes and memsets. Here the union of parents and offspring
is never built or sorted:

- `_mutate`, per block of parents: Cauchy (or Gaussian) steps, the self-adaptive step
  sizes, clipping, the objective inline (other problems are evaluated between a mutate
  launch and a select launch); offspring go to buffers of their own. Union member i is
  parent i for i < mu, else offspring i - mu.
- The survivors are the mu smallest keys (q - wins, f), found by a radix select over many
  programs per run, one launch per pass (a run's selection on one multiprocessor took 42 us
  of paper 004's 55 us generation on an H200). Each pass counts one digit of the key in a
  histogram per run (an atomic per member); the next launch reads it back, finds the digit
  that holds the mu-th key (every program of it, the same way; its program 0 keeps the
  result for the launches after it) and counts the following digit among the members that
  still match:
  - `_tournament`, per block of union members: q opponents drawn uniformly from the union,
    wins counted where f <= the opponent's f; pass 0's digit, the level q - wins with the
    top bits of f (as an order-preserving unsigned integer); the block's best member.
  - `_narrow`, per tile of union members: the next 12 bits of f (for q < 16, 2 launches in
    float32 and 5 in float64), then one that counts each tile's members below the mu-th key
    and equal to it.
  - `_keep`, per tile: the tile's survivors (ties at the mu-th key by index) at their
    places in `keep`, after those of the tiles before it (from their counts), and their
    rows, parents' or offspring's, there in the next population (the other of two state
    buffers, as the parents are still being read); the histograms zeroed for the next
    generation; one more program does the engine's bookkeeping (the best of the union
    always survives: it wins every bout).

A generation is six launches (the survivors' rows move in `_keep`, not in a launch of their
own: on an H200 a generation's device time went from 22.2 to 21.1 us at paper 004's size).
Programmatic dependent launch (each launch starting while the one before it ends) made it
slower there, 23.5 us, and a chunk's graph launch took 80 us of host time instead of 6.

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
    reduce_blocks,
    row_tiles,
    store_block_best,
    tile,
    track_best,
    where_row,
)

#: Widest dimension the fused kernels take (one program keeps a row in registers).
MAX_DIM = 4096
#: Union members per tournament program: each member's q bouts are a chain of gathers, so
#: more, smaller programs (paper 004's 12,800 members: 100, not 13 of 1,024) overlap them.
TOURNAMENT_BLOCK = 128
#: Union members per program of the selection's passes (more for unions of over 131,072
#: members, so that a run has at most SELECT_PROGRAMS of them: `_keep` reads their counts).
SELECT_TILE, SELECT_PROGRAMS = 128, 1024
#: Bits of f a narrowing pass resolves: a histogram of 4,096 bins per run.
DIGIT_BITS = 12
_DIGIT_BITS = tl.constexpr(DIGIT_BITS)
_RESOLVE = tl.constexpr(2**DIGIT_BITS)
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
def _tournament(f_ptr, cf_ptr, wins_ptr, opponents_ptr, counter_ptr, hist_ptr, block_f_ptr, block_i_ptr, seed, N, Q,
                NB, GIVEN: tl.constexpr, BLOCK: tl.constexpr, FP64: tl.constexpr, BITS: tl.constexpr,
                LOW: tl.constexpr, HB: tl.constexpr, PASSES: tl.constexpr):
    """Wins of a block of union members, their first digit (level q - wins, then the top LOW
    bits of f) counted in the run's first histogram, and the block's best member."""
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
    digit = Q - wins
    if LOW > 0:
        digit = (digit << LOW) | (_ordered(f, FP64) >> (BITS - LOW)).to(tl.int32)
    # One atomic per member, not a per-program histogram first: tl.histogram of 4,096 bins
    # is thousands of instructions per thread, and the atomics of a block hit few addresses.
    tl.atomic_add(hist_ptr + run * PASSES * HB + digit, im.to(tl.int32), mask=im, sem="relaxed")
    store_block_best(f, im, block, run, NB, block_f_ptr, block_i_ptr, BLOCK)


@triton.jit
def _bout(f, word, live, f_ptr, cf_ptr, run, N):
    """1 where a live member's f <= that of the opponent drawn from `word` (uniform on
    [0, 2N): the high word of a 32 x 32-bit product), else 0."""
    j = ((word.to(tl.uint64) * (2 * N).to(tl.uint64)) >> 32).to(tl.int32)
    return ((f <= _union_f(f_ptr, cf_ptr, run, j, live, N)) & live).to(tl.int32)


@triton.jit
def _keys(f_ptr, cf_ptr, wins_ptr, run, i, im, N, Q, FP64: tl.constexpr):
    """Union members' keys: level q - wins (0 = won every bout) and f as ordered bits."""
    level = Q - tl.load(wins_ptr + run * 2 * N + i, mask=im, other=0)
    return level, _ordered(_union_f(f_ptr, cf_ptr, run, i, im, N), FP64)


@triton.jit
def _span(j, BITS: tl.constexpr, LOW: tl.constexpr):
    """(shift, width) of pass j's digit in f's ordered bits: the top LOW bits for pass 0 (its
    digit's higher bits are the level), then DIGIT_BITS at a time down to bit 0."""
    top = BITS - LOW - _DIGIT_BITS * (j - 1)
    shift = tl.maximum(top - _DIGIT_BITS, 0)
    first = j == 0
    return tl.where(first, BITS - LOW, shift), tl.where(first, LOW, top - shift)


@triton.jit
def _resolve(hist_ptr, state_ptr, run, j, HB: tl.constexpr, BITS: tl.constexpr, LOW: tl.constexpr,
             PASSES: tl.constexpr):
    """The key of the need-th survivor known through pass j: the state after pass j - 1 (slot
    j: cut level, need still to take there, prefix of f's ordered bits and the mask of its
    known bits) narrowed by pass j's histogram (the digit whose cumulative count reaches need)."""
    state = state_ptr + (run * (PASSES + 1) + j) * 4
    cut = tl.load(state).to(tl.int32)
    need = tl.load(state + 1).to(tl.int32)
    prefix = tl.load(state + 2).to(tl.uint64, bitcast=True)
    high = tl.load(state + 3).to(tl.uint64, bitcast=True)
    bins = tl.arange(0, _RESOLVE)
    digit = need * 0
    below = need * 0
    seen = need * 0
    for start in range(0, HB, _RESOLVE):  # (one chunk unless q >= 4,096)
        h = tl.load(hist_ptr + (run * PASSES + j) * HB + start + bins)
        under = (seen + tl.cumsum(h, 0)) < need
        digit += tl.sum(under.to(tl.int32), 0)
        below += tl.sum(tl.where(under, h, 0), 0)
        seen += tl.sum(h, 0)
    shift, width = _span(j, BITS, LOW)
    if j == 0:  # pass 0's digit: the level, then LOW bits of f
        cut = digit >> LOW
        digit = digit & ((1 << LOW) - 1)
    shift = tl.minimum(shift, BITS - 1)  # (no shift by BITS: pass 0 of LOW = 0 adds no bits)
    prefix = prefix | (digit.to(tl.uint64) << shift.to(tl.uint64))
    high = high | (((1 << width) - 1).to(tl.uint64) << shift.to(tl.uint64))
    return cut, need - below, prefix, high


@triton.jit(do_not_specialize=["k"])
def _narrow(f_ptr, cf_ptr, wins_ptr, hist_ptr, state_ptr, count_ptr, k, N, Q,
            FP64: tl.constexpr, BITS: tl.constexpr, LOW: tl.constexpr, HB: tl.constexpr, PASSES: tl.constexpr,
            COUNT: tl.constexpr, TILE: tl.constexpr):
    """Pass k of the survivors' selection, per tile of union members: every program resolves
    pass k - 1 (program 0 stores the state), then counts its members' digits of pass k among
    those that still match (COUNT: once every pass is resolved, its members below the
    threshold key and equal to it, for `_keep`'s offsets)."""
    t = tl.program_id(0)
    run = tl.program_id(1)
    cut, need, prefix, high = _resolve(hist_ptr, state_ptr, run, k - 1, HB, BITS, LOW, PASSES)
    if t == 0:
        state = state_ptr + (run * (PASSES + 1) + k) * 4
        tl.store(state, cut.to(tl.int64))
        tl.store(state + 1, need.to(tl.int64))
        tl.store(state + 2, prefix.to(tl.int64, bitcast=True))
        tl.store(state + 3, high.to(tl.int64, bitcast=True))
    i = t * TILE + tl.arange(0, TILE)
    im = i < 2 * N
    level, u = _keys(f_ptr, cf_ptr, wins_ptr, run, i, im, N, Q, FP64)
    match = im & (level == cut) & ((u & high) == prefix)
    if COUNT:  # (after the last pass, `high` covers every bit: `match` is u == prefix)
        below = im & ((level < cut) | ((level == cut) & (u < prefix)))
        tl.store(count_ptr + (run * 2) * tl.num_programs(0) + t, tl.sum(below.to(tl.int32), 0))
        tl.store(count_ptr + (run * 2 + 1) * tl.num_programs(0) + t, tl.sum(match.to(tl.int32), 0))
    else:
        shift, width = _span(k, BITS, LOW)
        digit = ((u >> shift.to(tl.uint64)) & ((1 << width) - 1).to(tl.uint64)).to(tl.int32)
        tl.atomic_add(hist_ptr + (run * PASSES + k) * HB + digit, match.to(tl.int32), mask=match, sem="relaxed")


@triton.jit(do_not_specialize=["record_ptr"])  # (see cuda_common.track_args)
def _keep(f_ptr, cf_ptr, x_ptr, cx_ptr, eta_ptr, ceta_ptr, ox_ptr, oeta_ptr, of_ptr, wins_ptr, keep_ptr, count_ptr,
          state_ptr, hist_ptr, block_f_ptr, block_i_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr,
          counter_ptr, coef_ptr, N, D, Q, P, NB,
          HAS_TARGET: tl.constexpr, FP64: tl.constexpr, HB: tl.constexpr, PASSES: tl.constexpr,
          TILE: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr,
          BLOCK_C: tl.constexpr):
    """Programs t < P: the survivors of tile t, in union order, at their places in `keep`
    (every key below the threshold, and the first `need` equal to it, ties by index), their
    rows (x, eta, f) there in the next population (`ox`, `oeta`, `of`), and a share of the
    histograms zeroed for the next generation. Program P: the engine's bookkeeping (the best
    of the union always survives: it wins every bout)."""
    t = tl.program_id(0)
    run = tl.program_id(1)
    if t < P:
        state = state_ptr + (run * (PASSES + 1) + PASSES) * 4
        cut = tl.load(state).to(tl.int32)
        need = tl.load(state + 1).to(tl.int32)
        threshold = tl.load(state + 2).to(tl.uint64, bitcast=True)
        earlier = tl.arange(0, BLOCK_T)
        below_before = tl.sum(tl.load(count_ptr + (run * 2) * P + earlier, mask=earlier < t, other=0), 0)
        ties_before = tl.sum(tl.load(count_ptr + (run * 2 + 1) * P + earlier, mask=earlier < t, other=0), 0)
        i = t * TILE + tl.arange(0, TILE)
        im = i < 2 * N
        level, u = _keys(f_ptr, cf_ptr, wins_ptr, run, i, im, N, Q, FP64)
        below = im & ((level < cut) | ((level == cut) & (u < threshold)))
        tie = im & (level == cut) & (u == threshold)
        keep = below | (tie & (ties_before + tl.cumsum(tie.to(tl.int32), 0) - 1 < need))
        taken = below_before + tl.minimum(ties_before, need)
        slot = taken + tl.cumsum(keep.to(tl.int32), 0) - 1
        tl.store(keep_ptr + run * N + slot, i, mask=keep)
        _move_survivors(f_ptr, cf_ptr, x_ptr, cx_ptr, eta_ptr, ceta_ptr, ox_ptr, oeta_ptr, of_ptr, run, i, keep, slot,
                        N, D, BLOCK_C)
        for start in range(t * _RESOLVE, PASSES * HB, P * _RESOLVE):
            z = start + tl.arange(0, _RESOLVE)
            tl.store(hist_ptr + run * PASSES * HB + z, z * 0)
    else:
        m, b = reduce_blocks(block_f_ptr, block_i_ptr, run, NB, BLOCK_B)
        d = tl.arange(0, BLOCK_D)
        dm = d < D
        x = tl.load(x_ptr + (run.to(tl.int64) * N + b) * D + d, mask=where_row(dm, b < N), other=0.0)
        x += tl.load(cx_ptr + (run.to(tl.int64) * N + b - N) * D + d, mask=where_row(dm, b >= N), other=0.0)
        track_best(m, x, d, dm, run, D, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, tl.load(coef_ptr),
                   HAS_TARGET)
        if run == 0:
            tl.store(counter_ptr, tl.load(counter_ptr) + 1)


@triton.jit
def _move_survivors(f_ptr, cf_ptr, x_ptr, cx_ptr, eta_ptr, ceta_ptr, ox_ptr, oeta_ptr, of_ptr, run, i, keep, slot,
                    N, D, BLOCK_C: tl.constexpr):
    """Union members i that `keep` marks: their rows (parent i for i < N, else offspring
    i - N) to row `slot` of the next population, BLOCK_C coordinates at a time."""
    parent = keep & (i < N)
    child = keep & (i >= N)
    base = run.to(tl.int64) * N
    src = base + tl.where(parent, i, i - N)
    dst = base + slot
    tl.store(of_ptr + dst, tl.where(parent, tl.load(f_ptr + src, mask=parent, other=0.0),
                                    tl.load(cf_ptr + src, mask=child, other=0.0)), mask=keep)
    for start in range(0, D, BLOCK_C):
        d = start + tl.arange(0, BLOCK_C)
        dm = (d < D)[None, :]
        s_off = src[:, None] * D + d[None, :]
        d_off = dst[:, None] * D + d[None, :]
        pmask = parent[:, None] & dm
        cmask = child[:, None] & dm
        x = tl.load(x_ptr + s_off, mask=pmask, other=0.0) + tl.load(cx_ptr + s_off, mask=cmask, other=0.0)
        eta = tl.load(eta_ptr + s_off, mask=pmask, other=0.0) + tl.load(ceta_ptr + s_off, mask=cmask, other=0.0)
        tl.store(ox_ptr + d_off, x, mask=keep[:, None] & dm)
        tl.store(oeta_ptr + d_off, eta, mask=keep[:, None] & dm)


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
        union = 2 * self.pop
        self.wins = torch.empty(runs, union, device=device, dtype=torch.int32)
        self.keep = torch.empty(runs, self.pop, device=device, dtype=torch.int32)
        # The selection's digits: pass 0 the level (q - wins, LEVEL_BITS) and the top `low`
        # bits of f's ordered bits, in 2**12 bins (more if q >= 4,096); then DIGIT_BITS of f a pass.
        self.bits = 64 if dtype == torch.float64 else 32
        level_bits = self.q.bit_length()  # levels 0..q
        self.low = max(0, DIGIT_BITS - level_bits)
        self.bins = 2 ** max(DIGIT_BITS, level_bits)
        self.passes = 1 + triton.cdiv(self.bits - self.low, DIGIT_BITS)
        self.hist = torch.zeros(runs, self.passes, self.bins, device=device, dtype=torch.int32)  # zero between steps
        # The threshold key known after each pass: (cut level, need, prefix, mask); slot 0 the start.
        self.threshold = torch.zeros(runs, self.passes + 1, 4, device=device, dtype=torch.int64)
        self.threshold[:, 0, 1] = self.pop
        self.bouts = min(TOURNAMENT_BLOCK, triton.next_power_of_2(union))
        self.union_blocks = triton.cdiv(union, self.bouts)
        self.union_best_f = torch.empty(runs, self.union_blocks, device=device, dtype=dtype)
        self.union_best_i = torch.empty(runs, self.union_blocks, device=device, dtype=torch.int64)
        self.select_tile = SELECT_TILE
        # Each selection program's members below and at the threshold, (runs, 2, programs) flat.
        self.counts = torch.empty(runs * 2 * union, device=device, dtype=torch.int32)
        # Test hook, (runs, 2 * pop * q): opponents to use instead of Philox's.
        self.given_opponents: torch.Tensor | None = None

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        out = self.other_buffers(s)
        args = dict(
            x_ptr=s.x, eta_ptr=s.eta, cx_ptr=self.child_x, ceta_ptr=self.child_eta, cf_ptr=self.child_f,
            lower_ptr=self.lower, upper_ptr=self.upper, coef_ptr=self.coef, nan_ptr=self.problem.nan_evals,
            counter_ptr=self.counter, it_ptr=it, P=self.pop, D=self.dim, FITNESS=self.fitness,
            USER_FN=self.user_fn,
            GAUSSIAN=self.gaussian, ETA_FLOOR=self.eta_floor, BLOCK_P=self.block_p, BLOCK_D=self.block_d,
            num_warps=self.num_warps, **self.random_args(s.x),
        )
        self.move_and_select(_mutate, args, self.child_x, self.child_f)
        self.select(s, best_x, hit, it, best_f, record, out)
        return out, best_x, hit, it, best_f

    def select(self, s, best_x, hit, it, best_f, record=None, out=None) -> None:
        """The tournament and the survivors into `out` (their union indices into `keep`), over
        many programs per run: the mu smallest keys (q - wins, f) by a radix select whose
        passes are launches (`_tournament` counts pass 0's digits, each `_narrow` resolves the
        pass before and counts the next, the last counts each tile's members below and at the
        threshold), then `_keep` places each tile's survivors; plus the engine's bookkeeping."""
        out = self.other_buffers(s) if out is None else out
        union = 2 * self.pop
        tile = max(self.select_tile, triton.next_power_of_2(triton.cdiv(union, SELECT_PROGRAMS)))
        programs = triton.cdiv(union, tile)
        keys = dict(FP64=self.bits == 64, BITS=self.bits, LOW=self.low, HB=self.bins, PASSES=self.passes)
        given = self.given_opponents is not None
        launch(_tournament, (self.union_blocks, self.runs),
            s.f, self.child_f, self.wins, self.given_opponents if given else self.wins, self.counter, self.hist,
            self.union_best_f, self.union_best_i, self.seed, self.pop, self.q, self.union_blocks, GIVEN=given,
            BLOCK=self.bouts, num_warps=4, **keys,
        )
        for k in range(1, self.passes + 1):
            launch(_narrow, (programs, self.runs),
                s.f, self.child_f, self.wins, self.hist, self.threshold, self.counts, k, self.pop, self.q,
                COUNT=k == self.passes, TILE=tile, num_warps=4, **keys,
            )
        launch(_keep, (programs + 1, self.runs),
            s.f, self.child_f, s.x, self.child_x, s.eta, self.child_eta, out.x, out.eta, out.f, self.wins, self.keep,
            self.counts, self.threshold, self.hist,
            self.union_best_f, self.union_best_i, N=self.pop, D=self.dim, Q=self.q, P=programs, NB=self.union_blocks,
            FP64=self.bits == 64, HB=self.bins, PASSES=self.passes, TILE=tile,
            BLOCK_T=triton.next_power_of_2(programs), BLOCK_B=min(4096, triton.next_power_of_2(self.union_blocks)),
            BLOCK_D=self.block_d, BLOCK_C=min(self.block_d, max(1, 4096 // tile)), num_warps=4,
            **self.track_args(best_x, hit, it, best_f, record),
        )


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = FusedFEP
