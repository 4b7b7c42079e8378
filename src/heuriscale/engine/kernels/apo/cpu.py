"""APO's iterations as one Numba kernel: the native fast path of the CPU engine.

The math and every choice are `algorithms/apo.py`'s (the reference); only the random
numbers differ (Philox here, torch's stream there), so the tests compare the two in
distribution. One iteration:

1. per run (parallel over runs): the ranks, a stable sort of the fitness; pf (11) and the
   ceil(N pf) ranks doing dormancy or reproduction (a partial Fisher-Yates over ranks);
2. per block of ranks of one run (16 to 256, fewer for wider rows; parallel; a block is a low and a high slice of
   ranks, as the masks grow with the rank): each protozoan's candidate, clipped to the box,
   into `cand` (what `moved` hands to a problem evaluated between kernel calls); its value;
   greedy selection into the other population buffer in rank order, which is the eager
   step's new state (sorted parents, replaced where strictly better);
3. per run (serial): the engine's bookkeeping (on exact ties of the best value, best_x may
   be another, equally good point than eager's first argmin).

Parts 1 and 2 are jobs (`cpu_jobs.py`): compiled once for the serial and the parallel build,
and called through their addresses (the parallel build took 13.2 s where the serial one
took 6.2, compiling and optimising part 2 again in each loop). Part 2's job, a
block's candidates, calls the values and selection as a job of their own after each chunk of
about SELECT_BYTES of candidates (still in L1; at D = 30 a chunk is a whole slice of ranks),
and the mask's draws and the dense move as jobs too: on a new machine each compiles in a
process of its own (the candidates' job, with everything in it, was the longest compile:
2.2 s of 4.4). A selection after the whole block rather than after each chunk evaluated its
candidates out of L1: at 1,000 x 1,000 on 16 threads, 825-932 us a step per chunk against
852-945 us per block (Xeon).

Sorting moves no rows: rank r's parent is row `order[r]` of the source buffer, and the
selection's copy into the other buffer is the sort. The two buffers swap roles after each
select; `_launch` returns the state that holds the newest population.

Random numbers: Philox 4x32-10 with key = the run set's key and counter
(row & 0xFFFFFFFF, row >> 32, iteration counter, stream), stream = kind + KINDS * block:

- SCALARS (row = run * pop + rank, block 0): the operator's test (13) or (12), the sign s,
  the scale (rand of (2) or of (4)) and an integer (Mr's count (3) or j of (6)); a
  protozoan runs one operator, so these four are independent wherever they are used;
- PAIRS (same row): block b holds (k-, k+) of pairs 2b and 2b+1 of (6);
- MASK (same row): block b holds Fisher-Yates steps 2b and 2b+1 as (coordinate, value):
  the value is Rand of (2) or rand of (9) at the coordinate that step picks;
- DORMANT (same row): block b holds Rand of (1) at coordinates 4b..4b+3;
- RUN (row = run): pf (11); RANKS (row = run): block b holds rank steps 4b..4b+3.

A number depends on its counter only, never on the thread drawing it.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from .. import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit, prange, typeof, types

from ....algorithms.apo import AUTOTROPH, DORMANCY, HETEROTROPH, REPRODUCTION, APOState
from ..cpu_common import BLOCK_ROWS, NativeIteration, close_step, copy_into, kernel, stable_order
from ..cpu_jobs import JobType, call_job, compiled_jobs, inner, job
from ..cpu_objectives import new_value
from ..cpu_random import philox, uniform

KINDS = 8  # stream = kind + KINDS * block
#: From this many coordinates a candidate is built by passes over all of them (in SIMD lanes);
#: below, coordinate by coordinate, the masked ones only (a vectorised pass's set-up costs
#: more there; measured crossover 64-128 coordinates).
DENSE_DIM = 96
SCALARS, PAIRS, MASK, DORMANT, RUN, RANKS = range(6)
_LOW = np.uint64(0xFFFFFFFF)
#: Candidates made between two calls of the selection (`_candidates`): what L1 holds of them.
SELECT_BYTES = 16_384


@njit(cache=True, inline="always")
def _draw(key, row, step, kind, block):
    # every argument as an int64: the calls' literal kinds and blocks would each compile a
    # _philox_row of their own (six), and inlined at each call it took 0.6 s more to build
    return _philox_row(np.int64(key), np.int64(row), np.int64(step), np.int64(kind + KINDS * block))


@inner
def _philox_row(key, row, step, stream):
    r = np.uint64(row)
    return philox(key, r & _LOW, r >> np.uint64(32), step, stream)


@njit(cache=True, inline="always")
def _below(word, n):
    """U{0..n-1} from a 32-bit word (multiply and shift: bias below n / 2**32)."""
    return np.int64((np.uint64(word) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _clip(v, lo, hi):
    """torch.clamp's clip: NaN stays NaN (then evaluates to NaN, counted, never kept)."""
    if v < lo:
        return np.float64(lo)
    if v > hi:
        return np.float64(hi)
    return v


@njit(cache=True, inline="always")
def _moved(kind, xi, xj, value, pull, lower, upper, scale, s, ff, progress):
    """A masked coordinate's new value, clipped: (2) for reproduction, (6) for autotrophs,
    (8) with (9) for heterotrophs (value: the coordinate's Rand or rand; pull: the pairs'
    mean pull)."""
    xd = np.float64(xi)
    if kind == REPRODUCTION:
        v = xd + scale * (lower + value * (upper - lower))  # (2)
    elif kind == AUTOTROPH:
        v = xd + ff * (xj - xd + pull)  # (6)
    else:
        near = (1.0 + s * value * (1.0 - progress)) * xd  # (9)
        v = xd + ff * (near - xd + pull)  # (8)
    return _clip(v, lower, upper)


@job  # (a call of its own: inlined into the kernel, its loops come out slower)
def _dense(c, x, xi, xj, perm, ones, masked, values, pulls, pair_rows, pair_w, n_pairs, lower, upper, kind, scale, s,
           ff, progress):
    """A candidate's coordinates from this many (DENSE_DIM) on: every one in order, the rows
    read sequentially in SIMD lanes; the masked ones (perm[:ones]) move, the others keep x_i."""
    dim = c.shape[0]
    for k in range(ones):
        masked[perm[k]] = 1
    for d in range(dim):  # the pairs' pull, pair by pair as eager sums them
        pulls[d] = 0.0
    for p in range(n_pairs * (kind != REPRODUCTION)):  # (reproduction has no pairs)
        weight, minus, plus = pair_w[p], pair_rows[p, 0], pair_rows[p, 1]
        for d in range(dim):
            pulls[d] += weight * (np.float64(x[minus, d]) - x[plus, d])
    for d in range(dim):
        moved = _moved(kind, xi[d], xj[d], values[d], pulls[d] / n_pairs, lower[d], upper[d], scale, s, ff, progress)
        c[d] = moved if masked[d] else _clip(np.float64(xi[d]), lower[d], upper[d])
        masked[d] = 0


@inner
def _rank(f, order, renew, perm, jumps, pf_max, key, run, step):
    """One run's ranks (order[r]: the row of rank r, best first) and which ranks renew."""
    n = f.shape[0]
    stable_order(f, order, jumps)  # ties keep their row order (jumps: the sort's scratch, free until below)
    pf = pf_max * uniform(_draw(key, run, step, RUN, 0)[0])  # (11)
    count = min(n, math.ceil(n * pf))
    renew[:] = 0
    zero = np.uint64(0)
    words = (zero, zero, zero, zero)
    for i in range(count):  # partial Fisher-Yates: `count` distinct ranks, O(count)
        if i % 4 == 0:
            words = _draw(key, run, step, RANKS, i // 4)
        j = i + _below(words[i % 4], n - i)
        jumps[i] = j
        perm[i], perm[j] = perm[j], perm[i]
        renew[perm[i]] = 1
    for i in range(count - 1, -1, -1):  # undo the swaps: perm is the identity again
        j = jumps[i]
        perm[i], perm[j] = perm[j], perm[i]


@job
def _mask_words(picks, values, key, row, step, ones):
    """The MASK stream's words for Fisher-Yates steps 0..ones-1 (block b: steps 2b and 2b + 1
    as words (a, b) and (c, e)): picks[k] picks step k's coordinate, values[k] is its value.
    Drawn first, in a loop of their own over 1-D arrays, which runs in SIMD lanes (4x faster
    than stores into the rows of one 2-D array)."""
    r = np.uint64(row)
    for b in range((ones + 1) // 2):  # (Philox inline, not through _draw's call: in SIMD lanes)
        w0, w1, w2, w3 = philox(key, r & _LOW, r >> np.uint64(32), step, MASK + KINDS * b)
        picks[2 * b], values[2 * b], picks[2 * b + 1], values[2 * b + 1] = w0, w1, w2, w3


@njit(cache=True, inline="always")  # (a call with this many arrays costs about 0.1 us: short rows pay it)
def _candidate(c, x, f, order, rank, row, renew, lower, upper, n_pairs, progress, swing, eps, perm, jumps, picks,
               drawn, masked, values, pulls, pair_rows, pair_w, key, step, helpers):
    """The candidate of rank `rank` (0-based) of one run into c (clipped); returns its operator.
    x, f: the run's source buffer, read through `order`; swing = 1 + cos(t/T pi). The mask is
    a partial Fisher-Yates over coordinates; rows shorter than DENSE_DIM then move their
    masked coordinates one by one, longer ones go through `_dense` (the same numbers).
    helpers: the CompiledJobs of `_mask_words` and `_dense` (jobs of their own: each compiles
    beside the others on a new machine)."""
    mask_words, dense_job = helpers
    n, dim = x.shape
    xi = x[order[rank]]
    i = rank + 1
    test, sign_word, scale_word, int_word = _draw(key, row, step, SCALARS, 0)
    s = 1.0 if uniform(sign_word) < 0.5 else -1.0
    xj = xi
    scale, ff = 0.0, 0.0
    if renew:
        pdr = 0.5 * (1.0 + math.cos((1.0 - i / n) * math.pi))  # (13), with 1 + cos
        if uniform(test) < pdr:
            zero = np.uint64(0)
            u = (zero, zero, zero, zero)
            for d in range(dim):
                if d % 4 == 0:
                    u = _draw(key, row, step, DORMANT, d // 4)
                point = lower[d] + np.float64(uniform(u[d % 4])) * (upper[d] - lower[d])  # (1)
                c[d] = _clip(point, lower[d], upper[d])
            return DORMANCY
        kind = REPRODUCTION
        scale = s * uniform(scale_word)  # s rand of (2)
        ones = 1 + _below(int_word, dim)  # (3): ceil(rand D) ones, uniform on 1..D
    else:
        ff = uniform(scale_word) * swing  # (4)
        ones = (dim * i + n - 1) // n  # (5): ceil(D i / N) ones
        if uniform(test) < 0.5 * swing:  # (12): pah
            kind = AUTOTROPH
            xj = x[order[_below(int_word, n)]]
            zero = np.uint64(0)
            w = (zero, zero, zero, zero)
            for p in range(n_pairs):  # rank rules of (6): k- < i < k+, except at both ends
                if p % 2 == 0:
                    w = _draw(key, row, step, PAIRS, p // 2)
                minus = 0 if rank == 0 else _below(w[2 * (p % 2)], rank)
                plus = n - 1 if rank == n - 1 else rank + 1 + _below(w[2 * (p % 2) + 1], n - 1 - rank)
                pair_rows[p, 0], pair_rows[p, 1] = order[minus], order[plus]
        else:
            kind = HETEROTROPH
            for p in range(n_pairs):  # neighbours i-k, i+k clamped into 1..N, (8)
                pair_rows[p, 0], pair_rows[p, 1] = order[max(rank - p - 1, 0)], order[min(rank + p + 1, n - 1)]
        for p in range(n_pairs):  # (7) or (10); 0 for two infinite values (the eager step's pair_weights)
            w = math.exp(-abs(np.float64(f[pair_rows[p, 0]]) / (f[pair_rows[p, 1]] + eps)))
            pair_w[p] = w if w == w else 0.0
    dense = dim >= DENSE_DIM
    if dense:
        call_job(mask_words, picks, drawn, key, row, step, ones)
    zero = np.uint64(0)
    w = (zero, zero, zero, zero)
    for k in range(ones):  # partial Fisher-Yates over coordinates: `ones` distinct ones, O(ones)
        if dense:
            pick, value = picks[k], drawn[k]
        else:  # (as `_mask_words` draws them, one call per two steps)
            if k % 2 == 0:
                w = _draw(key, row, step, MASK, k // 2)
            pick, value = w[2 * (k % 2)], w[2 * (k % 2) + 1]
        j = k + _below(pick, dim - k)
        jumps[k] = j
        perm[k], perm[j] = perm[j], perm[k]
        values[perm[k]] = uniform(value)  # Rand of (2) or rand of (9) at that coordinate
    if not dense:  # few coordinates: x_i, then the masked ones (perm[:ones]) one by one
        for d in range(dim):
            c[d] = _clip(np.float64(xi[d]), lower[d], upper[d])
        for k in range(ones):
            d = perm[k]
            pull = 0.0
            for p in range(n_pairs * (kind != REPRODUCTION)):  # (reproduction has no pairs)
                pull += pair_w[p] * (np.float64(x[pair_rows[p, 0], d]) - x[pair_rows[p, 1], d])
            c[d] = _moved(kind, xi[d], xj[d], values[d], pull / n_pairs, lower[d], upper[d], scale, s, ff, progress)
    else:
        call_job(dense_job, c, x, xi, xj, perm, ones, masked, values, pulls, pair_rows, pair_w, n_pairs, lower, upper,
                 kind, scale, s, ff, progress)
    for k in range(ones - 1, -1, -1):  # undo the swaps: perm is the identity again
        j = jumps[k]
        perm[k], perm[j] = perm[j], perm[k]
    return kind


# -- the parallel loops' work, job by job: compiled once for both builds (see cpu_jobs.py) -------
@job
def _ranks(run, step, fa, order, renew, rank_perm, rank_jumps, pf_max, key):
    """Run `run`'s ranks of its source population fa, and which ranks renew."""
    _rank(fa[run], order[run], renew[run], rank_perm[run], rank_jumps[run], pf_max, key, run, step)


@job
def _candidates(job, blocks, step, move, select, progress, swing, xa, fa, cand, order, renew, kinds, scratch, lower,
                upper, n_pairs, eps, key, helpers, selecting, selection):
    """Block `job`: the candidates of a low and a high slice of ranks of run job // blocks
    (the masks grow with the rank), then after each chunk of them (SELECT_BYTES) their values
    and the selection (the job `selection`, `_selections`). scratch: the jobs' Fisher-Yates
    and pair buffers (NativeAPO.scratch); helpers: `_candidate`'s; selecting: (xb, fb, f_in,
    fid, fdata, block_f, block_i, block_nan)."""
    perm, jumps, words, masked, values, pulls, pair_rows, pair_w = scratch
    xb, fb, f_in, fid, fdata, block_f, block_i, block_nan = selecting
    pop, dim = fa.shape[1], cand.shape[2]
    half = -(-pop // (2 * blocks))  # ranks per slice: each job takes slices b and 2 blocks - 1 - b
    chunk = max(1, SELECT_BYTES // (dim * cand.itemsize))
    run, b = job // blocks, job % blocks
    if select:
        block_f[run, b], block_i[run, b], block_nan[run, b] = np.inf, b * half, 0
    for part in (b, 2 * blocks - 1 - b):
        end = min(pop, (part + 1) * half)
        for r0 in range(part * half, end, chunk):
            r1 = min(end, r0 + chunk)
            if move:
                for r in range(r0, r1):
                    kinds[run, r] = _candidate(cand[run, r], xa[run], fa[run], order[run], r, run * pop + r,
                                               renew[run, r], lower, upper, n_pairs, progress, swing, eps, perm[job],
                                               jumps[job], words[job, 0], words[job, 1], masked[job], values[job],
                                               pulls[job], pair_rows[job], pair_w[job], key, step, helpers)
            if select:
                call_job(selection, run, b, r0, r1, xa, fa, xb, fb, cand, order, f_in, fid, fdata, block_f, block_i,
                         block_nan)


@job
def _selections(run, b, r0, r1, xa, fa, xb, fb, cand, order, f_in, fid, fdata, block_f, block_i, block_nan):
    """Ranks r0..r1 of run `run` (a chunk of block b's): the candidates' values and the greedy
    selection into xb, fb; block b's best and NaN count so far (rows in rank order, as one
    pass over the block would take them)."""
    pop = fa.shape[1]
    best, best_i, nans = block_f[run, b], block_i[run, b], block_nan[run, b]
    for r in range(r0, r1):
        value, nan = new_value(fid, fdata, cand[run, r], f_in, run * pop + r)
        nans += nan
        parent = order[run, r]
        fb[run, r] = value  # compared in the run's dtype, as eager does
        if fb[run, r] < fa[run, parent]:  # greedy: strictly better replaces
            copy_into(xb[run, r], cand[run, r])
        else:
            fb[run, r] = fa[run, parent]
            copy_into(xb[run, r], xa[run, parent])
        if fb[run, r] < best:
            best, best_i = fb[run, r], r
    block_f[run, b], block_i[run, b], block_nan[run, b] = best, best_i, nans


@kernel
def _steps(xa, fa, xb, fb, t, cand, order, renew, kinds, scratch, rank_perm, rank_jumps, lower, upper, pf_max, n_pairs,
           max_iters, eps, f_in, fid, fdata, steps, move, select, best_x, best_f, hit, it, target, has_target, record,
           block_f, block_i, block_nan, nan_evals, counter, key, jobs):
    runs, pop, dim = xa.shape
    blocks = block_f.shape[1]
    candidate_job, selection_job, rank_job, helpers = jobs  # CompiledJobs (NativeAPO.jobs)
    for k in range(steps):
        step = counter[0]
        progress = min((np.float64(t[0]) + 1.0) / max_iters, 1.0)  # t = 1..T, t/T capped at 1
        swing = 1.0 + math.cos(progress * math.pi)
        if move:
            for run in prange(runs):
                call_job(rank_job, np.int64(run), step, fa, order, renew, rank_perm, rank_jumps, pf_max, key)
        selecting = (xb, fb, f_in, fid, fdata, block_f, block_i, block_nan)
        for job in prange(runs * blocks):  # a block's candidates, their values and the selection
            call_job(candidate_job, np.int64(job), np.int64(blocks), step, move, select, progress, swing, xa, fa, cand,
                     order, renew, kinds, scratch, lower, upper, n_pairs, eps, key, helpers, selecting, selection_job)
        if move:
            it[0] += 1
            t[0] += 1
        if select:
            for run in range(runs):
                close_step(run, xb[run].reshape(-1), dim, best_x, best_f, hit, it, target, has_target, record,
                           block_f, block_i, block_nan, nan_evals, k)
            counter[0] += 1
            xa, fa, xb, fb = xb, fb, xa, fa  # the new population is the next source


class NativeAPO(NativeIteration):
    """`APO`'s iterations on the CPU: the state (x, f, t) stays the eager step's, in rank order."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        # blocks of about 65,536 coordinates (16 to 256 rows): at D = 1,000 a row is ~10 us of
        # work, and 256-row blocks would leave most threads idle at the paper's populations
        super().__init__(problem, runs, algorithm.pop_size, target, seed,
                         block_rows=max(16, min(BLOCK_ROWS, 2**16 // problem.dim)))
        self.params = (float(algorithm.pf_max), int(algorithm.np), float(algorithm.max_iters))
        dtype = problem.lower.dtype
        self.eps = float(torch.finfo(dtype).eps)
        pop, dim, jobs = self.pop, self.dim, runs * self.blocks
        self.cand = torch.empty(runs, pop, dim, dtype=dtype)  # the last move's candidates (`moved`)
        self.order = np.zeros((runs, pop), np.int64)  # rank r of a run is row order[run, r] of the source
        self.renew = np.zeros((runs, pop), np.uint8)  # ranks doing dormancy or reproduction
        self.kinds = np.zeros((runs, pop), np.int8)  # each rank's operator in the last move (tests, diagnostics)
        # Fisher-Yates scratch, one row per parallel job; perm is back to the identity after each use.
        self.perm, self.jumps = np.tile(np.arange(dim, dtype=np.int64), (jobs, 1)), np.empty((jobs, dim), np.int64)
        self.words = np.empty((jobs, 2, dim + 1), np.uint64)  # the mask's Philox words (`_mask_words`)
        self.masked, self.values = np.zeros((jobs, dim), np.uint8), np.empty((jobs, dim))  # the mask, its numbers
        self.pulls = np.empty((jobs, dim))  # the pairs' pull per coordinate
        self.rank_perm, self.rank_jumps = np.tile(np.arange(pop), (runs, 1)), np.empty((runs, pop), np.int64)
        self.pair_rows = np.empty((jobs, algorithm.np, 2), np.int64)
        self.pair_w = np.empty((jobs, algorithm.np), np.float64)
        self.scratch = (self.perm, self.jumps, self.words, self.masked, self.values, self.pulls, self.pair_rows,
                        self.pair_w)  # one argument: a job takes at most 28 (cpu_jobs.job)
        self._other: tuple[torch.Tensor, torch.Tensor] | None = None  # the buffers a select writes
        self._jobs: tuple | None = None  # (the values' dtype, the CompiledJobs), see `jobs`

    def _spare(self, s) -> APOState:
        """The other population buffers (never the state's own: prepare clones, we swap)."""
        other = self._other
        if other is None or other[0].shape != s.x.shape or other[0].data_ptr() == s.x.data_ptr():
            other = (torch.empty_like(s.x), torch.empty_like(s.f))
        return APOState(x=other[0], f=other[1], t=s.t)

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        other, v = self._spare(s), self.view
        f_in = self.values_in(s, f_in)
        args = (v(s.x), v(s.f), v(other.x), v(other.f), v(s.t), v(self.cand), self.order, self.renew, self.kinds,
                self.scratch, self.rank_perm, self.rank_jumps, self.lower, self.upper, *self.params, self.eps, f_in,
                self.fitness, self.fdata, steps, move, select, *self.common_args(best_x, hit, it, best_f, record))
        self.kernel(_steps)(*args, self.jobs(args))
        if select and steps % 2:  # an odd number of swaps: the newest population is in `other`
            self._other = (s.x, s.f)
            return other
        self._other = (other.x, other.f)
        return s

    def moved(self, s) -> torch.Tensor:
        return self.cand

    def jobs(self, args) -> tuple:
        """The CompiledJobs of `_steps`' parallel loops for these arguments (once per run set and
        dtype of the values a problem evaluated between calls hands in). The helpers' types are
        read off the arrays `_candidate` passes them a row or a run of."""
        (xa, fa, xb, fb, t, cand, order, renew, kinds, scratch, rank_perm, rank_jumps, lower, upper, pf_max, n_pairs,
         max_iters, eps, f_in, fid, fdata, *_) = args
        if self._jobs is None or self._jobs[0] != f_in.dtype:
            i64, f64, T = types.int64, types.float64, typeof
            x_row, words = T(cand[0, 0]), T(self.words[0, 0])  # (rows of C arrays: 1-d, C)
            helpers = (
                (_mask_words, (words, words, i64, i64, i64, i64)),
                (_dense, (x_row, T(xa[0]), x_row, x_row, T(self.perm[0]), i64, T(self.masked[0]), T(self.values[0]),
                          T(self.pulls[0]), T(self.pair_rows[0]), T(self.pair_w[0]), T(n_pairs), T(lower), T(upper),
                          i64, f64, f64, f64, f64)))
            block_books = (T(self.block_f), T(self.block_i), T(self.block_nan))
            selection = (_selections, (i64, i64, i64, i64, T(xa), T(fa), T(xa), T(fa), T(cand), T(order), T(f_in),
                                       T(fid), T(fdata), *block_books))
            candidates, dense, selections, ranks, mask_words = compiled_jobs(  # the longest first (see compiled_jobs)
                (_candidates, (
                    i64, i64, i64, types.boolean, types.boolean, f64, f64, T(xa), T(fa), T(cand), T(order), T(renew),
                    T(kinds), T(scratch), T(lower), T(upper), T(n_pairs), T(eps), i64,
                    types.Tuple([JobType(argtypes) for _, argtypes in helpers]),
                    types.Tuple([T(xa), T(fa), T(f_in), T(fid), T(fdata), *block_books]), JobType(selection[1]))),
                helpers[1],
                selection,
                (_ranks, (i64, i64, T(fa), T(order), T(renew), T(rank_perm), T(rank_jumps), T(pf_max), i64)),
                helpers[0])
            self._jobs = (f_in.dtype, (candidates, selections, ranks, (mask_words, dense)))
        return self._jobs[1]


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativeAPO
