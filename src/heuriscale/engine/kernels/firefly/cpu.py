"""The Firefly Algorithm's iterations as Numba kernels: the native fast path of the CPU engine.

`algorithms/firefly.py` is the reference (the tests compare the two with the same random
numbers); each update mode has a kernel doing `steps` iterations per call.

- `update="synchronous"` (`_synchronous`): every firefly moves from the previous positions,
  so the new population goes to the other of two buffers (they alternate, and `_launch`
  returns the state holding the new one) and blocks of fireflies i of one run are
  independent work. For firefly i, passes over all j (loops without calls, which the
  compiler vectorises): r_ij^2 = |x_i|^2 + |x_j|^2 - 2 x_i.x_j as eager and the CUDA kernel
  compute it (here in float64), the weights w_ij = [f_j < f_i] beta0 exp(-gamma r_ij^2)
  (exp as a polynomial times a power of two), and the sums sum_j w_ij x_j and sum_j w_ij
  (in four interleaved partial sums: a fixed order, so the same result on any number of
  threads); the attraction is their difference. Then the noise alpha (2 u - 1) for a firefly
  that has a brighter one (u from Philox with the CUDA kernel's counters: the row's
  coordinate pair, iteration, stream 0), the clamp to the box and the objective.
- `update="sequential"` (`_sequential`): paper 002's CPU listing, Gauss-Seidel: for i, then
  for each j brighter than i (brightness as evaluated at the generation's start), x_i moves
  towards the current x_j with fresh noise and is clamped after each move. Each move reads
  the ones before it, so only runs go in parallel. The noise of the pair (i, j) is Philox's
  with counter (the pair's coordinate pair ((run N + i) N + j) ceil(D/2) + d // 2, iteration,
  stream 1): drawn only where j is brighter, and never one of the synchronous update's.

A synchronous block is a job (`_block`), which `_synchronous` calls on one thread and
`_spread_synchronous` over the threads (`cpu_jobs.spread`): on a new machine it compiles in
a process of its own while the kernel compiles.

Then, as in every native kernel, per run: the engine's bookkeeping on the new population.
"""

from __future__ import annotations

import math

import numpy as np
from .. import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit, prange, typeof, types

from ..cpu_common import BLOCK_ROWS, NativeIteration, close_step, kernel
from ..cpu_jobs import call_job, compiled_jobs, inner, job, spread
from ..cpu_objectives import new_value
from ..cpu_random import philox, uniform, word_pair

_MASK = np.uint64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def _select_rows(x, f, f_in, fid, fdata, run, start, stop, pop):
    """Values of rows start..stop of `run` (inline, or the engine's), NaN -> +inf: the block's
    best value, its index (the first on ties) and its NaN count."""
    best, best_i, nans = np.inf, start, 0
    for i in range(start, stop):
        value, nan = new_value(fid, fdata, x[run, i], f_in, run * pop + i)
        nans += nan
        f[run, i] = value
        value = f[run, i]  # compared in the run's dtype, as eager does
        if value < best:
            best, best_i = value, i
    return best, best_i, nans


@inner
def _finish(x, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals, k):
    """The engine's bookkeeping of step k, per run, on the new population x."""
    for run in range(x.shape[0]):
        close_step(run, x[run].reshape(-1), x.shape[2], best_x, best_f, hit, it, target, has_target, record, block_f,
                   block_i, block_nan, nan_evals, k)


# exp r = 1 + r + r^2 P(r) on |r| <= ln(2)/2, highest power first: a near-minimax fit
# (mpmath.chebyfit, relative error below 2**-60).
_EXP = (2.0914679376583935e-09, 2.510520637395701e-08, 2.7557273661348637e-07, 2.7557255425746435e-06,
        2.4801587325533363e-05, 0.00019841269874800493, 0.0013888888888883752, 0.008333333333326141,
        0.04166666666666667, 0.1666666666666667, 0.5)
_LN2 = (0.6931471803691238, 1.9082149292705877e-10)  # ln 2 in two parts: k * part is exact for |k| < 2**20
_EXP_MIN = -708.0  # exp(-708) is about the smallest normal float64: weights below it count as 0


@inner(fastmath={"contract"})
def _exp_parts(y):
    """exp y = p 2**k for _EXP_MIN <= y <= 0 (y = k ln 2 + r): p, and 2**k's float64 bits."""
    k = np.floor(y * (1.0 / math.log(2.0)) + 0.5)
    r = (y - k * _LN2[0]) - k * _LN2[1]
    acc = _EXP[0]
    for m in range(1, len(_EXP)):
        acc = acc * r + _EXP[m]
    return 1.0 + r + r * r * acc, (np.int64(k) + 1023) << 52


@njit(cache=True, inline="always")
def _dot(a, b, ones):
    """sum_j a_j b_j (sum_j a_j if `ones`) in four interleaved partial sums: a fixed order
    (so a fixed result) whose additions the processor can overlap."""
    s0, s1, s2, s3 = 0.0, 0.0, 0.0, 0.0
    n = a.shape[0] - a.shape[0] % 4
    for j in range(0, n, 4):
        s0 += a[j] * (1.0 if ones else b[j])
        s1 += a[j + 1] * (1.0 if ones else b[j + 1])
        s2 += a[j + 2] * (1.0 if ones else b[j + 2])
        s3 += a[j + 3] * (1.0 if ones else b[j + 3])
    for j in range(n, a.shape[0]):
        s0 += a[j] * (1.0 if ones else b[j])
    return (s0 + s1) + (s2 + s3)


@inner
def _attract(xs, fs, sq, xt, i, beta0, gamma, dot, w, bits, pull):
    """Firefly i's weights w_ij = [f_j < f_i] beta0 exp(-gamma r_ij^2) and sums
    pull_d = sum_j w_ij x_jd (from the population xs, fs, its squared norms sq and its
    transpose xt); returns sum_j w_ij and how many j are brighter. Each pass is a loop
    over j without calls (libm's exp would be one), so that it vectorises."""
    pop, dim = xs.shape
    dot[:] = 0.0
    for d in range(dim):
        a = np.float64(xs[i, d])
        for j in range(pop):
            dot[j] += a * xt[d, j]  # x_i . x_j
    fi, brighter = fs[i], 0
    for j in range(pop):
        r2 = max((sq[i] + sq[j]) - 2.0 * dot[j], 0.0)
        y = -gamma * r2
        p, bits[j] = _exp_parts(max(y, _EXP_MIN))
        is_brighter = fs[j] < fi
        w[j] = beta0 * p if is_brighter and y >= _EXP_MIN else 0.0
        brighter += is_brighter
    scale = bits.view(np.float64)
    for j in range(pop):
        w[j] *= scale[j]
    for d in range(dim):
        pull[d] = _dot(w, xt[d], False)
    return _dot(w, w, True), brighter


@inner
def _norms(xs, sq, xt):
    """|x_j|^2 into sq and the population transposed into xt, per run (float64): O(N D) next
    to the pairs' O(N^2 D), so serial."""
    runs, pop, dim = xs.shape
    for run in range(runs):
        for j in range(pop):
            acc = 0.0
            for d in range(dim):
                acc += np.float64(xs[run, j, d]) * xs[run, j, d]
                xt[run, d, j] = xs[run, j, d]
            sq[run, j] = acc


@job
def _block(job, packed):
    """Block job % blocks of run job // blocks of a synchronous iteration: each firefly's move
    from xs, fs into xd, then the block's values into fd and its best. packed: the other
    arguments (flat: see `spread`). Both kernels call it through its CompiledJob (at 32 x 2
    the serial kernel's iteration took 6.2 us calling it against 6.0 with its body written
    out, EPYC, two rounds each)."""
    (xs, fs, xd, fd, sq, xt, lower, upper, alpha, beta0, gamma, given_r, f_in, fid, fdata, half, move, select, block_f,
     block_i, block_nan, key, step) = packed
    pop, dim = xs.shape[1], xs.shape[2]
    blocks = block_f.shape[1]
    run, b = job // blocks, job % blocks
    start, stop = b * BLOCK_ROWS, min(pop, (b + 1) * BLOCK_ROWS)
    if move:
        dot, w, bits, pull = np.empty(pop), np.empty(pop), np.empty(pop, np.int64), np.empty(dim)
        for i in range(start, stop):
            weight_sum, brighter = _attract(xs[run], fs[run], sq[run], xt[run], i, beta0, gamma, dot, w, bits, pull)
            for d in range(dim):
                xi = xs[run, i, d]
                moved = xi + (pull[d] - weight_sum * xi)
                if brighter:  # the brightest firefly gets no noise
                    if given_r.shape[0]:  # the test hook: the eager step's own U[0, 1) numbers
                        u = given_r[0, run, i, d]
                    else:
                        u = word_pair(key, run * pop + i, d, half, step, 0)[0]
                    moved += alpha * (2.0 * u - 1.0)
                xd[run, i, d] = min(max(moved, lower[d]), upper[d])
    if select:
        block_f[run, b], block_i[run, b], block_nan[run, b] = _select_rows(xd, fd, f_in, fid, fdata, run, start, stop,
                                                                           pop)


@njit(cache=True)
def _synchronous(xa, fa, xb, fb, sq, xt, lower, upper, alpha, beta0, gamma, given_r, f_in, fid, fdata, half, steps,
                 move, select, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan,
                 nan_evals, counter, key, block_job):
    """`steps` synchronous iterations on one thread, calling `_block` (block_job: its
    CompiledJob) for each block: on a new machine it compiles in a process of its own while
    this kernel compiles here."""
    xs, fs, xd, fd = xa, fa, xa, fa  # a select-only call: the population in place
    for k in range(steps):
        if move:  # read one buffer, write the other; the next step reads what this one wrote
            xs, fs, xd, fd = (xa, fa, xb, fb) if k % 2 == 0 else (xb, fb, xa, fa)
            _norms(xs, sq, xt)
        packed = (xs, fs, xd, fd, sq, xt, lower, upper, alpha, beta0, gamma, given_r, f_in, fid, fdata, half, move,
                  select, block_f, block_i, block_nan, key, counter[0])
        for job in range(xa.shape[0] * block_f.shape[1]):
            call_job(block_job, np.int64(job), packed)
        if move:
            it[0] += 1
        if select:
            _finish(xd, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals, k)
            counter[0] += 1


@njit(cache=True)
def _spread_synchronous(xa, fa, xb, fb, sq, xt, lower, upper, alpha, beta0, gamma, given_r, f_in, fid, fdata, half,
                        steps, move, select, best_x, best_f, hit, it, target, has_target, record, block_f, block_i,
                        block_nan, nan_evals, counter, key, block_job):
    """`steps` synchronous iterations, the blocks over the threads: `spread` calls `_block`
    (its CompiledJob) for each, so that on a new machine the job compiles in a process of its
    own while this function compiles here (the one parallel build it replaces took 2.7 s of
    1,024 x 32's 4.3 s of compiling on the development machine)."""
    xs, fs, xd, fd = xa, fa, xa, fa  # a select-only call: the population in place
    for k in range(steps):
        if move:  # read one buffer, write the other; the next step reads what this one wrote
            xs, fs, xd, fd = (xa, fa, xb, fb) if k % 2 == 0 else (xb, fb, xa, fa)
            _norms(xs, sq, xt)
        spread(xa.shape[0] * block_f.shape[1], block_job, (xs, fs, xd, fd, sq, xt, lower, upper, alpha, beta0, gamma,
                                                           given_r, f_in, fid, fdata, half, move, select, block_f,
                                                           block_i, block_nan, key, counter[0]))
        if move:
            it[0] += 1
        if select:
            _finish(xd, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals, k)
            counter[0] += 1


@kernel
def _sequential(x, f, lower, upper, alpha, beta0, gamma, given_r, f_in, fid, fdata, half, steps, move, select, best_x,
                best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals, counter, key):
    runs, pop, dim = x.shape
    blocks = block_f.shape[1]
    given = given_r.shape[0] > 0
    for k in range(steps):
        step = counter[0]
        for run in prange(runs):  # each run in place, firefly after firefly
            if move:
                for i in range(pop):
                    fi = f[run, i]  # brightness as evaluated at the generation's start
                    for j in range(pop):
                        if f[run, j] < fi:
                            r2 = 0.0
                            for d in range(dim):
                                gap = np.float64(x[run, i, d]) - x[run, j, d]
                                r2 += gap * gap
                            beta = beta0 * math.exp(-gamma * r2)
                            pair = (run * pop + i) * pop + j
                            w0 = w1 = np.uint64(0)
                            for d in range(dim):
                                if given:  # the test hook: the eager step's (runs, N, N, D) numbers
                                    u = given_r[0, run, i, j, d]
                                else:
                                    if d % 2 == 0:  # one Philox call per pair of coordinates
                                        c = np.uint64(pair * half + d // 2)
                                        w0, w1, _, _ = philox(key, c & _MASK, c >> np.uint64(32), step, 1)
                                    u = uniform(w0 if d % 2 == 0 else w1)
                                xi = x[run, i, d]
                                moved = xi + beta * (x[run, j, d] - xi) + alpha * (2.0 * u - 1.0)
                                x[run, i, d] = min(max(moved, lower[d]), upper[d])
            if select:
                for b in range(blocks):
                    block_f[run, b], block_i[run, b], block_nan[run, b] = _select_rows(
                        x, f, f_in, fid, fdata, run, b * BLOCK_ROWS, min(pop, (b + 1) * BLOCK_ROWS), pop)
        if move:
            it[0] += 1
        if select:
            _finish(x, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals, k)
            counter[0] += 1


class NativeFirefly(NativeIteration):
    """`Firefly`'s iterations on the CPU: sequential ones in place, synchronous ones
    alternating between the state's buffers and a second set (`_launch` returns the state
    that holds the new population)."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        super().__init__(problem, runs, algorithm.pop_size, target, seed)
        self.sequential = algorithm.update == "sequential"
        self.coef = tuple(float(c) for c in algorithm.coefficients(problem))  # absolute (alpha, beta0, gamma)
        if self.sequential:
            self.half = (problem.dim + 1) // 2  # Philox calls per pair (i, j)
        else:  # the CUDA kernel's coordinate pairs per row (its rows are padded to 16 or more for tl.dot)
            self.half = max(16, 1 << (problem.dim - 1).bit_length()) // 2
            self.sq = np.empty((runs, self.pop))  # |x_j|^2
            self.xt = np.empty((runs, problem.dim, self.pop))  # the population transposed, in float64
        self._job: tuple | None = None  # (what its types depend on, `_block`'s CompiledJob)

    def work(self) -> int:
        """An iteration's pairs, runs N^2 D (what a parallel region must repay)."""
        return self.runs * self.pop * self.pop * self.dim

    def parts(self) -> int:
        """Runs (sequentially: one thread a run), or blocks of rows of every run."""
        return self.runs if self.sequential else self.runs * self.blocks

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        v = self.view
        x = v(s.x)
        given = self.given_r
        given = v(given) if given is not None else np.empty((0,) * (5 if self.sequential else 4), x.dtype)
        common = (*self.coef, given, self.values_in(s, f_in), self.fitness, self.fdata, self.half, steps, move, select,
                  *self.common_args(best_x, hit, it, best_f, record))
        if self.sequential:
            self.kernel(_sequential)(x, v(s.f), self.lower, self.upper, *common)
            return s
        out = self.other_buffers(s) if move else s
        args = (x, v(s.f), v(out.x), v(out.f), self.sq, self.xt, self.lower, self.upper, *common)
        (_spread_synchronous if self.parallel() else _synchronous)(*args, self.block_job(args))
        if move and steps % 2:  # the new population is in out
            self.spare, s = s, out
        elif move:
            self.spare = out
        return s

    def block_job(self, args):
        """`_block`'s CompiledJob for the synchronous kernels and these arguments' types (compiled,
        or loaded from the disk cache, once per run set and dtype of the values handed in)."""
        (xa, fa, xb, fb, sq, xt, lower, upper, alpha, beta0, gamma, given, f_in, fid, fdata, half, *_, block_f,
         block_i, block_nan, nan_evals, counter, key) = args
        depends = (f_in.dtype, f_in.ndim, given.shape[0] == 0)
        if self._job is None or self._job[0] != depends:
            t, flag = typeof, types.boolean
            packed = types.Tuple((t(xa), t(fa), t(xa), t(fa), t(sq), t(xt), t(lower), t(upper), t(alpha), t(beta0),
                                  t(gamma), t(given), t(f_in), t(fid), t(fdata), t(half), flag, flag, t(block_f),
                                  t(block_i), t(block_nan), t(key), types.int64))
            self._job = (depends, compiled_jobs((_block, (types.int64, packed)))[0])
        return self._job[1]


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativeFirefly
