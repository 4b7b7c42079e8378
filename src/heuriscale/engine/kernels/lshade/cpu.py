"""L-SHADE's and jSO's generations as one Numba kernel: the native fast path of the CPU engine.

The math is `algorithms/lshade.py`'s (jSO's changes, `algorithms/jso.py`, are flags here),
which stays the reference (the tests compare the two with eager's random numbers fed in
through the test hooks). The population is kept as eager keeps it: sorted by fitness, the
first N_G rows alive. One generation:

1. per block of alive rows of one run (parallel): each individual's memory slot, CR_i and
   F_i (Cauchy draws again while <= 0, up to 16 times), jSO's adjustments, its indices
   (DE's `pbest_places`, on the sorted population), current-to-pbest(-w)/1, binomial
   crossover, the midpoint repair, into `trial` (alive rows only: `moved` hands a problem
   evaluated between kernel calls the first N_G rows); the inline objective's values;
2. per block, in the same pass as part 1 (it reads only the block's own trials and writes
   neither x nor f): NaN -> +inf counted; replacement where f(u) <= f(x), success where
   f(u) < f(x), the block's sums of the successes' weights |Δf| times F, F², CR, CR²;
3. per run (parallel over runs): the engine's bookkeeping; slot k of the memory from the
   weighted Lehmer means (in float64: the weights' normalisation cancels); N_{G+1}; the
   new order (a stable sort: eager's argsort leaves exact ties in no fixed order); the
   successful parents into the archive (DE's reservoir: a uniformly random subset, as
   eager's `archive_keep`, in another order of rows);
4. per block of all rows (parallel): the new population, sorted, into the other of two
   population buffers (the parents are read while it is written); `_launch` returns the
   state that holds it (its other fields are shared by both).

Each parallel loop's work is a job (`cpu_jobs.py`), compiled once for the serial and the
parallel build: with the same work as plain calls in the `prange` bodies, a cold parallel
build compiled for 10.2 s, as jobs 6.2 s (`benchmarks/first_run.py --profile`'s count, the
issue's default L-SHADE run, on the 2-core development machine).

Random numbers, Philox keyed by the run set's key, for row = run * N_init + i: DE's INDEX and
CROSS streams (indices, jrand, crossover), and (row, 0, generation, PARAM) words a (the slot,
a H >> 32), b, c (CR's normal, Box-Muller) and e (F's first Cauchy draw); F's draws again
from (row, j, generation, PARAM + 1), four per counter.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from .. import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit, prange, typeof, types

from ....algorithms.jso import JSO
from ....algorithms.lshade import LSHADE
from ..cpu_common import (BLOCK_ROWS, NativeIteration, as_written, copy_into, kernel, reduce_blocks, stable_order,
                          track_best)
from ..cpu_jobs import JobType, call_job, compiled_jobs, inner, job
from ..cpu_objectives import block_values
from ..cpu_random import UNIT32, row_words, uniform
from ..de.cpu import CROSS, INDEX, cross_and_repair, draw_quads, pbest_places, reservoir

PARAM = 4  # Philox streams PARAM (slot, CR's normal, F's first draw) and PARAM + 1 (F's draws again)
REDRAWS = 16  # eager's: F drawn again up to 16 times while <= 0
SUMS = 5  # per block: Σ δ F, Σ δ F², Σ δ CR, Σ δ CR², successes (Σ δ cancels in the weighted Lehmer means)


@njit(cache=True, inline="always")
def _cauchy(loc, u):
    """randc(loc, 0.1) from a U[0,1) number, in loc's dtype as eager computes it."""
    T = type(loc)
    return loc + T(0.1) * T(math.tan(T(math.pi) * (T(u) - T(0.5))))


@inner
def _parameters(m_f, m_cr, H, jso, progress, row, given, key, step, tiny):
    """Member `row`'s F_i, CR_i and the F of its p-best term (jSO's F_w), in the memory's dtype."""
    T = m_f.dtype.type
    if given.shape[0]:  # the test hook: eager's slot, normal and F's uniforms
        slot, normal, u = np.int64(given[0]), given[1], given[2]
    else:
        a, b, c, e = row_words(key, row, 0, step, np.int64(PARAM))
        slot = np.int64((np.uint64(a) * np.uint64(H)) >> np.uint64(32))
        u1, u2 = np.float64(b) * UNIT32, np.float64(c) * UNIT32  # Box-Muller
        normal = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
        u = uniform(e)
    mf, mcr = m_f[slot], m_cr[slot]
    if jso and slot == H - 1:  # jSO: the last slot always gives 0.9
        mf, mcr = T(0.9), T(0.9)
    CR = T(0.0) if mcr < 0 else min(max(mcr + T(0.1) * T(normal), T(0.0)), T(1.0))
    F = _cauchy(mf, u)
    t = 0
    while F <= 0 and t < REDRAWS:
        t += 1
        if given.shape[0]:
            u = given[2 + t]
        else:
            u = uniform(row_words(key, row, (t - 1) // 4, step, np.int64(PARAM + 1))[(t - 1) % 4])
        F = _cauchy(mf, u)
    if F <= 0:
        F = tiny  # the dtype's smallest positive normal
    F = min(F, T(1.0))
    Fw = F
    if jso:  # CR and F capped over the run; current-to-pbest-w/1's weight
        p = T(progress)
        if p < T(0.25):
            CR = max(CR, T(0.7))
        if p < T(0.5):
            CR = max(CR, T(0.6))
        if p < T(0.6):
            F = min(F, T(0.7))
        Fw = F * (T(0.7) if p < T(0.2) else T(0.8) if p < T(0.4) else T(1.2))
    return F, CR, Fw


@job
def _block_parameters(run, p0, rows, m_f, m_cr, Fs, CRs, fws, given_params, nfe, settings, key, step, limits):
    """F_i and CR_i (into Fs, CRs) and F_w (into fws[i - p0]) of rows p0..p0 + rows of `run`."""
    H, max_evals, jso = settings[0], settings[2], settings[6]
    progress = nfe[run] / max_evals  # float64, as the C code
    pop = Fs.shape[1]
    hooked = given_params.shape[2] > 0
    for i in range(p0, p0 + rows):
        params = given_params[run, i] if hooked else given_params[0, 0]  # (the placeholder's: empty)
        F, CR, Fw = _parameters(m_f[run], m_cr[run], H, jso, progress, run * pop + i, params, key, step, limits[0])
        Fs[run, i], CRs[run, i], fws[i - p0] = F, CR, Fw


@njit(cache=True, inline="always")
def _trials(x, trial, trial_f, Fs, CRs, archive, archive_n, m_f, m_cr, nfe, n, run, p0, rows, settings, box, hooks,
            key, step, quads, fid, fdata, select, rows_scratch, vals, limits, helpers):
    """Part 1 for alive rows p0..p0 + rows of `run` (box, hooks: see `_blocks`; rows_scratch:
    the group's rows for the crossover's numbers, the mutant and F_w). `helpers`: the
    CompiledJobs of `_block_parameters` and `draw_quads`, jobs of their own so that on a new
    machine they compile in processes of their own, not inside this one's job (one call each
    per block)."""
    lower, upper = box
    given_index, given_params, given_cross = hooks
    cross, mutant, fws = rows_scratch
    parameters, draw = helpers[0], helpers[1]
    T = m_f.dtype.type
    p, max_evals, jso = settings[1], settings[2], settings[6]
    pop = Fs.shape[1]
    dim = lower.shape[0]
    alive = n[run]
    progress = nfe[run] / max_evals  # float64, as the C code
    rate = p * (1.0 - 0.5 * progress) if jso else p
    best = max(2, np.int64(math.floor(rate * np.float64(alive) + 0.5)))  # the p-best pool (C's round)
    avoid = jso and progress < 0.5  # iL-SHADE, jSO: not the target itself
    hooked = given_index.shape[0] > 0
    if hooked:
        copy_into(cross[:rows * dim], given_cross[run, p0 * dim:(p0 + rows) * dim])
    else:
        call_job(draw, cross, key, np.int64((run * pop + p0) * quads), np.int64(quads), np.int64(rows), np.int64(dim),
                 step, np.int64(CROSS))
    call_job(parameters, np.int64(run), np.int64(p0), np.int64(rows), m_f, m_cr, Fs, CRs, fws, given_params, nfe,
             settings, key, step, limits)
    for i in range(p0, p0 + rows):
        row = run * pop + i
        F, CR, Fw = T(Fs[run, i]), T(CRs[run, i]), T(fws[i - p0])  # (stored in a dtype that holds them exactly)
        if hooked:
            u0, u1, u2 = given_index[run, i, 0], given_index[run, i, 1], given_index[run, i, 2]
            jrand = np.int64(given_index[run, i, 3])
        else:
            a, b, c, e = row_words(key, row, 0, step, np.int64(INDEX))
            u0, u1, u2 = np.float64(a) * UNIT32, np.float64(b) * UNIT32, np.float64(c) * UNIT32
            jrand = np.int64((np.uint64(e) * np.uint64(dim)) >> np.uint64(32))
        k, r1, r2 = pbest_places(i, alive, best, archive_n[run], avoid, u0, u1, u2)  # sorted: places are rows
        xi = x[run, i * dim:(i + 1) * dim]
        xp, x1 = x[run, k * dim:(k + 1) * dim], x[run, r1 * dim:(r1 + 1) * dim]
        x2 = x[run, r2 * dim:(r2 + 1) * dim] if r2 < alive else archive[run, r2 - alive]
        for d in range(dim):  # v_i = x_i + F_w (x_pbest - x_i) + F (x_r1 - x~_r2), eager's order of operations
            mutant[d] = (xi[d] + Fw * (xp[d] - xi[d])) + F * (x1[d] - x2[d])
        e0 = (i - p0) * dim
        cross_and_repair(trial[run, i * dim:(i + 1) * dim], xi, mutant, cross[e0:e0 + dim], cross[e0:e0 + dim], CR,
                         jrand, lower, upper, False)
    if fid and select:
        block_values(fid, fdata, trial[run, p0 * dim:(p0 + rows) * dim], dim, trial_f[run], p0, vals)
        for i in range(rows):
            trial_f[run, p0 + i] = vals[i]


# -- a block's selection, a job that its block's job calls -------------------------------------
@job
def _select(f, trial_f, f_in, fid, Fs, CRs, new_f, replaced, success, n, block_f, block_i, block_nan, sums, limits,
            run, b):
    """Part 2 for the alive rows of block b of `run` (it writes neither x nor f: the new
    population goes into the other buffers in part 4)."""
    pop = f.shape[1]
    T = f.dtype.type
    alive = n[run]
    p0 = b * BLOCK_ROWS
    best, best_i, nans = np.inf, p0, 0
    s1, s2, s3, s4, s5 = 0.0, 0.0, 0.0, 0.0, 0.0
    cap = limits[1] / T(pop)  # eager's: a first finite value after inf keeps the weights finite
    for p in range(p0, min(alive, p0 + BLOCK_ROWS)):
        value = trial_f[run, p] if fid else np.float64(f_in[run * alive + p])
        if value != value:
            value, nans = np.inf, nans + 1
        fu = T(value)
        if fu < best:
            best, best_i = fu, p
        replaced[run, p] = fu <= f[run, p]
        success[run, p] = fu < f[run, p]
        new_f[run, p] = fu if fu <= f[run, p] else f[run, p]
        if fu < f[run, p]:
            delta = np.float64(min(abs(f[run, p] - fu), cap))
            F, CR = np.float64(Fs[run, p]), np.float64(CRs[run, p])
            s1, s2, s3, s4, s5 = s1 + delta * F, s2 + delta * F * F, s3 + delta * CR, s4 + delta * CR * CR, s5 + 1.0
    block_f[run, b], block_i[run, b], block_nan[run, b] = best, best_i, nans
    sums[run, b, 0], sums[run, b, 1], sums[run, b, 2], sums[run, b, 3], sums[run, b, 4] = s1, s2, s3, s4, s5


# -- the parallel loops' work, job by job: compiled once for both builds (see cpu_jobs.py) -------
@job
def _blocks(grp, x, f, trial, trial_f, Fs, CRs, archive, archive_n, m_f, m_cr, nfe, n, box, hooks, fdata, scratch,
            values, limits, settings, key, step, quads, fid, move, select, selecting, helpers):
    """Parts 1 (move) and 2 (select) for group `grp` of blocks (each group has its scratch),
    block by block: part 2 reads only the block's own trials. box: (lower, upper); hooks:
    (given_index, given_params, given_cross); selecting: (f_in, new_f, replaced, success,
    sums, block_f, block_i, block_nan); helpers: `_trials`' two and `_select`."""
    f_in, new_f, replaced, success, sums, block_f, block_i, block_nan = selecting
    selection = helpers[2]
    runs, pop = Fs.shape
    blocks = block_f.shape[1]
    jobs, groups = runs * blocks, values.shape[0]
    for j in range(grp * jobs // groups, (grp + 1) * jobs // groups):
        run, b = j // blocks, j % blocks
        p0 = b * BLOCK_ROWS
        rows = min(n[run], p0 + BLOCK_ROWS) - p0
        if move and rows > 0:
            _trials(x, trial, trial_f, Fs, CRs, archive, archive_n, m_f, m_cr, nfe, n, run, p0, rows, settings, box,
                    hooks, key, step, quads, fid, fdata, select, (scratch[grp, 0], scratch[grp, 1], scratch[grp, 2]),
                    values[grp], limits, helpers)
        if select:
            call_job(selection, f, trial_f, f_in, fid, Fs, CRs, new_f, replaced, success, n, block_f, block_i,
                     block_nan, sums, limits, run, b)


@job
def _close(run, k, x, trial, new_f, success, m_f, m_cr, slot, nfe, n, prev_n, archive, archive_n, order, spare,
           sort_key, sums, settings, key, step, books, archiving):
    """Part 3 for `run`: bookkeeping, memory, population size, order, archive. `books`: the
    engine's bookkeeping arrays (best_x ... nan_evals, as `common_args` gives them);
    `archiving`: `_archive`'s CompiledJob."""
    H, max_evals, pop_size, final_pop, arc_rate, jso = settings[0], settings[2], settings[3], settings[4], \
        settings[5], settings[6]
    best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals = books
    pop = new_f.shape[1]
    dim = best_x.shape[1]
    T = m_f.dtype.type
    alive = n[run]
    m, i = reduce_blocks(block_f, block_i, run)
    df, df2, dcr, dcr2, successes = 0.0, 0.0, 0.0, 0.0, 0.0  # the blocks' sums (SUMS), in block order
    for b in range(block_nan.shape[1]):
        nan_evals[run] += block_nan[run, b]
        df, df2, dcr, dcr2 = df + sums[run, b, 0], df2 + sums[run, b, 1], dcr + sums[run, b, 2], dcr2 + sums[run, b, 3]
        successes += sums[run, b, 4]
    track_best(run, m, trial[run, i * dim:(i + 1) * dim], best_x, best_f, hit, it, target, has_target, record, k)
    if successes > 0:  # some success: slot k from the weighted Lehmer means
        s = slot[run]
        mean_f = T(df2 / df) if df > 0 else T(0.0)
        mean_cr = T(dcr2 / dcr) if dcr > 0 else T(0.0)
        old_f, old_cr = m_f[run, s], m_cr[run, s]
        if dcr <= 0 or (not jso and old_cr == T(-1.0)):  # ⊥ (L-SHADE: it stays)
            mean_cr = T(-1.0)
        m_f[run, s] = (mean_f + old_f) / T(2.0) if jso else mean_f
        m_cr[run, s] = (mean_cr + old_cr) / T(2.0) if jso else mean_cr
        slot[run] = (s + 1) % H
    used = nfe[run] + alive
    slope = (final_pop - pop_size) / max_evals
    nfe[run] = used
    n[run] = min(max(final_pop, np.int64(math.floor(slope * np.float64(used) + pop_size + 0.5))), alive)
    prev_n[run] = alive
    for p in range(pop):  # the worst beyond N_{G+1} leave: the new order (rows that left already: last)
        sort_key[run, p] = new_f[run, p] if p < alive else np.inf
    stable_order(sort_key[run], order[run], spare[run])
    capacity = min(np.int64(arc_rate * np.float64(n[run])), archive.shape[1])  # the code's (int) truncation
    call_job(archiving, run, capacity, alive, archive, archive_n, x, success, key, step)


@job
def _archive(run, capacity, alive, archive, archive_n, x, success, key, step):
    """The archive of `run` after a generation (a job of its own, called by `_close`: on a new
    machine it compiles in a process of its own)."""
    dim = x.shape[1] // success.shape[1]
    archive_n[run] = reservoir(archive, archive_n[run], run, capacity, x[run, :alive * dim], success[run, :alive], key,
                               step)


@job
def _gather(job, x, trial, new_f, replaced, order, n, prev_n, ox, of):
    """Part 4 for the rows of block `job` (run job // blocks): the sorted new population into ox, of."""
    pop = new_f.shape[1]
    dim = x.shape[1] // pop
    blocks = (pop + BLOCK_ROWS - 1) // BLOCK_ROWS
    run, b = job // blocks, job % blocks
    for j in range(b * BLOCK_ROWS, min(pop, (b + 1) * BLOCK_ROWS)):
        o = order[run, j]
        src = trial[run] if (o < prev_n[run] and replaced[run, o]) else x[run]
        copy_into(ox[run, j * dim:(j + 1) * dim], src[o * dim:(o + 1) * dim])
        of[run, j] = new_f[run, o] if j < n[run] else np.inf


@kernel
def _generations(xa, fa, xb, fb, archive, archive_n, m_cr, m_f, slot, nfe, n, prev_n, trial, trial_f, Fs, CRs, new_f,
                 replaced, success, sums, order, spare, sort_key, lower, upper, settings, limits, given_index,
                 given_params, given_cross, f_in, fid, fdata, quads, scratch, values, steps, move, select, best_x,
                 best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals, counter, key,
                 jobs):
    """`steps` generations; the population is in buffers a, or in b after an odd number of
    selections. `jobs`: the three parallel loops' CompiledJobs (NativeSHADE.jobs). Returns the
    number of selections."""
    runs, pop = fa.shape
    blocks = block_f.shape[1]
    parts, closing, gathering, helpers, archiving = jobs
    box = (lower, upper)
    books = (best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals)
    hooks = (given_index, given_params, given_cross)
    selecting = (f_in, new_f, replaced, success, sums, block_f, block_i, block_nan)
    flips = 0
    for k in range(steps):
        step = counter[0]
        x, f, ox, of = (xa, fa, xb, fb) if flips % 2 == 0 else (xb, fb, xa, fa)
        for grp in prange(values.shape[0]):  # (1) the trials of alive rows, (2) their replacement, by groups of blocks
            call_job(parts, np.int64(grp), x, f, trial, trial_f, Fs, CRs, archive, archive_n, m_f, m_cr, nfe, n, box,
                     hooks, fdata, scratch, values, limits, settings, key, step, quads, fid, move, select, selecting,
                     helpers)
        if move:
            it[0] += 1
        if not select:
            continue
        for run in prange(runs):  # (3) bookkeeping, memory, population size, order, archive
            call_job(closing, np.int64(run), np.int64(k), x, trial, new_f, success, m_f, m_cr, slot, nfe, n, prev_n,
                     archive, archive_n, order, spare, sort_key, sums, settings, key, step, books, archiving)
        for job in prange(runs * blocks):  # (4) the sorted population into the other buffers
            call_job(gathering, np.int64(job), x, trial, new_f, replaced, order, n, prev_n, ox, of)
        counter[0] += 1
        flips += 1
    return flips


def unsupported(algorithm) -> str | None:
    """The kernel follows lshade.py and jso.py exactly: a subclass that changes their hooks has none."""
    return as_written(algorithm, (LSHADE, JSO), "L-SHADE and jSO")


class NativeSHADE(NativeIteration):
    """`LSHADE`'s and `JSO`'s generations on the CPU; the population alternates between two buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        if algorithm.max_evals is None:
            raise ValueError(f"{algorithm.name}: the native kernel needs max_evals (its population schedule)")
        super().__init__(problem, runs, algorithm.pop_size, target, seed)
        pop, dim, dtype = self.pop, self.dim, problem.lower.dtype
        ftype = self.block_f.dtype
        self.jso = type(algorithm) is JSO
        # (H, p, MAX_NFE, N_init, N_min, r_arc, jSO?): one tuple, as the jobs take at most 28 arguments
        self.settings = (int(algorithm.H), float(algorithm.p), float(algorithm.max_evals), int(algorithm.pop_size),
                         int(algorithm.final_pop), float(algorithm.arc_rate), self.jso)
        self.quads = (dim + 3) // 4
        self.trial = torch.empty(runs, pop, dim, dtype=dtype)
        self.trial_f = np.empty((runs, pop))
        self.Fs, self.CRs, self.new_f, self.sort_key = (np.zeros((runs, pop), ftype) for _ in range(4))
        self.replaced, self.success = np.zeros((runs, pop), np.bool_), np.zeros((runs, pop), np.bool_)
        self.sums = np.zeros((runs, self.blocks, SUMS))
        self.order, self.sort_spare = np.zeros((runs, pop), np.int64), np.zeros((runs, pop), np.int64)
        self.prev_n = np.zeros(runs, np.int64)
        # Test hooks: eager's numbers, (runs, pop, 4) float64 (the indices' uniforms and jrand),
        # (runs, pop, 3 + REDRAWS) float64 (slot, CR's normal, F's uniforms), (runs, pop, dim) the crossover's.
        self.given_index: torch.Tensor | None = None
        self.given_params: torch.Tensor | None = None
        self.given_cross: torch.Tensor | None = None
        self._jobs: tuple | None = None  # (what their types depend on, the CompiledJobs), see `jobs`
        self.no_index = np.empty((0, 0, 0))
        self.no_params = np.empty((1, 1, 0))
        info = np.finfo(ftype)
        self.limits = np.array([info.tiny, info.max], ftype)  # F's floor; the weights' cap is max / N_init
        self.no_rows = np.empty((0, 0), ftype)

    def moved(self, s) -> torch.Tensor:
        return self.trial[:, :int(s.n[0])]  # the alive rows (the same number in every run)

    def other_buffers(self, s):
        """s with the other population buffers (the previous population's, kept in `spare`,
        unless they are s's); every other field is s's own, which the kernel updates in place."""
        out = self.spare
        if out is None or out.x.data_ptr() == s.x.data_ptr() or out.x.shape != s.x.shape:
            return s.replace(x=torch.empty_like(s.x), f=torch.empty_like(s.f))
        return s.replace(x=out.x, f=out.f)

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        out = self.other_buffers(s)
        v, flat = self.view, (self.runs, self.pop * self.dim)
        if self.given_index is not None:
            given = (v(self.given_index), v(self.given_params), v(self.given_cross.contiguous(), flat))
        else:
            given = (self.no_index, self.no_params, self.no_rows)
        width = BLOCK_ROWS * 4 * self.quads  # quads = ceil(dim / 4): a row's draws, padded
        args = (v(s.x, flat), v(s.f), v(out.x, flat), v(out.f), v(s.archive), v(s.archive_n), v(s.m_cr), v(s.m_f),
                v(s.k), v(s.nfe), v(s.n), self.prev_n, v(self.trial, flat), self.trial_f, self.Fs, self.CRs, self.new_f,
                self.replaced, self.success, self.sums, self.order, self.sort_spare, self.sort_key, self.lower,
                self.upper, self.settings, self.limits, *given, self.values_in(s, f_in), self.fitness, self.fdata,
                self.quads, *self.group_scratch(width, self.block_f.dtype), steps, move, select,
                *self.common_args(best_x, hit, it, best_f, record))
        flips = self.kernel(_generations)(*args, self.jobs(args))
        self.spare = s if flips % 2 else out
        return out if flips % 2 else s

    def jobs(self, args) -> tuple:
        """The CompiledJobs of `_generations`' parallel loops for these arguments' types
        (compiled, or loaded from the disk cache, once per run set and kind of launch)."""
        (xa, fa, xb, fb, archive, archive_n, m_cr, m_f, slot, nfe, n, prev_n, trial, trial_f, Fs, CRs, new_f, replaced,
         success, sums, order, spare, sort_key, lower, upper, settings, limits, given_index, given_params, given_cross,
         f_in, fid, fdata, quads, scratch, values, steps, move, select, best_x, best_f, hit, it, target, has_target,
         record, block_f, block_i, block_nan, nan_evals, counter, key) = args
        depends = (f_in.dtype, f_in.ndim, record.ndim, record.flags.c_contiguous)
        if self._jobs is None or self._jobs[0] != depends:
            t, i64, flag = typeof, types.int64, types.boolean
            x_t, f_t, ints = t(xa), t(fa), t(n)
            books = t((best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals))
            row = types.Array(t(scratch).dtype, 1, "C")  # a group's scratch row
            helpers = ((_block_parameters, (i64, i64, i64, t(m_f), t(m_f), t(Fs), t(Fs), row, t(given_params), ints,
                                            t(settings), i64, i64, t(limits))),
                       (draw_quads, (row, i64, i64, i64, i64, i64, i64, i64)),
                       (_select, (f_t, t(trial_f), t(f_in), i64, t(Fs), t(Fs), t(new_f), t(replaced), t(success), ints,
                                  t(block_f), t(block_i), t(block_nan), t(sums), t(limits), i64, i64)))
            helpers_t = types.Tuple([JobType(argtypes) for _, argtypes in helpers])
            archive_spec = (_archive, (i64, i64, i64, t(archive), ints, x_t, t(success), i64, i64))
            # the longest first (see compiled_jobs)
            blocks, closing, parameters, archiving, selection, gathering, draw = compiled_jobs(
                (_blocks, (
                    i64, x_t, f_t, x_t, t(trial_f), t(Fs), t(Fs), t(archive), ints, t(m_f), t(m_f), ints, ints,
                    t((lower, upper)), t((given_index, given_params, given_cross)), t(fdata), t(scratch), t(values),
                    t(limits), t(settings), i64, i64, i64, i64, flag, flag,
                    t((f_in, new_f, replaced, success, sums, block_f, block_i, block_nan)), helpers_t)),
                (_close, (i64, i64, x_t, x_t, t(new_f), t(success), t(m_f), t(m_cr), ints, ints, ints,
                          t(prev_n), t(archive), ints, t(order), t(spare), t(sort_key), t(sums), t(settings),
                          i64, i64, books, JobType(archive_spec[1]))),
                helpers[0],
                archive_spec,
                helpers[2],
                (_gather, (i64, x_t, x_t, t(new_f), t(replaced), t(order), ints, t(prev_n), x_t, f_t)),
                helpers[1])
            self._jobs = (depends, (blocks, closing, gathering, (parameters, draw, selection), archiving))
        return self._jobs[1]


#: The host side the engine builds for these algorithms (see engine/kernels/__init__.py).
ITERATION = NativeSHADE
