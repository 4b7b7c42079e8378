"""APO's iteration as three Triton kernels around one sort: the fused fast path of the CUDA engine.

`algorithms/apo.py` is the reference (the tests compare the two with the same random
numbers). Its compiled step makes population-sized temporaries at every turn: the sorted
copy of x, a candidate population per operator, an argsort of N x D random keys (twice,
argsort of argsort) for each of the masks Mr and Mf, the gathered rows of j and of the
pairs. At paper 003's size (10,000 protozoa, D = 1,000) a population is 40 MB, and the
compiled step took 2.6 ms per iteration, 36 times the 72 us its memory traffic needs at the
least (docs/benchmarks.md). Here a protozoan's row crosses memory about once each way (for a
problem evaluated between two launches: its candidate row once more each way, and the
problem's own traffic), the rows it reads of others only at its masked coordinates:

1. `torch.sort` of the values (N numbers per run, stable): rank r's parent is row
   order[r] of the state, read in place; rows are never moved, the selection's write into
   the other buffer is the sort (the state comes out in rank order, as eager's does).
2. `_renew`, one program per run: pf (11) and the ceil(N pf) ranks that do dormancy or
   reproduction: the ranks with the smallest of N random keys, found by counting (8-bit
   radix passes over the keys, ties by rank), not by sorting.
3. `_move`, one program per block of ranks of one run, each rank's row in registers:
   its operator ((13) dormancy or reproduction, (12) autotroph or heterotroph), its mask
   ((3) or (5): the row's `ones` smallest of D random keys, found by a bisection on the
   bits of key and coordinate, not by sorting), the rows it reads of others at its masked
   coordinates only (j, the pairs of (6) or the neighbours of (8)), the candidate ((1), (2),
   (6) or (8)), clipped to the box, its value (built-in objectives inline; any other problem
   evaluated between a move launch and a select launch, from a candidate buffer), the
   greedy selection into the other buffer, and the block's best value with its rank.
4. `_finish`, one program per run: the engine's bookkeeping from the block bests, the
   iteration count t of the state, the Philox counter.

Random numbers: Philox 4x32-10 keyed by the run set's key, counter (c0, c1) = a 64-bit
index, c2 = the iteration, c3 = the stream:

- stream 0, index = a coordinate pair of a rank's row (`uniform_pairs`' layout): words a, b
  the two coordinates' mask keys, c, e their values (Rand of (1) or (2), rand of (9));
- stream 1, index = run * N + rank: the operator's test ((13) or (12)), the sign s, the
  scale (rand of (2) or of (4)) and one word for Mr's count (3) or for j of (6) (a
  protozoan uses one operator, so these four are independent wherever they are used);
- stream 2, same index: the rank's key for the renewal draw; stream 3, index = run: pf;
- stream 4 + q // 2, same index as stream 1: k- and k+ of pairs q (words a, b for even q,
  c, e for odd q).

Keys are 31-bit integers (a word shifted right once); the eager step's float32 keys, given
to the kernels by the tests, are compared as the integers of their bits, in the same order.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..cuda_common import (
    FusedIteration,
    finish_run,
    interleave,
    launch,
    new_values,
    row_tiles,
    store_block_best,
    tile,
)

#: Widest dimension the fused kernels take (one program keeps a protozoan's row in registers).
MAX_DIM = 4096
#: Elements of a program's tile (BLOCK_P rows of BLOCK_D, at least one row): 256 was the
#: fastest or within 12% of it at D = 10, 30, 100 and 1,000 in benchmarks/fused_tiles.py on an
#: H100 (docs/benchmarks.md); row_tiles' 1,024 took up to 57% longer (a row carries more state
#: than a particle: pair ranks and weights, its operator, its mask).
TILE_ELEMENTS = 256
#: Smallest population x dimension (of one run) at which `auto` weighs these kernels rather than
#: the compiled step. On the H100 (docs/benchmarks.md, 2026-11-26) they took 0.15-0.33 of the
#: compiled step's time from 1,000 x 1,000 to 10,000 x 1,000 (paper 003's Table 2), but 3.0x its
#: time at 50 x 3 (spring, float64) and 1.8x at 50 x 4 (Rosenbrock): a few more launches a step,
#: with the problem's own kernels between two of them. Sizes in between, and batched runs, were
#: not measured: the compiled step stays the choice there. Against graph replay of the eager step
#: (the studies) or eager steps the kernels were faster at every size measured (spring: 92.7 us
#: against 375.8 us), so only the compiled step is weighed here.
PICKED_FROM = 1_000_000
_PI = tl.constexpr(3.141592653589793)
# Philox streams (see the module's docstring).
_ELEMENTS, _SCALARS, _RENEWAL, _RUN, _PAIRS = (tl.constexpr(s) for s in range(5))


def compiled_faster(algorithm, problem) -> str | None:
    """Why `auto` takes the compiled step rather than these kernels for this run (see
    PICKED_FROM), or None."""
    size = algorithm.pop_size * problem.dim
    if size >= PICKED_FROM:
        return None
    return (f"APO's fused kernels are picked over the compiled step from population x dim = {PICKED_FROM:,} "
            f"(here {size:,}: the compiled step was faster at small sizes on an H100); engine='fused' runs them "
            "when asked")


@triton.jit
def _words(seed, step, index, stream, WIDE: tl.constexpr):
    """Philox's four words for a (tensor or scalar) 64-bit `index` of this iteration's `stream`."""
    zero = (index * 0).to(tl.uint32)
    high = zero
    if WIDE:
        high = (index.to(tl.int64) >> 32).to(tl.uint32)
    return tl.random.philox(seed, index.to(tl.uint32), high, zero + step, (index * 0 + stream).to(tl.uint32))


@triton.jit
def _key(word):
    """A 31-bit non-negative key from a 32-bit word."""
    return (word >> 1).to(tl.int32, bitcast=True)


@triton.jit
def _given_key(u):
    """The key of a given U[0, 1) float32 number: its bits as an integer (same order)."""
    return u.to(tl.float32).to(tl.int32, bitcast=True)


@triton.jit
def _below(word, n):
    """U{0..n-1} from a 32-bit word (multiply and shift; 0 where n is 0)."""
    return ((word.to(tl.uint64) * n.to(tl.uint64)) >> 32).to(tl.int32)


@triton.jit
def _ceil(v):
    """ceil(v) of v >= 0 as an integer."""
    whole = v.to(tl.int32)
    return whole + (whole.to(v.dtype) < v).to(tl.int32)


@triton.jit
def _smallest(key, ones, d, dm):
    """Each row's `ones` smallest keys (ties by coordinate) as a mask: exactly `ones` ones per
    row at distinct coordinates, eager's rank test on random keys (`exact_ones`).

    A key and its coordinate make one unique 43-bit number (key * 4096 + d: MAX_DIM is 4,096),
    so the `ones`-th smallest of them, found bit by bit (43 counts per row), is the threshold
    of exactly `ones` coordinates. Ties need no pass of their own: one that counted them (a
    cumulative sum after the bit loop) made Triton 3.6 keep the row in local memory (12.7 KB
    of stack a thread, 16.6 ms an iteration at paper 003's size on an H100)."""
    unique = (key.to(tl.int64) << 12) | d[None, :].to(tl.int64)
    real = dm[None, :]
    below = ones.to(tl.int64) * 0  # the largest number with fewer than `ones` of them below it
    for k in range(43):
        half = tl.full((), 1, tl.int64) << (42 - k)
        count = tl.sum(((unique < below[:, None] + half) & real).to(tl.int32), 1)
        below = tl.where(count < ones, below + half, below)
    return (unique <= below[:, None]) & real & (ones[:, None] > 0)


@triton.jit
def _weight(f_minus, f_plus, eps):
    """exp(-|f(k-) / (f(k+) + eps)|) of (7) and (10); 0 where undefined (both infinite)."""
    w = tl.exp(-tl.abs(f_minus / (f_plus + eps)))
    return tl.where(w != w, 0.0, w)


@triton.jit
def _pull(x, x_ptr, order_ptr, fs_ptr, k_ptr, base, row, rank, pm, d, reads, autotroph, eps, seed, step, P, D, RPP,
          NP: tl.constexpr, GIVEN_R: tl.constexpr, EMIT_R: tl.constexpr, WIDE: tl.constexpr):
    """mean_k w (x_lo - x_hi) over the np pairs of (6) (autotrophs: random ranks k- < i < k+)
    or of (8) (heterotrophs: the neighbours i - k, i + k clamped), at the coordinates `reads`."""
    pull = tl.zeros_like(x)
    for q in tl.static_range(NP):
        if GIVEN_R:  # the test hook: the eager step's k-, k+
            k_minus = tl.load(k_ptr + (1 + q) * RPP + row, mask=pm, other=0).to(tl.int32)
            k_plus = tl.load(k_ptr + (1 + NP + q) * RPP + row, mask=pm, other=0).to(tl.int32)
        else:
            a, b, c, e = _words(seed, step, row, _PAIRS + q // 2, WIDE)
            if q % 2 == 1:
                a, b = c, e
            k_minus = tl.where(rank == 0, 0, _below(a, rank))
            k_plus = tl.where(rank == P - 1, P - 1, rank + 1 + _below(b, P - 1 - rank))
            if EMIT_R:
                tl.store(k_ptr + (1 + q) * RPP + row, k_minus, mask=pm)
                tl.store(k_ptr + (1 + NP + q) * RPP + row, k_plus, mask=pm)
        lo = tl.where(autotroph, k_minus, tl.maximum(rank - q - 1, 0))
        hi = tl.where(autotroph, k_plus, tl.minimum(rank + q + 1, P - 1))
        w = _weight(tl.load(fs_ptr + base + lo, mask=pm, other=0.0), tl.load(fs_ptr + base + hi, mask=pm, other=0.0),
                    eps)
        lo_row = base + tl.load(order_ptr + base + lo, mask=pm, other=0)
        hi_row = base + tl.load(order_ptr + base + hi, mask=pm, other=0)
        x_lo = tl.load(x_ptr + lo_row[:, None] * D + d[None, :], mask=reads, other=0.0)
        x_hi = tl.load(x_ptr + hi_row[:, None] * D + d[None, :], mask=reads, other=0.0)
        pull += w[:, None] * (x_lo - x_hi)
    return pull / NP


# Not specialised on the seed (a random key: 1 in 16 would build another kernel) nor on the
# population's size (the paper's 1,000 to 10,000 would build two): one build serves them all.
@triton.jit(do_not_specialize=["seed", "P", "NB", "RPD", "RPP"])
def _move(
    x_ptr, order_ptr, fs_ptr, renew_ptr, t_ptr, cand_ptr, kinds_ptr, f_in_ptr, out_x_ptr, out_f_ptr,
    lower_ptr, upper_ptr, coef_ptr, block_f_ptr, block_i_ptr, nan_ptr, counter_ptr, r_ptr, s_ptr, k_ptr,
    seed, P, D, NB, RPD, RPP,
    FITNESS: tl.constexpr, USER_FN: tl.constexpr, MOVE: tl.constexpr, SELECT: tl.constexpr, GIVEN_R: tl.constexpr,
    EMIT_R: tl.constexpr, NP: tl.constexpr, WIDE: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr,
):
    tl.static_assert(BLOCK_D <= 4096, "_smallest packs a coordinate into 12 bits (MAX_DIM)")
    block, run, rank, d, pm, dm, mask, row, off = tile(P, D, BLOCK_P, BLOCK_D, WIDE)
    base = row - rank  # run * P, for indices into the run's arrays
    parent_off = (base + tl.load(order_ptr + row, mask=pm, other=0))[:, None] * D + d[None, :]
    f_parent = tl.load(fs_ptr + row, mask=pm, other=float("inf"))

    if MOVE:
        x = tl.load(x_ptr + parent_off, mask=mask, other=0.0)
        step = tl.load(counter_ptr).to(tl.uint32)
        if GIVEN_R:  # the test hook: the eager step's numbers (see FusedAPO.given_scalars)
            key = _given_key(tl.load(r_ptr + off, mask=mask, other=0.0))
            value = tl.load(r_ptr + RPD + off, mask=mask, other=0.0)
            test = tl.load(s_ptr + RPP + row, mask=pm, other=0.0)
            sign_u = tl.load(s_ptr + 2 * RPP + row, mask=pm, other=0.0)
            scale = tl.load(s_ptr + 3 * RPP + row, mask=pm, other=0.0)
            count_u = tl.load(s_ptr + 4 * RPP + row, mask=pm, other=0.0).to(tl.float32)
            j = tl.load(k_ptr + row, mask=pm, other=0).to(tl.int32)
        else:
            pairs = row[:, None] * (BLOCK_D // 2) + tl.arange(0, BLOCK_D // 2)[None, :]  # coordinate pairs
            a, b, c, e = _words(seed, step, pairs, _ELEMENTS, WIDE)
            key = interleave(_key(a), _key(b), BLOCK_P, BLOCK_D)
            value = interleave(tl.random.uint_to_uniform_float(c), tl.random.uint_to_uniform_float(e), BLOCK_P,
                               BLOCK_D).to(x.dtype)
            a, b, c, e = _words(seed, step, row, _SCALARS, WIDE)
            test = tl.random.uint_to_uniform_float(a).to(x.dtype)
            sign_u = tl.random.uint_to_uniform_float(b)
            scale = tl.random.uint_to_uniform_float(c).to(x.dtype)
            count_u = tl.random.uint_to_uniform_float(e)
            j = _below(e, P)
            if EMIT_R:
                tl.store(k_ptr + row, j, mask=pm)
        max_iters, eps = tl.load(coef_ptr + 2), tl.load(coef_ptr + 3)
        progress = tl.minimum((tl.load(t_ptr) + 1.0) / max_iters, 1.0)  # t / T, t = 1..T
        swing = 1.0 + tl.cos(progress * _PI)
        i = (rank + 1).to(x.dtype)
        renew = tl.load(renew_ptr + row, mask=pm, other=0) != 0
        dormant = renew & (test < 0.5 * (1.0 + tl.cos((1.0 - i / P) * _PI)))  # (13)
        autotroph = (~renew) & (test < 0.5 * swing)  # (12)
        sign = tl.where(sign_u < 0.5, 1.0, -1.0).to(x.dtype)
        ones_f = ((D * (rank + 1).to(tl.int64) + P - 1) // P).to(tl.int32)  # ceil(D i / N)
        ones = tl.where(renew, tl.maximum(_ceil(count_u * D), 1), ones_f)
        moving = _smallest(key, ones, d, dm) & mask  # (3) Mr, (5) Mf

        lower = tl.load(lower_ptr + d, mask=dm, other=0.0)[None, :]
        upper = tl.load(upper_ptr + d, mask=dm, other=0.0)[None, :]
        point = tl.minimum(lower + (upper - lower) * value, upper)  # uniform in the box
        renewed = tl.where(dormant[:, None], point, x + (sign * scale)[:, None] * point)  # (1), (2)

        reads = moving & (~renew)[:, None]  # a forager reads others' rows where it moves
        pull = _pull(x, x_ptr, order_ptr, fs_ptr, k_ptr, base, row, rank, pm, d, reads, autotroph, eps, seed, step,
                     P, D, RPP, NP, GIVEN_R, EMIT_R, WIDE)
        j_row = base + tl.load(order_ptr + base + j, mask=pm, other=0)
        x_j = tl.load(x_ptr + j_row[:, None] * D + d[None, :], mask=reads & autotroph[:, None], other=0.0)
        near = (1.0 + sign[:, None] * value * (1.0 - progress)) * x  # (9)
        toward = tl.where(autotroph[:, None], x_j, near)
        foraged = x + (scale * swing)[:, None] * (toward - x + pull)  # (6), (8) with f of (4)

        moved = tl.where(renew[:, None], renewed, foraged)
        cand = tl.where(dormant[:, None] | moving, moved, x)
        # clipped as torch.clamp clips: a NaN stays NaN (then evaluates to NaN: counted, never kept)
        cand = tl.minimum(tl.maximum(cand, lower, propagate_nan=tl.PropagateNan.ALL), upper,
                          propagate_nan=tl.PropagateNan.ALL)
        tl.store(kinds_ptr + row, tl.where(renew, tl.where(dormant, 0, 1), tl.where(autotroph, 2, 3)).to(tl.int8),
                 mask=pm)
        if FITNESS == 0:
            tl.store(cand_ptr + off, cand, mask=mask)

    if SELECT:
        if MOVE:
            f = new_values(cand, f_in_ptr, nan_ptr, run, row, pm, d, dm, D, FITNESS, USER_FN)
            better = f < f_parent  # greedy: strictly better replaces
            x_out = tl.where(better[:, None], cand, x)
        else:  # the values the engine's problem computed; read only the row that survives
            f = tl.load(f_in_ptr + row, mask=pm, other=float("inf"))
            better = f < f_parent
            kept = tl.load(x_ptr + parent_off, mask=mask & ~better[:, None], other=0.0)
            x_out = tl.where(better[:, None], tl.load(cand_ptr + off, mask=mask & better[:, None], other=0.0), kept)
        f_out = tl.where(better, f, f_parent)
        tl.store(out_x_ptr + off, x_out, mask=mask)
        tl.store(out_f_ptr + row, f_out, mask=pm)
        store_block_best(f_out, pm, block, run, NB, block_f_ptr, block_i_ptr, BLOCK_P)


# Philox's words are unpacked inside these helpers, not in `_renew`: there a name bound to a
# scalar word before a loop and to a tile of words inside it would be a loop-carried variable
# that changes type, which Triton's compiler refuses (its interpreter does not check).
@triton.jit
def _run_uniform(seed, step, run, WIDE: tl.constexpr):
    """The run's U[0, 1) number of this iteration (stream 3: pf of (11))."""
    a, _, _, _ = _words(seed, step, run, _RUN, WIDE)
    return tl.random.uint_to_uniform_float(a)


@triton.jit
def _renewal_key(seed, step, index, WIDE: tl.constexpr):
    """The renewal draw's keys of the ranks `index` (run * N + rank; stream 2)."""
    a, _, _, _ = _words(seed, step, index, _RENEWAL, WIDE)
    return _key(a)


@triton.jit(do_not_specialize=["seed", "P", "RPP"])
def _renew(renew_ptr, keys_ptr, s_ptr, coef_ptr, counter_ptr, it_ptr, seed, P, RPP,
           GIVEN_R: tl.constexpr, WIDE: tl.constexpr, TILE: tl.constexpr):
    run = tl.program_id(0)
    base = run * P
    if WIDE:
        base = run.to(tl.int64) * P
    lanes = tl.arange(0, TILE)
    step = tl.load(counter_ptr).to(tl.uint32)
    if GIVEN_R:
        u = tl.load(s_ptr + 5 * RPP + base)
    else:
        u = _run_uniform(seed, step, run, WIDE).to(coef_ptr.dtype.element_ty)
    pf = tl.load(coef_ptr + 1) * u  # (11)
    need = tl.minimum(_ceil(P * pf), P)

    for start in range(0, P, TILE):  # the ranks' keys
        r = start + lanes
        if GIVEN_R:
            key = _given_key(tl.load(s_ptr + base + r, mask=r < P, other=0.0))
        else:
            key = _renewal_key(seed, step, base + r, WIDE)
        tl.store(keys_ptr + base + r, key, mask=r < P)

    # The need-th smallest key, 8 bits at a time from the top (FEP's selection by counting):
    # `prefix` holds the digits found, `high` marks their bits. A loop, not unrolled: unrolled,
    # this was the longest kernel of APO's first run to compile.
    prefix = need * 0
    high = need * 0
    for k in range(4):
        shift = 24 - 8 * k
        counts = tl.zeros((256,), dtype=tl.int32)
        for start in range(0, P, TILE):
            r = start + lanes
            key = tl.load(keys_ptr + base + r, mask=r < P, other=0)
            candidate = (r < P) & ((key & high) == prefix)
            counts += tl.histogram((key >> shift) & 255, 256, mask=candidate)
        digit = tl.sum((tl.cumsum(counts, 0) < need).to(tl.int32), 0)
        need -= tl.sum(tl.where(tl.arange(0, 256) < digit, counts, 0), 0)
        prefix = prefix | (digit << shift)
        high = high | ((digit * 0 + 255) << shift)

    # The ranks that renew: every key below that one, and the first `need` equal to it.
    ties = need * 0
    for start in range(0, P, TILE):
        r = start + lanes
        key = tl.load(keys_ptr + base + r, mask=r < P, other=0)
        tie = (r < P) & (key == prefix)
        chosen = ((r < P) & (key < prefix)) | (tie & (ties + tl.cumsum(tie.to(tl.int32), 0) <= need))
        tl.store(renew_ptr + base + r, chosen.to(tl.int8), mask=r < P)
        ties += tl.sum(tie.to(tl.int32), 0)
    if run == 0:
        tl.store(it_ptr, tl.load(it_ptr) + 1)


@triton.jit(do_not_specialize=["P", "NB", "record_ptr"])  # (record_ptr: see cuda_common.track_args)
def _finish(
    block_f_ptr, block_i_ptr, x_ptr, t_ptr, t_out_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr,
    counter_ptr, coef_ptr, P, D, NB, HAS_TARGET: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr,
):
    finish_run(block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, counter_ptr,
               coef_ptr, P, D, NB, HAS_TARGET, BLOCK_B, BLOCK_D)
    if tl.program_id(0) == 0:
        tl.store(t_out_ptr, tl.load(t_ptr) + 1.0)


class FusedAPO(FusedIteration):
    """One engine iteration of `APO`; the population alternates between two buffers, in rank order."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        self.block_d, _, self.num_warps = row_tiles(problem.dim)
        block_p = max(1, TILE_ELEMENTS // self.block_d)
        eps = torch.finfo(problem.lower.dtype).eps
        super().__init__(problem, runs, algorithm.pop_size, block_p,
                         [algorithm.pf_max, float(algorithm.max_iters), eps], target, seed)
        self.pairs = algorithm.np
        device, dtype, pop = self.lower.device, self.lower.dtype, self.pop
        self.order = torch.empty(runs, pop, device=device, dtype=torch.int64)  # rank r's row in the state
        self.f_sorted = torch.empty(runs, pop, device=device, dtype=dtype)
        self.keys = torch.empty(runs, pop, device=device, dtype=torch.int32)  # the renewal draw's keys
        self.renew = torch.empty(runs, pop, device=device, dtype=torch.int8)  # ranks doing (1) or (2)
        self.kinds = torch.empty(runs, pop, device=device, dtype=torch.int8)  # each rank's operator (tests)
        # Candidates, for a problem evaluated between the move and select launches.
        self.cand = None if self.fitness else torch.empty(runs, pop, self.dim, device=device, dtype=dtype)
        self.renew_tile = min(4096, triton.next_power_of_2(pop))
        # Test hooks: the eager step's numbers to use instead of Philox's (all three together):
        # given_r (2, runs, pop, dim): mask keys, values; given_scalars (6, runs, pop): renewal
        # keys, tests, signs, scales, Mr's counts (as U[0, 1)), pf's U[0, 1) (read at rank 0);
        # given_ranks (1 + 2 np, runs, pop): j, k- of each pair, k+ of each pair. drawn_ranks
        # (like given_ranks): where the kernels store the ranks they draw (drawn_r is not used:
        # the tests read the kernels' other draws from their candidates).
        self.given_scalars: torch.Tensor | None = None
        self.given_ranks: torch.Tensor | None = None
        self.drawn_ranks: torch.Tensor | None = None

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        out = self.other_buffers(s)
        torch.sort(s.f, dim=-1, stable=True, out=(self.f_sorted, self.order))
        given = self.given_r is not None
        if given and (self.given_scalars is None or self.given_ranks is None):
            raise ValueError("the fused APO test hook needs given_r, given_scalars and given_ranks together")
        wide = s.x.numel() >= 2**31
        launch(_renew, (self.runs,),
            self.renew, self.keys, self.given_scalars if given else self.f_sorted, self.coef, self.counter, it,
            self.seed, self.pop, self.runs * self.pop, GIVEN_R=given, WIDE=wide, TILE=self.renew_tile,
            num_warps=4 if self.renew_tile <= 1024 else 8,
        )
        ranks = self.given_ranks if given else self.drawn_ranks
        args = dict(
            x_ptr=s.x, order_ptr=self.order, fs_ptr=self.f_sorted, renew_ptr=self.renew, t_ptr=s.t,
            cand_ptr=out.x if self.cand is None else self.cand, kinds_ptr=self.kinds, out_x_ptr=out.x,
            out_f_ptr=out.f, lower_ptr=self.lower, upper_ptr=self.upper, coef_ptr=self.coef,
            block_f_ptr=self.block_f, block_i_ptr=self.block_i, nan_ptr=self.problem.nan_evals,
            counter_ptr=self.counter, r_ptr=self.given_r if given else s.x,
            s_ptr=self.given_scalars if given else self.f_sorted, k_ptr=self.order if ranks is None else ranks,
            seed=self.seed, P=self.pop, D=self.dim, NB=self.blocks, RPD=s.x.numel(), RPP=self.runs * self.pop,
            FITNESS=self.fitness, USER_FN=self.user_fn, GIVEN_R=given, EMIT_R=not given and ranks is not None,
            NP=self.pairs, WIDE=wide, BLOCK_P=self.block_p, BLOCK_D=self.block_d, num_warps=self.num_warps,
        )
        self.move_and_select(_move, args, self.cand, out.f)
        launch(_finish, (self.runs,),
            self.block_f, self.block_i, out.x, s.t, out.t, P=self.pop, D=self.dim, NB=self.blocks,
            BLOCK_D=self.block_d, **self.track_args(best_x, hit, it, best_f, record), **self.reduce_args(),
        )
        return out, best_x, hit, it, best_f


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = FusedAPO
