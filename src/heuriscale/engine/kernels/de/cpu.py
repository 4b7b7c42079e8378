"""Differential Evolution's generations as one Numba kernel: the native fast path of the CPU engine.

The math is `algorithms/de.py`'s, which stays the reference (the tests compare the two with
the same random numbers, fed in through the test hooks). One generation:

1. (current-to-pbest/1) per run: the population's order by fitness, a stable sort (eager's
   argsort leaves exact ties in no fixed order), and each member's place in it;
2. per block of rows of one run (parallel): each member's trial vector, into `trial` (what
   `moved` hands to a problem evaluated between kernel calls): its indices, mutation (2) or
   current-to-pbest/1, binomial crossover (4), the repair; then, for the inline objectives,
   its value;
3. per block (parallel): NaN -> +inf counted; selection, strictly better replaces: the trial
   and the parent swap rows, so that `trial` then holds the parents that left (for the
   archive) and `x` the new population; the block's best new value;
4. per run (parallel over runs): the engine's bookkeeping, and the replaced parents into the
   archive (current-to-pbest/1).

The trials are all built before any selection writes (parts 2 and 3), as eager's generation
reads only the old population.

Each parallel loop's work is a job (`cpu_jobs.py`), compiled once for the serial and the
parallel build: with the same work as plain calls in the `prange` bodies, a cold parallel
build (1,000 x 100) compiled for 5.8 s, as jobs 3.6-4.0 s (`benchmarks/first_run.py --profile`'s
count, on the 2-core development machine).

Index draws take eager's arithmetic from uniforms (`distinct_others`, `below` and
`current_to_pbest` of algorithms/de.py), so the test hooks can hand the kernel eager's own
numbers. Random numbers otherwise: Philox 4x32-10 keyed by the run set's key, counters

- (row, 0, generation, INDEX) for row = run * pop + i: words a, b, c (32-bit uniforms read
  as float64: the three indices' draws) and e (jrand = e D >> 32);
- (row * quads + q, generation, CROSS): the crossover's U[0,1) of coordinates 4q..4q+3 of
  a row padded to 4 * quads; REPAIR likewise for the random repair's fresh coordinates;
- (s, run, generation, ARCHIVE): word a, the reservoir's slot for the archive's s-th
  candidate (its members first, then the newcomers).

The archive keeps a uniformly random subset of its members and the newcomers (the reservoir
sampling of Vitter's algorithm R), as eager's `archive_keep` does (there by sorting random
keys): the same distribution, another order of rows, so the hooks cannot make the two equal
once the archive overflows.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from .. import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit, prange, typeof, types

from ....algorithms.de import DE
from ..cpu_common import (BLOCK_ROWS, NativeIteration, as_written, copy_into, kernel, reduce_blocks, stable_order,
                          track_best)
from ..cpu_jobs import call_job, compiled_jobs, inner, job
from ..cpu_objectives import block_values
from ..cpu_random import UNIT32, row_words, uniform

INDEX, CROSS, REPAIR, ARCHIVE = 0, 1, 2, 3  # Philox streams


@njit(cache=True, inline="always")
def below(u, count):
    """Eager's `below`: an integer uniform in [0, count) from a float64 uniform u."""
    k = np.int64(math.floor(u * count))
    return min(k, max(count - 1, 0))


@njit(cache=True, inline="always")
def _skip(u, excluded):
    """u past each excluded index (ascending) it reaches: eager's `distinct_others` step."""
    for e in excluded:
        u += u >= e
    return u


@njit(cache=True, inline="always")
def distinct_three(i, n, u0, u1, u2):
    """Eager's `distinct_others(..., k=3)` for member i of n from three float64 uniforms."""
    r1 = _skip(np.int64(math.floor(u0 * (n - 1))), (i,))
    lo, hi = min(i, r1), max(i, r1)
    r2 = _skip(np.int64(math.floor(u1 * (n - 2))), (lo, hi))
    a, b, c = lo, hi, r2  # the three excluded, sorted
    if c < b:
        b, c = c, b
        if b < a:
            a, b = b, a
    r3 = _skip(np.int64(math.floor(u2 * (n - 3))), (a, b, c))
    return r1, r2, r3


@njit(cache=True, inline="always")
def pbest_places(rank_i, n, best, archive_n, avoid, u0, u1, u2):
    """Eager's `current_to_pbest` indices for the member at place rank_i of the order:
    (place of the p-best, place of r1, r2 as a place in the order below n or n + an archive
    row), from float64 uniforms u0, u1, u2. `avoid`: the p-best may not be the member."""
    avoid = avoid and rank_i < best
    k = below(u0, best - avoid)
    k += avoid and k >= rank_i
    r1 = below(u1, n - 1)
    r1 += r1 >= rank_i
    r2 = below(u2, n + archive_n - 2)
    r2 += r2 >= min(rank_i, r1)
    r2 += r2 >= max(rank_i, r1)
    return k, r1, r2


@inner
def draw_quads(u, key, first, quads, rows, dim, step, stream):
    """U[0,1) numbers for `rows` rows of dim coordinates (flat into u), one Philox call per
    four coordinates of a row padded to 4 * quads, counters first, first + 1, ... A loop of
    its own, so that it runs in SIMD lanes."""
    for q in range(rows * quads):
        a, b, c, e = row_words(key, first + q, 0, step, stream)
        u[4 * q], u[4 * q + 1], u[4 * q + 2], u[4 * q + 3] = uniform(a), uniform(b), uniform(c), uniform(e)
    if 4 * quads != dim:  # drop each row's padding (in order: no number is overwritten before it moves)
        for i in range(1, rows):
            for d in range(dim):
                u[i * dim + d] = u[i * 4 * quads + d]


@inner
def cross_and_repair(out, xi, v, cross, fresh, cr, jrand, lower, upper, random_repair):
    """Binomial crossover (4) of the target xi and mutant v into out, then the repair of
    coordinates outside the box: the midpoint of xi's and the bound crossed, or a fresh
    uniform point in the box (fresh: its U[0,1) numbers). In the run's dtype, as eager."""
    T = out.dtype.type
    half = T(2.0)
    for d in range(out.shape[0]):
        u = v[d] if (cross[d] <= cr or d == jrand) else xi[d]
        if random_repair:
            if u < lower[d] or u > upper[d]:
                u = lower[d] + fresh[d] * (upper[d] - lower[d])
        else:
            if u < lower[d]:
                u = (lower[d] + xi[d]) / half
            if u > upper[d]:
                u = (upper[d] + xi[d]) / half
        out[d] = u


@inner
def reservoir(archive, archive_n, run, capacity, parents, joined, key, step):
    """The archive of `run` after the rows of `parents` where `joined` enter it: a uniformly
    random subset of its members and the newcomers, at most `capacity`, first (Vitter's
    algorithm R over the members, then the newcomers). Returns its new size."""
    seen = 0
    dim = archive.shape[2]
    for s in range(archive_n):  # members beyond a (smaller) capacity: kept at random
        if s >= capacity:
            slot = np.int64((np.uint64(row_words(key, s, run, step, ARCHIVE)[0]) * np.uint64(s + 1)) >> np.uint64(32))
            if slot < capacity:
                copy_into(archive[run, slot], archive[run, s])
        seen += 1
    for p in range(joined.shape[0]):
        if joined[p]:
            if seen < capacity:
                slot = seen
            else:
                slot = np.int64((np.uint64(row_words(key, seen, run, step, ARCHIVE)[0]) * np.uint64(seen + 1))
                                >> np.uint64(32))
            if slot < capacity:
                copy_into(archive[run, slot], parents[p * dim:(p + 1) * dim])
            seen += 1
    return min(seen, capacity)


@njit(cache=True, inline="always")
def _trials(x, trial, trial_f, f, order, rank, archive, archive_n, run, p0, rows, F, CR, best, random_repair,
            lower, upper, given_index, given_cross, given_fresh, key, step, quads, fid, fdata, select, cross, fresh,
            mutant, vals):
    """Part 2 for rows p0..p0 + rows of `run`: their trials, and for the inline objectives
    (select) their values into trial_f. `order` None: rand/1 (its branch is then the only one
    compiled), else current-to-pbest/1."""
    pop, dim = f.shape[1], lower.shape[0]
    T = x.dtype.type
    Ft = T(F)
    n_cross = rows * dim
    if given_index.shape[0]:  # the test hook: eager's own numbers
        copy_into(cross[:n_cross], given_cross[run, p0 * dim:(p0 + rows) * dim])
        if random_repair:
            copy_into(fresh[:n_cross], given_fresh[run, p0 * dim:(p0 + rows) * dim])
    else:
        first = (run * pop + p0) * quads
        draw_quads(cross, key, first, quads, rows, dim, step, np.int64(CROSS))  # (int64: one build serves both)
        if random_repair:
            draw_quads(fresh, key, first, quads, rows, dim, step, np.int64(REPAIR))
    for i in range(p0, p0 + rows):
        if given_index.shape[0]:
            u0, u1, u2, jrand = given_index[run, i, 0], given_index[run, i, 1], given_index[run, i, 2], \
                np.int64(given_index[run, i, 3])
        else:
            a, b, c, e = row_words(key, run * pop + i, 0, step, np.int64(INDEX))
            u0, u1, u2 = np.float64(a) * UNIT32, np.float64(b) * UNIT32, np.float64(c) * UNIT32
            jrand = np.int64((np.uint64(e) * np.uint64(dim)) >> np.uint64(32))
        xi = x[run, i * dim:(i + 1) * dim]
        if order is not None:
            k, r1, r2 = pbest_places(rank[run, i], pop, best, archive_n[run], False, u0, u1, u2)
            xp = x[run, order[run, k] * dim:(order[run, k] + 1) * dim]
            x1 = x[run, order[run, r1] * dim:(order[run, r1] + 1) * dim]
            x2 = x[run, order[run, r2] * dim:(order[run, r2] + 1) * dim] if r2 < pop else archive[run, r2 - pop]
            for d in range(dim):  # v_i = x_i + F (x_pbest - x_i) + F (x_r1 - x~_r2), eager's order of operations
                mutant[d] = (xi[d] + Ft * (xp[d] - xi[d])) + Ft * (x1[d] - x2[d])
        else:
            r1, r2, r3 = distinct_three(i, pop, u0, u1, u2)
            a1, a2 = x[run, r1 * dim:(r1 + 1) * dim], x[run, r2 * dim:(r2 + 1) * dim]
            a3 = x[run, r3 * dim:(r3 + 1) * dim]
            for d in range(dim):  # (2)
                mutant[d] = a1[d] + Ft * (a2[d] - a3[d])
        e0 = (i - p0) * dim
        cross_and_repair(trial[run, i * dim:(i + 1) * dim], xi, mutant, cross[e0:e0 + dim], fresh[e0:e0 + dim], T(CR),
                         jrand, lower, upper, random_repair)
    if fid and select:
        block_values(fid, fdata, trial[run, p0 * dim:(p0 + rows) * dim], dim, trial_f[run], p0, vals)
        for i in range(rows):
            trial_f[run, p0 + i] = vals[i]


# -- the parallel loops' work, job by job: compiled once for both builds (see cpu_jobs.py) -------
@job
def _trials_job(grp, x, trial, trial_f, f, order, rank, archive, archive_n, lower, upper, given_index, given_cross,
                given_fresh, fdata, scratch, values, coef, key, step, quads, fid, select):
    """Part 2 for group `grp` of blocks (each group has its scratch). coef: (F, CR, p-best pool, random repair?)."""
    F, CR, best, random_repair = coef
    runs, pop = f.shape
    blocks = (pop + BLOCK_ROWS - 1) // BLOCK_ROWS
    jobs, groups = runs * blocks, values.shape[0]
    for j in range(grp * jobs // groups, (grp + 1) * jobs // groups):
        run, b = j // blocks, j % blocks
        p0 = b * BLOCK_ROWS
        _trials(x, trial, trial_f, f, order, rank, archive, archive_n, run, p0, min(pop, p0 + BLOCK_ROWS) - p0, F, CR,
                best, random_repair, lower, upper, given_index, given_cross, given_fresh, key, step, quads, fid, fdata,
                select, scratch[grp, 0], scratch[grp, 1], scratch[grp, 2], values[grp])


@job
def _select(job, x, trial, f, trial_f, f_in, fid, better, block_f, block_i, block_nan):
    """Part 3 for the rows of block `job` (run job // blocks): their values (NaN -> +inf,
    counted), strictly better trials swapped in, the block's best new value and its row."""
    pop, blocks = f.shape[1], block_f.shape[1]
    dim = x.shape[1] // pop
    run, b = job // blocks, job % blocks
    p0 = b * BLOCK_ROWS
    best, best_i, nans = np.inf, p0, 0
    for p in range(p0, min(pop, p0 + BLOCK_ROWS)):
        value = trial_f[run, p] if fid else np.float64(f_in[run * pop + p])
        if value != value:
            value, nans = np.inf, nans + 1
        fu = f.dtype.type(value)  # compared in the run's dtype, as eager does
        if fu < best:
            best, best_i = fu, p
        replace = fu < f[run, p]
        better[run, p] = replace
        if replace:
            f[run, p] = fu
            for e in range(p * dim, (p + 1) * dim):
                x[run, e], trial[run, e] = trial[run, e], x[run, e]
    block_f[run, b], block_i[run, b], block_nan[run, b] = best, best_i, nans


@job
def _close(run, k, x, trial, better, archive, archive_n, order, key, step, books):
    """Part 4 for `run`: the engine's bookkeeping (`books`: best_x ... nan_evals, as
    `common_args` gives them); the replaced parents into the archive (current-to-pbest/1)."""
    best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals = books
    dim = best_x.shape[1]
    m, i = reduce_blocks(block_f, block_i, run)
    for b in range(block_nan.shape[1]):
        nan_evals[run] += block_nan[run, b]
    rows = x[run] if better[run, i] else trial[run]  # the best trial, where it is now
    track_best(run, m, rows[i * dim:(i + 1) * dim], best_x, best_f, hit, it, target, has_target, record, k)
    if order is not None:
        archive_n[run] = reservoir(archive, archive_n[run], run, archive.shape[1], trial[run], better[run], key, step)


@job
def _ordering(run, f, order, rank, spare):
    """Part 1 for `run` (current-to-pbest/1): the order by fitness, each member's place in it."""
    stable_order(f[run], order[run], spare[run])
    for j in range(f.shape[1]):
        rank[run, order[run, j]] = j


@kernel
def _generations(x, f, archive, archive_n, trial, trial_f, better, order, rank, spare, lower, upper, coef,
                 given_index, given_cross, given_fresh, f_in, fid, fdata, quads, scratch, values, steps, move, select,
                 best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals, counter,
                 key, jobs):
    """`steps` generations. `jobs`: the parallel loops' CompiledJobs (NativeDE.jobs); `order`
    None: rand/1 (the ordering is then not compiled)."""
    runs, pop = f.shape
    blocks = block_f.shape[1]
    trials, selection, closing = jobs[0], jobs[1], jobs[2]
    books = (best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals)
    for k in range(steps):
        step = counter[0]
        if move:
            if order is not None:  # (1) current-to-pbest/1: the order by fitness
                for run in prange(runs):
                    call_job(jobs[3], np.int64(run), f, order, rank, spare)
            for grp in prange(values.shape[0]):  # (2) the trials, groups of blocks each with its scratch
                call_job(trials, np.int64(grp), x, trial, trial_f, f, order, rank, archive, archive_n, lower, upper,
                         given_index, given_cross, given_fresh, fdata, scratch, values, coef, key, step, quads, fid,
                         select)
            it[0] += 1
        if not select:
            continue
        for job in prange(runs * blocks):  # (3) selection
            call_job(selection, np.int64(job), x, trial, f, trial_f, f_in, fid, better, block_f, block_i, block_nan)
        for run in prange(runs):  # (4) the engine's bookkeeping; the archive
            call_job(closing, np.int64(run), np.int64(k), x, trial, better, archive, archive_n, order, key, step, books)
        counter[0] += 1


def unsupported(algorithm) -> str | None:
    """The kernel follows de.py exactly: a subclass that changes its step has none."""
    return as_written(algorithm, (DE,), "DE")


class NativeDE(NativeIteration):
    """`DE`'s generations on the CPU, in place on the state's buffers (trials in their own)."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        super().__init__(problem, runs, algorithm.pop_size, target, seed)
        pop, dim, dtype = self.pop, self.dim, problem.lower.dtype
        self.pbest = algorithm.strategy == "current-to-pbest/1"
        best = max(1, math.floor(algorithm.p * pop + 0.5))  # eager's p-best pool (C's round)
        # (F, CR, p-best pool, random repair?): one tuple, as the jobs take at most 28 arguments
        self.coef = (float(algorithm.F), float(algorithm.CR), best, algorithm.repair == "random")
        self.quads = (dim + 3) // 4
        self.trial = torch.empty(runs, pop, dim, dtype=dtype)
        self.trial_f = np.empty((runs, pop))
        self.better = np.zeros((runs, pop), np.bool_)
        self.order, self.rank, self.sort_spare = (np.zeros((runs, pop), np.int64) for _ in range(3))
        # Test hooks: eager's numbers, (runs, pop, 4) float64 (the indices' three uniforms and
        # jrand), (runs, pop, dim) the crossover's and the random repair's uniforms.
        self.given_index: torch.Tensor | None = None
        self.given_cross: torch.Tensor | None = None
        self.given_fresh: torch.Tensor | None = None
        self._jobs: tuple | None = None  # (what their types depend on, the CompiledJobs), see `jobs`
        self.no_index = np.empty((0, 0, 0))
        self.no_rows = np.empty((0, 0), self.block_f.dtype)

    def moved(self, s) -> torch.Tensor:
        return self.trial

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        v, flat = self.view, (self.runs, self.pop * self.dim)
        hooked = self.given_index is not None
        given = (v(self.given_index), v(self.given_cross.contiguous(), flat),
                 v((self.given_fresh if self.given_fresh is not None else self.given_cross).contiguous(), flat)) \
            if hooked else (self.no_index, self.no_rows, self.no_rows)
        width = BLOCK_ROWS * 4 * self.quads  # quads = ceil(dim / 4): a row's draws, padded
        args = (v(s.x, flat), v(s.f), v(s.archive), v(s.archive_n), v(self.trial, flat), self.trial_f, self.better,
                *((self.order, self.rank, self.sort_spare) if self.pbest else (None, None, None)), self.lower,
                self.upper, self.coef, *given, self.values_in(s, f_in), self.fitness, self.fdata, self.quads,
                *self.group_scratch(width, self.block_f.dtype), steps, move, select,
                *self.common_args(best_x, hit, it, best_f, record))
        self.kernel(_generations)(*args, self.jobs(args))
        return s

    def jobs(self, args) -> tuple:
        """The CompiledJobs of `_generations`' parallel loops for these arguments' types
        (compiled, or loaded from the disk cache, once per run set and kind of launch)."""
        (x, f, archive, archive_n, trial, trial_f, better, order, rank, spare, lower, upper, coef, given_index,
         given_cross, given_fresh, f_in, fid, fdata, quads, scratch, values, steps, move, select, best_x, best_f, hit,
         it, target, has_target, record, block_f, block_i, block_nan, nan_evals, counter, key) = args
        depends = (f_in.dtype, f_in.ndim, record.ndim, record.flags.c_contiguous)
        if self._jobs is None or self._jobs[0] != depends:
            t, i64 = typeof, types.int64
            x_t, f_t, ints = t(x), t(f), t(archive_n)
            books = t((best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals))
            specs = [
                (_trials_job, (i64, x_t, x_t, t(trial_f), f_t, t(order), t(rank), t(archive), ints, t(lower),
                               t(upper), t(given_index), t(given_cross), t(given_fresh), t(fdata),
                               t(scratch), t(values), t(coef), i64, i64, i64, i64, types.boolean)),
                (_select, (i64, x_t, x_t, f_t, t(trial_f), t(f_in), i64, t(better), t(block_f), t(block_i),
                           t(block_nan))),
                (_close, (i64, i64, x_t, x_t, t(better), t(archive), ints, t(order), i64, i64, books))]
            if order is not None:
                specs.append((_ordering, (i64, f_t, t(order), t(rank), t(spare))))
            self._jobs = (depends, compiled_jobs(*specs))
        return self._jobs[1]


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativeDE
