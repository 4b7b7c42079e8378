"""Prism Refraction Search's iterations as Numba kernels: the native fast path of the CPU engine.

The math is `algorithms/prs.py`'s, which stays the reference (the tests compare the two
with the same random numbers). Each iteration:

- per run, serially: what (11) needs of the prism, mu^2 (10) from the mean deviation of the
  previous iteration (carried in `mean`, as the CUDA kernel does), cos A and sin A;
- per block of rays of one run (in parallel), passes over the block's coordinates, each a
  loop without calls that the compiler vectorises: r's uniforms from Philox with the CUDA
  kernel's counters (the ray's coordinate pair, iteration, stream 0; one call per pair),
  E (9), the refracted angle (11), the angle onto the box; then the objective (sphere,
  Rastrigin and Rosenbrock in such passes, the other built-in functions row by row, other
  problems read back from the engine's evaluation), NaN -> +inf counted, and the block's
  best value, its index and its sum of values;
- per run, serially: the engine's bookkeeping, the next iteration's mean deviation from the
  block sums, and the apex angle's decay (12) with eager's `t`.

As in eager, (9) and (11) are computed in the run's dtype (float32 runs in float32, sixteen
numbers per instruction). sin, cos and arcsin are polynomials (libm calls would keep the
loops scalar, several times slower) with near-minimax coefficients for the dtype's
precision, fitted with `mpmath.chebyfit` (relative error below 2**-56 for float64, 2**-30
for float32); angles too large to reduce exactly go to libm. Where (11)'s argument is NaN
(an infinite deviation: a NaN value), the clamps send it to -1 as the CUDA kernel's do, so
positions stay in the box (eager's would be NaN).

Two kernels do the iterations: `_steps` on one thread, and `_spread_steps` over the threads,
whose groups of blocks are a job (`_group_job`, through `cpu_jobs.spread`). Both call a
block's three parts as jobs (`parts`: `_uniforms`, `_refract`, `_select_block`), so that on a
new machine each compiles in a process of its own while the kernel compiles (the default's
build on the development machine: 3.5 s with the parts inline, 1.9 s as jobs; the calls cost
0.1-0.3 us an iteration at 32 x 2, at most 2% at paper 000's 1,024 x 4 (none on the H100
machine's Xeon), nothing measurable at the default 100 x 30).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from .. import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit, typeof, types
from numba.extending import overload

from ..cpu_common import BLOCK_ROWS, NativeIteration, close_step, copy_into, native_view
from ..cpu_jobs import JobType, call_job, compiled_jobs, inner, job, spread
from ..cpu_objectives import new_value
from ..cpu_random import philox, uniform

_RAD = 180.0 / math.pi  # degrees per radian
# Polynomial coefficients, highest power first: sin r = r + r z S(z) with z = r^2 on
# |r| <= pi/2, asin s = s + s z P(z) with z = s^2 on 0 <= s <= 1/2.
_SIN64 = (2.7314447669863995e-15, -7.643970296798572e-13, 1.6058977312464087e-10, -2.5052107616996182e-08,
          2.7557319219163234e-06, -0.00019841269841254974, 0.008333333333333316, -0.16666666666666666)
_ASIN64 = (0.028757851367421566, -0.014851887071247204, 0.01740087944269402, 0.005457506718640358,
           0.01032281435018578, 0.011479177415184906, 0.013971212973552933, 0.017352392720869973,
           0.02237217294214989, 0.030381944138531247, 0.04464285714635543, 0.07499999999998433,
           0.16666666666666669)
_SIN32 = (-2.4080190432969638e-08, 2.75364635625748e-06, -0.000198410865614788, 0.008333332768753579,
          -0.16666666663881236)
_ASIN32 = (0.03369084720283012, 0.017149238357677253, 0.03110066273549457, 0.04459940152851218,
           0.07500094543497424, 0.16666666337430908)
# pi in parts of 15 (float64) or 23 (float32: 24-bit angles) significant bits, so that
# k * part is exact for |k| < 2**38 or 2**30 and x - k pi (in float64) loses nothing below
# the limit (checked against mpmath, with and without fused multiply-adds); sin of larger
# angles is libm's.
_PI64 = (3.1414794921875, 0.0001131594181060791, 1.9841763787553646e-09, 1.0780439041457868e-14,
         1.6667358470698486e-19, 1.2736380195846697e-24, 2.5413117520279757e-29)
_PI32 = (3.141592502593994, 1.5099578831723193e-07, 1.0780605716316238e-14)
#: Per dtype: pi's parts, sin's limit, and the polynomials' coefficients (in the dtype).
_MATH = {"float64": (_PI64, 8.0e11, _SIN64, _ASIN64),
         "float32": (_PI32, 3.0e9, tuple(map(np.float32, _SIN32)), tuple(map(np.float32, _ASIN32)))}
#: Built-in objectives computed in SIMD passes over a block (the others row by row).
_SPHERE, _RASTRIGIN, _ROSENBROCK = 1, 3, 6


def _math(x):
    """_MATH's constants for x's dtype, as compile-time constants (see the overload below)."""
    return _MATH[np.asarray(x).dtype.name]


@overload(_math)
def _math_for(x):
    # chosen by type when compiling, so that no kernel or job passes these tuples along (a job's
    # packed arguments must be one flat tuple)
    constants = _MATH[str(x)]
    return lambda x: constants


# -- sin, cos and arcsin in the dtype of their argument, contracted to fused multiply-adds --
@inner(fastmath={"contract"})
def _horner(z, c):
    acc = c[0]
    for k in range(1, len(c)):
        acc = acc * z + c[k]
    return acc


@inner(fastmath={"contract"})
def _sin_reduced(r, c):
    """sin r for |r| <= pi/2."""
    return r + r * (r * r) * _horner(r * r, c)


@njit(cache=True, fastmath={"contract"})
def _sin(x, pi, c):
    """sin x below the dtype's limit: x = k pi + r (in float64), |r| <= pi/2, sin x = (-1)^k sin r."""
    k = np.floor(x * (1.0 / math.pi) + 0.5)
    r = x - k * pi[0]
    for m in range(1, len(pi)):
        r -= k * pi[m]
    s = _sin_reduced(type(x)(r), c)
    return -s if np.int64(k) & 1 else s


@njit(cache=True, fastmath={"contract"})
def _cos_turns(v, c):
    """cos(2 pi v) for any v: whole turns drop exactly, and cos(2 pi w) = sin(2 pi (1/4 - |w|))."""
    T = type(v)
    w = abs(v - np.floor(v + T(0.5)))  # in [0, 1/2], exact
    return _sin_reduced(T(2.0 * math.pi) * (T(0.25) - w), c)


@njit(cache=True, fastmath={"contract"})
def _asin(a, c):
    """arcsin a on [-1, 1]: the polynomial on [0, 1/2], and asin a = pi/2 - 2 asin(sqrt((1 - a) / 2)) above."""
    T = type(a)
    size = abs(a)
    above = size > T(0.5)
    s = math.sqrt(max(T(0.5) - T(0.5) * size, T(0.0))) if above else size
    y = s + s * (s * s) * _horner(s * s, c)
    y = T(0.5 * math.pi) - T(2.0) * y if above else y
    return -y if a < T(0.0) else y


@njit(cache=True, inline="always")
def _theta(Er, u, mu2, cos_A, sin_A, pi, sin_c, asin_c, exact):
    """The refracted angle (11) in degrees, from E in radians and r = 2 u - 1, in E's dtype.
    A NaN argument (an infinite deviation) goes to -1, as CUDA's fmax/fmin clamp does."""
    T = type(Er)
    sin_E = math.sin(Er) if exact else _sin(Er, pi, sin_c)  # libm: sinf for float32, fast there
    radicand = mu2 - sin_E * sin_E
    radicand = radicand if radicand > T(0.0) else T(0.0)  # NaN -> 0
    arg = -sin_E * cos_A + (T(2.0) * u - T(1.0)) * sin_A * math.sqrt(radicand)
    arg = min(arg, T(1.0)) if arg >= T(-1.0) else T(-1.0)  # NaN -> -1
    return _asin(arg, asin_c) * T(_RAD)


@job
def _uniforms(u, key, pair0, rows, dim, half, step):
    """r's U[0, 1) numbers for a block's coordinates (flat), from the CUDA kernel's Philox
    counters: one call per pair of a row's coordinates (padded to a power of two)."""
    mask = np.uint64(0xFFFFFFFF)
    if dim == 1:  # the pair's first number
        for q in range(rows):
            pair = np.uint64(pair0 + q)
            u[q] = uniform(philox(key, pair & mask, pair >> np.uint64(32), step, 0)[0])
        return
    for q in range(rows * half):
        pair = np.uint64(pair0 + q)
        w0, w1, _, _ = philox(key, pair & mask, pair >> np.uint64(32), step, 0)
        u[2 * q], u[2 * q + 1] = uniform(w0), uniform(w1)
    if 2 * half != dim:  # drop each row's padding coordinates
        for i in range(rows):
            for d in range(dim):
                u[i * dim + d] = u[i * 2 * half + d]


@job
def _refract(th, xs, fb, u, E, A, prism, lane_row, lane_lo, lane_span, lane_hi, deg):
    """Moves a block's rays (flat coordinates th, xs; deviations fb; uniforms u): (9) and (11)
    in the run's dtype (prism: the run's mu^2, cos A and sin A), then the angles onto the box
    as `to_box`. Each pass is one loop over the block's coordinates, so that it vectorises
    (lane_* give each coordinate's row and bounds)."""
    pi, limit, sin_c, asin_c = _math(A)
    T = th.dtype.type
    mu2, cos_A, sin_A = prism[0], prism[1], prism[2]
    n = th.shape[0]
    for e in range(n):
        E[e] = ((fb[lane_row[e]] - th[e]) + A) * deg  # (9), radians
    large = 0
    for e in range(n):
        th[e] = _theta(E[e], u[e], mu2, cos_A, sin_A, pi, sin_c, asin_c, False)  # (11)
        large += 0 if abs(E[e]) < limit else 1
    if large:  # sin of larger (or infinite, or NaN) angles: libm's
        for e in range(n):
            if not abs(E[e]) < limit:
                th[e] = _theta(E[e], u[e], mu2, cos_A, sin_A, pi, sin_c, asin_c, True)
    for e in range(n):
        xs[e] = min(max(lane_lo[e] + lane_span[e] * (th[e] + T(90.0)) / T(180.0), lane_lo[e]), lane_hi[e])


@inner
def _prisms(apex, mean, deg, prism):
    """Per run, what (11) needs of the prism: mu^2 (10, radians, from the mean of the previous
    iteration's deviations), cos A and sin A, in the run's dtype."""
    for run in range(apex.shape[0]):
        A = apex[run]
        half_sin = math.sin(A / 2)  # 0 once A has decayed to 0: mu is then huge, not an error
        mu = math.sin((A + mean[run]) / 2) / (half_sin if half_sin != 0.0 else 5e-324)
        prism[run, 0], prism[run, 1], prism[run, 2] = mu * mu, math.cos(A * deg), math.sin(A * deg)


@inner
def _values(fid, xs, dim, terms, vals, sin_c):
    """The objective of a block's rows (flat coordinates xs) into vals (float64), for the
    functions with SIMD passes: terms per coordinate in the dtype, then sums per row in
    eager's order (rows inner, so that this loop vectorises too)."""
    n = xs.shape[0]
    T = xs.dtype.type
    if fid == _ROSENBROCK:
        for e in range(n - 1):  # the pair (x_d, x_{d+1}); a row's last term is not summed
            a, b = xs[e + 1] - xs[e] * xs[e], xs[e] - T(1.0)
            terms[e] = T(100.0) * (a * a) + b * b
    elif fid == _RASTRIGIN:
        for e in range(n):
            terms[e] = xs[e] * xs[e] - T(10.0) * _cos_turns(xs[e], sin_c)
    else:
        for e in range(n):
            terms[e] = xs[e] * xs[e]
    vals[:] = 10.0 * dim if fid == _RASTRIGIN else 0.0
    for d in range(dim - 1 if fid == _ROSENBROCK else dim):
        for i in range(vals.shape[0]):
            vals[i] += terms[i * dim + d]


@inner
def _select(xs, fb, f_in, fid, fdata, dim, row0, terms, vals):
    """The values of a block's rows into fb (NaN -> +inf), and the block's best value, its
    index (the first on ties), its NaN count and its sum of values (in float64)."""
    rows = fb.shape[0]
    nans = 0
    if fid == _SPHERE or fid == _RASTRIGIN or fid == _ROSENBROCK:
        _values(fid, xs, dim, terms, vals, _math(xs[0])[2])
    else:
        for i in range(rows):
            vals[i], nan = new_value(fid, fdata, xs[i * dim:(i + 1) * dim], f_in, row0 + i)
            nans += nan
    for i in range(rows):  # in the run's dtype, as eager compares and sums them
        nan = vals[i] != vals[i]
        nans += nan
        fb[i] = np.inf if nan else vals[i]
    best, best_i = np.inf, 0
    for i in range(rows):
        if fb[i] < best:
            best, best_i = fb[i], i
    # the sum in four interleaved parts: a fixed order whose additions can overlap
    s0, s1, s2, s3 = 0.0, 0.0, 0.0, 0.0
    q = rows - rows % 4
    for i in range(0, q, 4):
        s0, s1, s2, s3 = s0 + fb[i], s1 + fb[i + 1], s2 + fb[i + 2], s3 + fb[i + 3]
    for i in range(q, rows):
        s0 += fb[i]
    return best, best_i, nans, (s0 + s1) + (s2 + s3)


@job
def _select_block(xs, fb, f_in, fid, fdata, dim, row0, p0, terms, vals, run, b, block_f, block_i, block_nan, block_s):
    """`_select` for block b of `run` (its first row p0; row0 in the engine's values), into the
    block's entries."""
    best, i, block_nan[run, b], block_s[run, b] = _select(xs, fb, f_in, fid, fdata, dim, row0, terms, vals)
    block_f[run, b], block_i[run, b] = best, p0 + i


@job
def _group_job(g, packed):
    """Group g of blocks (each group has its scratch; none outlives a block), for
    `_spread_steps`: each block's uniforms, (9) and (11), then its values, best, NaN count and
    sum (the three parts are jobs: uniforms, refract, selecting). packed: the other arguments
    (flat: see `spread`)."""
    (theta, x, f, apex, prism, lane_row, lane_lo, lane_span, lane_hi, deg, given_r, f_in, fid, fdata, dim, half,
     scratch, values, move, select, block_s, block_f, block_i, block_nan, key, step, uniforms, refract,
     selecting) = packed
    runs, pop = f.shape
    blocks = block_f.shape[1]
    jobs, groups = runs * blocks, values.shape[0]
    work, vals = scratch[g], values[g]  # work: uniforms, E, objective terms
    for job in range(g * jobs // groups, (g + 1) * jobs // groups):
        run, b = job // blocks, job % blocks
        p0 = b * BLOCK_ROWS
        rows = min(pop, p0 + BLOCK_ROWS) - p0
        n, e0 = rows * dim, p0 * dim
        th, xs, fb = theta[run, e0:e0 + n], x[run, e0:e0 + n], f[run, p0:p0 + rows]
        if move:
            if given_r.shape[0]:  # the test hook: the eager step's own U[0, 1) numbers
                copy_into(work[0], given_r[0, run, e0:e0 + n])
            else:
                call_job(uniforms, work[0], key, (run * pop + p0) * half, rows, dim, half, step)
            call_job(refract, th, xs, fb, work[0], work[1], apex[run], prism[run], lane_row, lane_lo, lane_span,
                     lane_hi, deg)
        if select:
            call_job(selecting, xs, fb, f_in, fid, fdata, dim, run * pop + p0, p0, work[2], vals, run, b, block_f,
                     block_i, block_nan, block_s)


@njit(cache=True, inline="always")
def _close(x, apex, t, mean, alpha, T, dim, move, select, block_s, best_x, best_f, hit, it, target, has_target,
           record, block_f, block_i, block_nan, nan_evals, counter, k):
    """After step k's groups: the apex angle's decay (12), the engine's bookkeeping and the
    next iteration's mean deviation, per run."""
    runs, pop = mean.shape[0], x.shape[1] // dim
    if move:
        for run in range(runs):
            apex[run] *= math.exp(-alpha * t[0] / T)  # (12), with this step's t
        t[0] += 1
        it[0] += 1
    if select:
        for run in range(runs):
            close_step(run, x[run], dim, best_x, best_f, hit, it, target, has_target, record, block_f, block_i,
                       block_nan, nan_evals, k)
            mean[run] = block_s[run].sum() / pop  # the next iteration's (10)
        counter[0] += 1


@njit(cache=True)
def _steps(theta, x, f, apex, t, mean, prism, lane_row, lane_lo, lane_span, lane_hi, alpha, T, deg, given_r, f_in,
           fid, fdata, dim, half, scratch, values, steps, move, select, block_s, best_x, best_f, hit, it, target,
           has_target, record, block_f, block_i, block_nan, nan_evals, counter, key, parts):
    """`steps` iterations on one thread, each group's loop and the close written out: the same
    as `_group_job`'s and `_close`'s, which this kernel does not call (inlined, they took 1.3
    us an iteration at 32 x 2 against 1.0 written out here, and 11.2-11.4 against 10.6-10.8 at
    the default 100 x 30, EPYC, with the parts inline; with the parts as jobs 1.4 against
    1.1-1.2 and 11.5-11.8 against 10.9-11.1; as PSO's `_steps`). Likely cause, not timed
    apart: Numba counts references to the arrays an inlined or called function takes (the
    optimised module had 98 call sites of NRT_incref inlined, 67 written out). parts: the
    block's jobs (see the module's docstring)."""
    runs, pop = f.shape
    blocks = block_f.shape[1]
    jobs, groups = runs * blocks, values.shape[0]
    uniforms, refract, selecting = parts
    for k in range(steps):
        step = counter[0]
        if move:
            _prisms(apex, mean, deg, prism)
        for g in range(groups):  # groups of blocks, each with its scratch (none outlives a block)
            work, vals = scratch[g], values[g]  # work: uniforms, E, objective terms
            for job in range(g * jobs // groups, (g + 1) * jobs // groups):
                run, b = job // blocks, job % blocks
                p0 = b * BLOCK_ROWS
                rows = min(pop, p0 + BLOCK_ROWS) - p0
                n, e0 = rows * dim, p0 * dim
                th, xs, fb = theta[run, e0:e0 + n], x[run, e0:e0 + n], f[run, p0:p0 + rows]
                if move:
                    if given_r.shape[0]:  # the test hook: the eager step's own U[0, 1) numbers
                        copy_into(work[0], given_r[0, run, e0:e0 + n])
                    else:
                        call_job(uniforms, work[0], key, (run * pop + p0) * half, rows, dim, half, step)
                    call_job(refract, th, xs, fb, work[0], work[1], apex[run], prism[run], lane_row, lane_lo,
                             lane_span, lane_hi, deg)
                if select:
                    call_job(selecting, xs, fb, f_in, fid, fdata, dim, run * pop + p0, p0, work[2], vals, run, b,
                             block_f, block_i, block_nan, block_s)
        if move:
            for run in range(runs):
                apex[run] *= math.exp(-alpha * t[0] / T)  # (12), with this step's t
            t[0] += 1
            it[0] += 1
        if select:
            for run in range(runs):
                close_step(run, x[run], dim, best_x, best_f, hit, it, target, has_target, record, block_f, block_i,
                           block_nan, nan_evals, k)
                mean[run] = block_s[run].sum() / pop  # the next iteration's (10)
            counter[0] += 1


@njit(cache=True)
def _spread_steps(theta, x, f, apex, t, mean, prism, lane_row, lane_lo, lane_span, lane_hi, alpha, T, deg, given_r,
                  f_in, fid, fdata, dim, half, scratch, values, steps, move, select, block_s, best_x, best_f, hit, it,
                  target, has_target, record, block_f, block_i, block_nan, nan_evals, counter, key, parts, group_job):
    """`steps` iterations, the groups over the threads: `spread` calls `_group_job` (its
    CompiledJob) for each, so that on a new machine the job compiles in a process of its own
    while this function compiles here (the one parallel build it replaces took 3.1 s of
    1,024 x 30's 5.4 s of compiling on the development machine); parts: the block's jobs,
    passed on to it."""
    for k in range(steps):
        if move:
            _prisms(apex, mean, deg, prism)
        spread(values.shape[0], group_job, (theta, x, f, apex, prism, lane_row, lane_lo, lane_span, lane_hi, deg,
                                            given_r, f_in, fid, fdata, dim, half, scratch, values, move, select,
                                            block_s, block_f, block_i, block_nan, key, counter[0], parts[0],
                                            parts[1], parts[2]))
        _close(x, apex, t, mean, alpha, T, dim, move, select, block_s, best_x, best_f, hit, it, target, has_target,
               record, block_f, block_i, block_nan, nan_evals, counter, k)


class NativePRS(NativeIteration):
    """`PRS`'s iterations on the CPU, in place on the state's buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        super().__init__(problem, runs, algorithm.pop_size, target, seed)
        self.alpha, self.T = float(algorithm.alpha), float(algorithm.max_iters)
        self.half = max(2, 1 << (problem.dim - 1).bit_length()) // 2  # the CUDA kernel's coordinate pairs per row
        dtype = problem.lower.dtype
        self.mean = torch.zeros(runs, dtype=dtype)  # the deviations' mean, carried between iterations
        self.counters = (self.counter, self.mean)
        self.block_s = np.empty(self.block_f.shape)  # each block's sum of values, for the mean
        self.prism = np.empty((runs, 3), self.block_f.dtype)  # per run: mu^2, cos A, sin A
        lower, upper = problem.lower.contiguous(), problem.upper.contiguous()
        # each coordinate of a block of rows: its row, and its bounds (so that passes are flat)
        self.lanes = (np.arange(BLOCK_ROWS * self.dim) // self.dim,
                      *(native_view(v.repeat(BLOCK_ROWS)) for v in (lower, upper - lower, upper)))
        scalar = torch.empty(0, dtype=dtype).numpy().dtype.type
        self.deg = scalar(math.pi / 180)  # eager's deg2rad, in the run's dtype
        self.no_r = np.empty((0, 0, 0), self.block_f.dtype)  # given_r's placeholder
        self._jobs: tuple | None = None  # (what their types depend on, `jobs`' CompiledJobs)

    def prepare(self, state):
        state = super().prepare(state)
        self.mean.copy_(state.f.mean(-1))  # for the first iteration's (10)
        return state

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        v, flat = self.view, (self.runs, self.pop * self.dim)
        theta, x = v(s.theta, flat), v(s.x, flat)
        given = self.given_r
        given = v(given, (given.shape[0], *flat)) if given is not None else self.no_r
        args = (theta, x, v(s.f), v(s.apex), v(s.t), v(self.mean), self.prism, *self.lanes, self.alpha, self.T,
                self.deg, given, self.values_in(s, f_in), self.fitness, self.fdata, self.dim, self.half,
                *self.group_scratch(BLOCK_ROWS * 2 * self.half, x.dtype), steps, move, select, self.block_s,
                *self.common_args(best_x, hit, it, best_f, record))
        parts, group_job = self.jobs(args)
        if group_job is not None:
            _spread_steps(*args, parts, group_job)
        else:
            _steps(*args, parts)
        return s

    def jobs(self, args):
        """The block's parts (`_uniforms`, `_refract`, `_select_block`) as CompiledJobs, and
        `_group_job`'s for `_spread_steps` where the iterations go over threads (else None),
        for these arguments' types (compiled, or loaded from the disk cache, once per run set,
        build, dtype and shape of the values handed in, and test hook)."""
        (theta, x, f, apex, t, mean, prism, lane_row, lane_lo, lane_span, lane_hi, alpha, T, deg, given, f_in, fid,
         fdata, dim, half, scratch, values, steps, move, select, block_s, *_, block_f, block_i, block_nan, nan_evals,
         counter, key) = args
        parallel = self.parallel()
        depends = (f_in.dtype, f_in.ndim, given.shape[0] == 0, parallel)
        if self._jobs is None or self._jobs[0] != depends:
            ty, flag, i64 = typeof, types.boolean, types.int64
            row = lambda a: types.Array(ty(a).dtype, 1, "C")  # noqa: E731  (a block's slice of a row of a)
            part_specs = ((_select_block, (row(x), row(f), ty(f_in), ty(fid), ty(fdata), ty(dim), i64, i64,
                                           row(scratch), row(values), i64, i64, ty(block_f), ty(block_i),
                                           ty(block_nan), ty(block_s))),
                          (_refract, (row(theta), row(x), row(f), row(scratch), row(scratch), ty(apex).dtype,
                                      row(prism), ty(lane_row), ty(lane_lo), ty(lane_span), ty(lane_hi), ty(deg))),
                          (_uniforms, (row(scratch), ty(key), i64, i64, ty(dim), ty(half), ty(counter).dtype)))
            group_spec = (_group_job, (i64, types.Tuple((
                ty(theta), ty(x), ty(f), ty(apex), ty(prism), ty(lane_row), ty(lane_lo), ty(lane_span), ty(lane_hi),
                ty(deg), ty(given), ty(f_in), ty(fid), ty(fdata), ty(dim), ty(half), ty(scratch), ty(values), flag,
                flag, ty(block_s), ty(block_f), ty(block_i), ty(block_nan), ty(key), i64,
                *(JobType(part_specs[i][1]) for i in (2, 1, 0))))))  # as `parts`: uniforms, refract, selecting
            # the longest first (one-process profile: _select with _values, _refract with its sin and
            # arcsin, _uniforms)
            built = compiled_jobs(*part_specs, group_spec) if parallel else compiled_jobs(*part_specs)
            selecting, refract, uniforms = built[:3]
            self._jobs = (depends, ((uniforms, refract, selecting), built[3] if parallel else None))
        return self._jobs[1]


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativePRS
