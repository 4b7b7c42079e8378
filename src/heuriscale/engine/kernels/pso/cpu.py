"""PSO's iterations as one Numba kernel: the native fast path of the CPU engine.

The math is `algorithms/pso.py`'s, which stays the reference (the tests compare the two
with the same random numbers): per block of particles of one run, r1 and r2 (Philox, the
CUDA kernel's counters), velocity (2) clamped to +-vmax, position (3) clamped to the box,
(a pass of its own over the block, which vectorises), the objective inline (or read back from the engine's problem), NaN -> +inf counted,
personal bests replaced where strictly better and the block's best new value; then per run
the engine's bookkeeping and gbest, replaced when strictly better (eager takes the first
argmin of pbest_f: on exact ties the two may keep different, equally good points).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..cpu_common import BLOCK_ROWS, NativeIteration, close_step, copy_into, kernel, native_view
from ..cpu_jobs import inner
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


@kernel
def _steps(x, v, f, pbest_x, pbest_f, gbest_x, gbest_f, lo, hi, vmax, w, c1, c2, given_r, f_in, fid, fdata, dim, half,
           scratch, values, steps, move_, select, best_x, best_f, hit, it, target, has_target, record, block_f,
           block_i, block_nan, nan_evals, counter, key):
    runs, pop = f.shape
    blocks = block_f.shape[1]
    jobs, groups = runs * blocks, values.shape[0]
    for k in range(steps):
        step = counter[0]
        for grp in prange(groups):  # groups of blocks, each with its scratch (none outlives a block)
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

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        v, flat = self.view, (self.runs, self.pop * self.dim)
        given = self.given_r
        given = v(given, (2, self.runs, -1)) if given is not None else self.no_r
        self.kernel(_steps)(
            v(s.x, flat), v(s.v, flat), v(s.f), v(s.pbest_x, flat), v(s.pbest_f), v(s.gbest_x), v(s.gbest_f),
            *self.lanes, *self.coef, given, self.values_in(s, f_in), self.fitness, self.fdata, self.dim, self.half,
            *self.group_scratch(BLOCK_ROWS * 2 * self.half, given.dtype), steps, move, select,
            *self.common_args(best_x, hit, it, best_f, record))
        return s


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativePSO
