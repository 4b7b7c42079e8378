"""PSO's iterations as one Numba kernel: the native fast path of the CPU engine.

The math is `algorithms/pso.py`'s, which stays the reference (the tests compare the two
with the same random numbers): per block of particles of one run, r1 and r2 (Philox, the
CUDA kernel's counters), velocity (2) clamped to +-vmax, position (3) clamped to the box
(a pass of its own over the block, which vectorises), the objective inline (or read back
from the engine's problem), NaN -> +inf counted, personal bests replaced where strictly
better and the block's best new value; then per run
the engine's bookkeeping and gbest, replaced when strictly better (eager takes the first
argmin of pbest_f: on exact ties the two may keep different, equally good points).
"""

from __future__ import annotations

import numpy as np
from .. import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit, typeof, types

from ..cpu_common import BLOCK_ROWS, NativeIteration, close_step, copy_into, native_view
from ..cpu_jobs import compiled_jobs, inner, job, spread
from ..cpu_objectives import block_values
from ..cpu_random import philox, uniform


@inner
def uniform_pairs(r1, r2, key, pair0, rows, dim, half, step):
    """r1 and r2 for a block's coordinates, flat: the CUDA kernel's Philox counters (a row's
    coordinate pair, iteration, stream 0), one call per pair of a row's coordinates padded to
    2 * half. A loop of its own over 1-D arrays, so that it runs in SIMD lanes (4x faster)."""
    mask = np.uint64(0xFFFFFFFF)
    for q in range(rows * half):
        pair = np.uint64(pair0 + q)
        a, b, c, e = philox(key, pair & mask, pair >> np.uint64(32), step, 0)
        r1[2 * q], r1[2 * q + 1], r2[2 * q], r2[2 * q + 1] = uniform(a), uniform(b), uniform(c), uniform(e)
    if 2 * half != dim:  # drop each row's padding coordinates
        for i in range(rows):
            for d in range(dim):
                r1[i * dim + d], r2[i * dim + d] = r1[i * 2 * half + d], r2[i * 2 * half + d]


@inner
def move(xs, vs, ps, g, r1, r2, lo, hi, vmax, w, c1, c2):
    """(2) and (3) for a block's coordinates (flat arrays; g, lo, hi, vmax repeated per row),
    in the run's dtype as eager computes them: one loop over all of them, which vectorises."""
    T = xs.dtype.type
    w, c1, c2 = T(w), T(c1), T(c2)
    for e in range(xs.shape[0]):
        vd = w * vs[e] + c1 * r1[e] * (ps[e] - xs[e]) + c2 * r2[e] * (g[e] - xs[e])  # (2)
        vd = min(max(vd, -vmax[e]), vmax[e])
        vs[e] = vd
        xs[e] = min(max(xs[e] + vd, lo[e]), hi[e])  # (3)


@job
def _group_job(grp, packed):
    """Group `grp` of blocks (each group has its scratch; none outlives a block), for
    `_spread_steps`: (2) and (3), the values, the personal bests and each block's best.
    packed: the other arguments (flat: Numba's parallel loops take no nesting)."""
    (x, v, f, pbest_x, pbest_f, gbest_x, lo, hi, vmax, w, c1, c2, given_r, f_in, fid, fdata, dim, half, scratch, values,
     move_, select, block_f, block_i, block_nan, key, step) = packed
    runs, pop = f.shape
    blocks = block_f.shape[1]
    jobs, groups = runs * blocks, values.shape[0]
    r1, r2, g, vals = scratch[grp, 0], scratch[grp, 1], scratch[grp, 2], values[grp]
    for job in range(grp * jobs // groups, (grp + 1) * jobs // groups):
        run, b = job // blocks, job % blocks
        p0 = b * BLOCK_ROWS
        rows = min(pop, p0 + BLOCK_ROWS) - p0
        n, e0 = rows * dim, p0 * dim
        xs = x[run, e0:e0 + n]
        if move_:
            if given_r.shape[0]:  # the test hook: the eager step's own random numbers
                copy_into(r1, given_r[0, run, e0:e0 + n])
                copy_into(r2, given_r[1, run, e0:e0 + n])
            else:
                uniform_pairs(r1, r2, key, (run * pop + p0) * half, rows, dim, half, step)
            for i in range(rows):  # (scalar copies: a slice per row costs more than its copy)
                for d in range(dim):
                    g[i * dim + d] = gbest_x[run, d]
            move(xs, v[run, e0:e0 + n], pbest_x[run, e0:e0 + n], g, r1, r2, lo, hi, vmax, w, c1, c2)
        if select:
            block_values(fid, fdata, xs, dim, f_in, run * pop + p0, vals)
            best, best_i, nans = np.inf, p0, 0
            for p in range(p0, p0 + rows):
                value = vals[p - p0]
                if value != value:  # NaN -> +inf, counted
                    value, nans = np.inf, nans + 1
                f[run, p] = value
                value = f[run, p]  # compared in the run's dtype, as eager does
                if value < pbest_f[run, p]:
                    pbest_f[run, p] = value
                    for e in range(p * dim, (p + 1) * dim):
                        pbest_x[run, e] = x[run, e]
                if value < best:
                    best, best_i = value, p
            block_f[run, b], block_i[run, b], block_nan[run, b] = best, best_i, nans


@njit(cache=True, inline="always")
def _close(x, dim, gbest_x, gbest_f, move_, select, best_x, best_f, hit, it, target, has_target, record, block_f,
           block_i, block_nan, nan_evals, counter, k):
    """After step k's groups: the engine's bookkeeping and gbest, per run."""
    if move_:
        it[0] += 1
    if select:
        for run in range(x.shape[0]):
            m, i = close_step(run, x[run], dim, best_x, best_f, hit, it, target, has_target, record, block_f, block_i,
                              block_nan, nan_evals, k)
            if m < gbest_f[run]:  # then this particle's pbest is x
                gbest_f[run] = m
                copy_into(gbest_x[run], x[run, i * dim:(i + 1) * dim])
        counter[0] += 1


@njit(cache=True)
def _steps(x, v, f, pbest_x, pbest_f, gbest_x, gbest_f, lo, hi, vmax, w, c1, c2, given_r, f_in, fid, fdata, dim, half,
           scratch, values, steps, move_, select, best_x, best_f, hit, it, target, has_target, record, block_f,
           block_i, block_nan, nan_evals, counter, key):
    """`steps` iterations on one thread, each group's work and the close written out: the same
    as `_group_job`'s and `_close`'s, which this kernel does not call (inlined or called, they took
    0.71-0.82 us an iteration at 32 particles against 0.60-0.66 written out here, EPYC, as a
    separate inline `_group`; likely Numba's reference counts of the array arguments, as PRS's
    `_steps` says)."""
    runs, pop = f.shape
    blocks = block_f.shape[1]
    jobs, groups = runs * blocks, values.shape[0]
    for k in range(steps):
        step = counter[0]
        for grp in range(groups):  # groups of blocks, each with its scratch (none outlives a block)
            r1, r2, g, vals = scratch[grp, 0], scratch[grp, 1], scratch[grp, 2], values[grp]
            for job in range(grp * jobs // groups, (grp + 1) * jobs // groups):
                run, b = job // blocks, job % blocks
                p0 = b * BLOCK_ROWS
                rows = min(pop, p0 + BLOCK_ROWS) - p0
                n, e0 = rows * dim, p0 * dim
                xs = x[run, e0:e0 + n]
                if move_:
                    if given_r.shape[0]:  # the test hook: the eager step's own random numbers
                        copy_into(r1, given_r[0, run, e0:e0 + n])
                        copy_into(r2, given_r[1, run, e0:e0 + n])
                    else:
                        uniform_pairs(r1, r2, key, (run * pop + p0) * half, rows, dim, half, step)
                    for i in range(rows):  # (scalar copies: a slice per row costs more than its copy)
                        for d in range(dim):
                            g[i * dim + d] = gbest_x[run, d]
                    move(xs, v[run, e0:e0 + n], pbest_x[run, e0:e0 + n], g, r1, r2, lo, hi, vmax, w, c1, c2)
                if select:
                    block_values(fid, fdata, xs, dim, f_in, run * pop + p0, vals)
                    best, best_i, nans = np.inf, p0, 0
                    for p in range(p0, p0 + rows):
                        value = vals[p - p0]
                        if value != value:  # NaN -> +inf, counted
                            value, nans = np.inf, nans + 1
                        f[run, p] = value
                        value = f[run, p]  # compared in the run's dtype, as eager does
                        if value < pbest_f[run, p]:
                            pbest_f[run, p] = value
                            for e in range(p * dim, (p + 1) * dim):
                                pbest_x[run, e] = x[run, e]
                        if value < best:
                            best, best_i = value, p
                    block_f[run, b], block_i[run, b], block_nan[run, b] = best, best_i, nans
        if move_:
            it[0] += 1
        if select:
            for run in range(runs):
                m, i = close_step(run, x[run], dim, best_x, best_f, hit, it, target, has_target, record, block_f,
                                  block_i, block_nan, nan_evals, k)
                if m < gbest_f[run]:  # then this particle's pbest is x
                    gbest_f[run] = m
                    copy_into(gbest_x[run], x[run, i * dim:(i + 1) * dim])
            counter[0] += 1


@njit(cache=True)
def _spread_steps(x, v, f, pbest_x, pbest_f, gbest_x, gbest_f, lo, hi, vmax, w, c1, c2, given_r, f_in, fid, fdata, dim,
                  half, scratch, values, steps, move_, select, best_x, best_f, hit, it, target, has_target, record,
                  block_f, block_i, block_nan, nan_evals, counter, key, group_job):
    """`steps` iterations, the groups over the threads: `spread` calls `_group_job` (its
    CompiledJob) for each. On a new machine the job compiles in a process of its own while
    this function and `spread` compile here; as one parallel build, this kernel was 2.6 s of
    paper 001's first run (Numba's parallel passes weigh every array a function takes)."""
    for k in range(steps):
        spread(values.shape[0], group_job, (x, v, f, pbest_x, pbest_f, gbest_x, lo, hi, vmax, w, c1, c2, given_r, f_in,
                                            fid, fdata, dim, half, scratch, values, move_, select, block_f, block_i,
                                            block_nan, key, counter[0]))
        _close(x, dim, gbest_x, gbest_f, move_, select, best_x, best_f, hit, it, target, has_target, record, block_f,
               block_i, block_nan, nan_evals, counter, k)


class NativePSO(NativeIteration):
    """`PSO`'s iterations on the CPU, in place on the state's buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        super().__init__(problem, runs, algorithm.pop_size, target, seed)
        self.coef = (float(algorithm.w), float(algorithm.c1), float(algorithm.c2))
        self.half = max(2, 1 << (problem.dim - 1).bit_length()) // 2  # the CUDA kernel's coordinate pairs per row
        # the bounds and vmax repeated for each row of a block, so that a block's update is one flat loop
        rows = lambda t: native_view(t.contiguous().repeat(BLOCK_ROWS))  # noqa: E731
        self.lanes = rows(problem.lower), rows(problem.upper), rows(algorithm.velocity_limit(problem))
        self.no_r = np.empty((0, 0, 0), self.lanes[0].dtype)  # given_r's placeholder
        self._job: tuple | None = None  # (what its types depend on, `_group_job`'s CompiledJob)

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        v, flat = self.view, (self.runs, self.pop * self.dim)
        given = self.given_r
        given = v(given, (2, self.runs, -1)) if given is not None else self.no_r
        args = (v(s.x, flat), v(s.v, flat), v(s.f), v(s.pbest_x, flat), v(s.pbest_f), v(s.gbest_x), v(s.gbest_f),
                *self.lanes, *self.coef, given, self.values_in(s, f_in), self.fitness, self.fdata, self.dim, self.half,
                *self.group_scratch(BLOCK_ROWS * 2 * self.half, given.dtype), steps, move, select,
                *self.common_args(best_x, hit, it, best_f, record))
        if self.parallel():
            _spread_steps(*args, self.group_job(args))
        else:
            _steps(*args)
        return s

    def group_job(self, args):
        """`_group_job`'s CompiledJob for `_spread_steps` and these arguments' types (compiled,
        or loaded from the disk cache, once per run set and dtype of the values handed in)."""
        (x, vel, f, pbest_x, pbest_f, gbest_x, gbest_f, lo, hi, vmax, w, c1, c2, given, f_in, fid, fdata, dim, half,
         scratch, values, *_, block_f, block_i, block_nan, nan_evals, counter, key) = args
        depends = (f_in.dtype, f_in.ndim, given.shape[0] == 0)
        if self._job is None or self._job[0] != depends:
            t, i64, flag = typeof, types.int64, types.boolean
            x_t = t(x)
            packed = types.Tuple((
                x_t, x_t, t(f), x_t, t(pbest_f), t(gbest_x), t(lo), t(hi), t(vmax), t(w), t(c1), t(c2), t(given),
                t(f_in), t(fid), t(fdata), t(dim), t(half), t(scratch), t(values), flag, flag, t(block_f), t(block_i),
                t(block_nan), t(key), i64))
            self._job = (depends, compiled_jobs((_group_job, (i64, packed)))[0])
        return self._job[1]


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativePSO
