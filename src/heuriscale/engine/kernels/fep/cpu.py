"""FEP's generations as Numba kernels: the native fast path of the CPU engine.

The math is `algorithms/fep.py`'s (paper 004, section 3, steps 3-6), which stays the
reference (the tests compare the two with the same random numbers); the random numbers are
the Triton kernels' (`cuda.py`), so the CPU and CUDA fast paths compute the same generations
from the same key. `_generations` runs `steps` generations per call, each in four parts:

1. per block of parents (prange): step 3, the mutation, into offspring buffers of their
   own, and step 4, the offspring's values: inline for the built-in functions, else the
   engine's problem evaluates `moved(s)` between a call with `move=True, select=False` and
   one with `move=False, select=True`;
2. per block of union members (prange), step 5: q opponents each, a win where f <= the
   opponent's f (member i is parent i for i < mu, else offspring i - mu);
3. per run (prange over runs), step 6: the survivors are the mu smallest keys
   (q - wins, f), eager's `survivors`, with ties in both broken by the lower union index
   (the Triton kernel's rule; eager's topk leaves such ties in no fixed order): levels
   q - wins are counted, and only the level that holds the mu-th survivor is sorted. Then
   the engine's bookkeeping (the union's best always survives: it wins every bout);
4. per block of survivors (prange): their rows gathered, in union order as the Triton
   kernel writes them, into the other of two population buffers, since the parents are
   read while the survivors are written; `_launch` returns the state that holds them.

Each part's work is a job (`cpu_jobs.py`): compiled once, for the serial and the parallel
build alike, and called through its address, so that a parallel build does not compile and
optimise it again in each of its loops (the parallel build took 12.6 s where the
serial one took 7.4; a call costs tens of nanoseconds, against microseconds of work). Part 1
is two jobs (the offspring, then their values NaN-guarded into the union), and the offspring
call their draws and inline values as jobs too: on a new machine each compiles in a process
of its own (the offspring's job, with its callees, was the longest compile: 2.7 s of 5.3).

Random numbers, Philox keyed by the run set's key, counters as in the Triton kernel: row
r = run * mu + p, coordinate pair j = d // 2 of a row padded to 2 * half coordinates, g the
generation. Counter (r * half + j, g, stream 0) gives words a, b, c, e, read as U[0,1)
numbers (tl.random.uint_to_uniform_float): c and e give N_j(0,1) of coordinates 2j and
2j + 1 by Box-Muller (radius sqrt(-2 log(1 - c)), angle 2 pi e: its cosine and its sine);
a and b give their delta_j, Cauchy tan((u - 1/2) pi) each, or for the Gaussian mutation
Box-Muller of (a, b) likewise. N(0,1) of individual r: words a, b of (r, g, stream 2).
Opponents 4k..4k + 3 of union member i: the high 32 bits of w * 2 mu for the words w = a,
b, c, e of (i, run, g, stream 3 + k). One Philox call thus serves two coordinates, or four
opponents.

Numba leaves `math.log`, `math.cos`... as scalar calls into libm, which would cost more
than the rest of a generation; these kernels take vectorisable polynomial versions instead
(`cpu_math.py`), in the run's dtype as the Triton kernels compute. The conversions, the move
and the objective terms fuse multiply-adds (`CONTRACT`), so their last bits depend on
whether the CPU has FMA (every x86-64 since 2013 and every 64-bit Arm has); the number of
threads never changes them.

What keeps these loops fast (one thread, mu 800, D = 32; measured on the 2-core AMD EPYC):
loops over a pass's coordinates, not over 32-coordinate rows (the move: rows took 1.3x as
long); slices indexed from 0 or unsigned indices (an index that could be negative gets a
wraparound check, which stops LLVM vectorising the loop: a row sum took 3x as long); FMA
(a generation took 1.1x as long without it).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from .. import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit, prange, typeof, types

from ....algorithms.fep import learning_rates
from ..cpu_common import BLOCK_ROWS, NativeIteration, copy_into, kernel, kth_smallest, track_best
from ..cpu_jobs import JobType, call_job, compiled_jobs, inner, job
from ..cpu_objectives import CEC2017, CEC2022, block_values, value_of
from ..cpu_random import philox, uniform
from .cpu_math import box_muller, cauchy, cos_turns, fast_exp, fast_sin, pi_error

#: Coordinates drawn per pass of `_draw` (the pass's numbers stay in L1 until used).
DRAW_COORDS = 2048
#: Multiply-adds fused (FMA) in the conversions, the move and the polynomials: one rounding
#: instead of two, and half the instructions of a Horner step. Only for functions that call
#: no objective: the inline objectives must stay bitwise equal to the problems', and Numba's
#: flag reaches the code a function calls (on `_mutate`, it changed the spring objective's
#: last bits: test_native.py's inline-vs-between-calls test failed).
CONTRACT = {"contract"}
#: Boxes within +-2^20 let the vectorised objectives reduce their arguments exactly.
FAST_BOX = 2.0**20

# -- the parts of a generation (error_model="numpy": no division checks, which stop LLVM vectorising) --
_LOW = np.uint64(0xFFFFFFFF)


@job(error_model="numpy", fastmath=CONTRACT)
def _draw_common(key, step, row0, row1, pi_err, n_i):
    """The Triton kernel's N(0,1) of rows row0..row1 (run * mu + p), one per individual."""
    for row in range(row0, row1):
        c = np.uint64(row)
        a, b, _, _ = philox(key, c & _LOW, c >> np.uint64(32), step, 2)
        n_i[row - row0], _ = box_muller(uniform(a), uniform(b), pi_err)


@job(error_model="numpy", fastmath=CONTRACT)
def _draw(key, step, row0, row1, half, gaussian, pi_err, delta, n_j, u):
    """The Triton kernel's delta_j and N_j(0,1) for rows row0..row1 (run * mu + p), rows
    padded to 2 * half coordinates. In passes that LLVM vectorises each on its own (as one
    loop it did less well): the Philox words, one call per pair of coordinates, into `u` as
    uniforms a, b (row 0) and c, e (row 1); then the pairs' conversions."""
    first, n = row0 * half, (row1 - row0) * half
    ua, ub, uc, ue = u[0, :n], u[0, n:2 * n], u[1, :n], u[1, n:2 * n]
    for t in range(n):
        pair = np.uint64(first + t)
        a, b, c, e = philox(key, pair & _LOW, pair >> np.uint64(32), step, 0)
        ua[t], ub[t], uc[t], ue[t] = uniform(a), uniform(b), uniform(c), uniform(e)
    for t in range(n):
        n_j[2 * t], n_j[2 * t + 1] = box_muller(uc[t], ue[t], pi_err)
    if gaussian:
        for t in range(n):
            delta[2 * t], delta[2 * t + 1] = box_muller(ua[t], ub[t], pi_err)
    else:
        for t in range(n):
            delta[2 * t], delta[2 * t + 1] = cauchy(ua[t], pi_err), cauchy(ub[t], pi_err)


# _mutate, _tournament and _gather have one call each, in their job: inlined there, their code
# is compiled and optimised once, not in a function of its own and again in the job.
@njit(cache=True, error_model="numpy", inline="always")
def _mutate(x, eta, cx, ceta, cf, lower, upper, tau, tau_prime, eta_min, pi_err, gaussian, run, p0, p1, step, key,
            half, given, drawn, scratch, fid, fdata, fast, helpers):
    """Step 3 for rows p0..p1 of `run`: offspring (x', eta') of parents (x, eta), some rows
    at a time (their numbers drawn into `scratch`, then used); for the built-in functions
    (fid > 0) also step 4, the rows' values while they are in L1. `lower` and `upper` hold
    the box repeated for as many rows as a pass takes. `helpers`: the CompiledJobs of
    `_draw_common`, `_draw` and `_values` (jobs of their own: each compiles beside the others
    on a new machine; a call per block or pass of rows costs nothing next to its work)."""
    pop, dim = x.shape[1], x.shape[2]
    draw_common, draw, values = helpers
    width = 2 * half
    rows = scratch.shape[1] // width
    delta, n_j, n_i, common, u = scratch[0], scratch[1], scratch[2], scratch[3], scratch[3:]  # n_i from p0
    if given is not None:  # the test hook: the eager step's N(0,1), delta_j and N_j(0,1)
        copy_into(n_i, given[2, run, p0:p1, 0])
    else:
        call_job(draw_common, key, step, run * pop + p0, run * pop + p1, pi_err, n_i)
        if drawn is not None:  # the test hook: keep the numbers drawn
            for p in range(p0, p1):
                drawn[2, run, p] = n_i[p - p0]
    for s0 in range(p0, p1, rows):
        s1 = min(s0 + rows, p1)
        if given is not None:
            for p in range(s1 - s0):
                copy_into(delta[p * dim:(p + 1) * dim], given[0, run, s0 + p])
                copy_into(n_j[p * dim:(p + 1) * dim], given[1, run, s0 + p])
        else:
            call_job(draw, key, step, run * pop + s0, run * pop + s1, half, gaussian, pi_err, delta, n_j, u)
            if width > dim:  # rows padded to width: their first dim numbers, packed (in order,
                for p in range(1, s1 - s0):  # so that no number is overwritten before it moves)
                    for d in range(dim):
                        delta[p * dim + d], n_j[p * dim + d] = delta[p * width + d], n_j[p * width + d]
            if drawn is not None:
                for p in range(s1 - s0):
                    copy_into(drawn[0, run, s0 + p], delta[p * dim:(p + 1) * dim])
                    copy_into(drawn[1, run, s0 + p], n_j[p * dim:(p + 1) * dim])
        for p in range(s1 - s0):  # tau' N(0,1), the individual's, for each of its coordinates
            common[p * dim:(p + 1) * dim] = tau_prime * n_i[s0 - p0 + p]
        _move(x[run, s0:s1].reshape(-1), eta[run, s0:s1].reshape(-1), cx[run, s0:s1].reshape(-1),
              ceta[run, s0:s1].reshape(-1), delta, n_j, common, lower, upper, tau, eta_min)
        if fid:
            call_job(values, fid, fdata, fast, cx[run], cf[run], s0, s1, delta)  # (delta's numbers are used)


@inner(error_model="numpy", fastmath=CONTRACT)
def _move(xs, es, cxs, ces, delta, n_j, common, lower, upper, tau, eta_min):
    """Step 3's equations for a pass's rows, as one loop over their coordinates (LLVM
    vectorises it whole; row by row, 32-coordinate loops took 1.3x as long)."""
    for t in range(xs.shape[0]):  # x'(j) = x(j) + eta(j) delta_j (the old eta), clipped to the box;
        cxs[t] = min(max(xs[t] + es[t] * delta[t], lower[t]), upper[t])
        # eta'(j) = eta(j) exp(tau' N(0,1) + tau N_j(0,1)), at least eta_min
        ces[t] = max(es[t] * fast_exp(common[t] + tau * n_j[t]), eta_min)


@inner(fastmath={"reassoc"})
def _sum(terms):
    """terms in float64, summed in the order the vectorised loop takes (fixed by the compiled
    code: the same on every call and any number of threads). (A slice, not an offset: with
    terms[start + d] the index could be negative, and its wraparound stops the vectorising.)"""
    acc = 0.0
    for d in range(terms.shape[0]):
        acc += np.float64(terms[d])
    return acc


@inner(error_model="numpy", fastmath=CONTRACT)
def _terms(fid, xs, terms):
    """The terms of paper 004's f1, f3-f5 at coordinates xs (a pass's rows one after another),
    in xs's dtype as eager computes them, by one loop LLVM vectorises (sines and cosines from
    `cpu_math.py`)."""
    T = xs.dtype.type
    n = xs.shape[0]
    if fid == 1:  # sphere
        for t in range(n):
            terms[t] = xs[t] * xs[t]
    elif fid == 3:  # rastrigin
        for t in range(n):
            terms[t] = xs[t] * xs[t] - T(10.0) * cos_turns(xs[t])
    elif fid == 6:  # rosenbrock: the pair (x_d, x_d+1); a row's last term pairs it with the next row, unused
        for t in range(n - 1):
            a, b = xs[t + 1] - xs[t] * xs[t], xs[t] - T(1.0)
            terms[t] = T(100.0) * (a * a) + b * b
    else:  # schwefel 2.26
        for t in range(n):
            terms[t] = -xs[t] * fast_sin(np.sqrt(np.abs(xs[t])))


@job(error_model="numpy")
def _values(fid, fdata, fast, x, f, p0, p1, terms):
    """f[p] = the inline objective `fid` at x[p] for rows p0..p1, through its pointer
    (cpu_objectives.py; float64; the CEC functions one call for the rows); but for paper
    004's f1, f3-f5 when `fast`, `_terms` first, then each row's terms summed in float64."""
    dim = x.shape[1]
    if fid == CEC2022 or fid == CEC2017:
        vals = np.empty(p1 - p0)
        block_values(fid, fdata, x[p0:p1].reshape(-1), dim, f, p0, vals)
        for p in range(p1 - p0):
            f[p0 + p] = vals[p]
        return
    if not fast or fid not in (1, 3, 6, 10):
        for p in range(p0, p1):
            f[p] = value_of(fid, x[p], fdata)
        return
    _terms(fid, x[p0:p1].reshape(-1), terms)
    summed, offset = (dim - 1, 0.0) if fid == 6 else (dim, 10.0 * dim if fid == 3 else 0.0)
    for p in range(p1 - p0):
        f[p0 + p] = offset + _sum(terms[p * dim:p * dim + summed])


@job
def _evaluate(job, cf, f, union_f, f_in, inline, block_nan):
    """Step 4's values of the rows of block `job` (run job // blocks), NaN -> +inf: the
    kernel's (inline) or the engine's problem's (f_in); with the parents', in union order;
    how many were NaN into block_nan. (Slices indexed from 0, so that no index can be
    negative: its wraparound would stop the vectorising.)"""
    pop, blocks = cf.shape[1], block_nan.shape[1]
    run, b = job // blocks, job % blocks
    p0, p1 = b * BLOCK_ROWS, min(pop, (b + 1) * BLOCK_ROWS)
    new, given = cf[run, p0:p1], f_in[run * pop + p0:run * pop + p1]  # (f_in: a placeholder if inline)
    parents, union_parents, union_children = f[run, p0:p1], union_f[run, p0:p1], union_f[run, pop + p0:pop + p1]
    nans = 0
    for t in range(p1 - p0):
        value = new[t] if inline else given[t]
        nan = value != value
        nans += nan
        value = np.inf if nan else value
        new[t], union_children[t], union_parents[t] = value, value, parents[t]
    block_nan[run, b] = nans


@njit(cache=True, error_model="numpy", inline="always")
def _tournament(f, wins, given, run, i0, i1, q, step, key, opponents):
    """Step 5 for union members i0..i1 of `run` (f, wins: the run's rows): wins against q
    opponents drawn uniformly from the union, with replacement. All opponents are drawn
    first (a loop LLVM vectorises; with the comparisons in it, it does not), as uint32: an
    unsigned index needs no wraparound, so the bouts' gathers vectorise."""
    m, n = f.shape[0], i1 - i0
    if given is not None:  # the test hook: the eager step's opponents, (runs, m q)
        for k in range(q):
            for r in range(n):
                opponents[k, r] = given[run, (i0 + r) * q + k]
    size = np.uint64(m)
    for k in range(0, q if given is None else 0, 4):  # four opponents per Philox call
        row0, row1, row2, row3 = opponents[k], opponents[k + 1], opponents[k + 2], opponents[k + 3]
        for r in range(n):  # uniform on [0, m): the high word of a 32 x 32-bit product
            a, b, c, e = philox(key, i0 + r, run, step, 3 + k // 4)
            row0[r], row1[r] = np.uint32((a * size) >> np.uint64(32)), np.uint32((b * size) >> np.uint64(32))
            row2[r], row3[r] = np.uint32((c * size) >> np.uint64(32)), np.uint32((e * size) >> np.uint64(32))
    mine, won = f[i0:i1], wins[i0:i1]
    won[:] = 0
    for k in range(q):  # bout k of every member: a loop over members, which vectorises (gathers)
        drawn = opponents[k]
        for r in range(n):
            won[r] += mine[r] <= f[drawn[r]]


@njit(cache=True)
def _survivors(f, wins, keep, q):
    """Step 6 for one run (its union's f and wins): into `keep`, in union order, the union
    indices of the mu smallest keys (q - wins, f), ties by index. Returns the index of the
    union's best member (the first on ties)."""
    m = f.shape[0]
    mu = m // 2
    count = np.empty(q + 1, np.int64)  # (loops, not np.zeros or np.argmin: each is more code to compile)
    count[:] = 0
    for i in range(m):
        count[q - wins[i]] += 1
    cut, below = 0, 0
    while below + count[cut] < mu:  # the level that holds the mu-th survivor
        below += count[cut]
        cut += 1
    at_cut = np.empty(count[cut], f.dtype)
    n = 0
    for i in range(m):
        if q - wins[i] == cut:
            at_cut[n] = f[i]
            n += 1
    need = mu - below  # to take at the cut level: all below the need-th smallest f there,
    limit = kth_smallest(at_cut, need - 1)  # then the first ones equal to it
    ties = need
    for v in at_cut:
        ties -= v < limit
    n = 0
    for i in range(m):
        level = q - wins[i]
        tie = level == cut and f[i] == limit and ties > 0
        if level < cut or (level == cut and f[i] < limit) or tie:
            keep[n] = i
            n += 1
            ties -= tie
    best = 0  # np.argmin(f): the first of the smallest, or the first NaN
    for i in range(m):
        if f[i] != f[i]:
            return i
        if f[i] < f[best]:
            best = i
    return best


@njit(cache=True, inline="always")
def _gather(x, eta, f, cx, ceta, cf, ox, oeta, of, keep, run, j0, j1):
    """Survivors j0..j1 of `run` (parents or offspring) into the other buffers (ox, oeta, of)."""
    mu, dim = x.shape[1], x.shape[2]
    for j in range(j0, j1):
        i = keep[run, j]
        if i < mu:
            of[run, j] = f[run, i]
            for d in range(dim):
                ox[run, j, d], oeta[run, j, d] = x[run, i, d], eta[run, i, d]
        else:
            of[run, j] = cf[run, i - mu]
            for d in range(dim):
                ox[run, j, d], oeta[run, j, d] = cx[run, i - mu, d], ceta[run, i - mu, d]


# -- the parallel loops' work, job by job: compiled once for both builds (see cpu_jobs.py) -------
@job(error_model="numpy")  # (the inlined _mutate's model)
def _offspring(job, blocks, step, select, x, eta, cx, ceta, cf, lower, upper, tau, tau_prime, eta_min, pi_err,
               gaussian, key, half, given_r, drawn_r, scratch, fid, fdata, fast, helpers):
    """Step 3 (and 4 for the built-in functions, if `select`) for block `job` (run
    job // blocks) of parents x, eta."""
    pop = x.shape[1]
    run, b = job // blocks, job % blocks
    p0, p1 = b * BLOCK_ROWS, min(pop, (b + 1) * BLOCK_ROWS)
    _mutate(x, eta, cx, ceta, cf, lower, upper, tau, tau_prime, eta_min, pi_err, gaussian, run, p0, p1, step, key, half,
            given_r, drawn_r, scratch[job], fid if select else 0, fdata, fast, helpers)


@job(error_model="numpy")  # (the inlined _tournament's)
def _tournaments(job, step, union_f, wins, given_opponents, q, key, opponents):
    """Step 5 for block `job` of union members (run job // union blocks)."""
    m = union_f.shape[1]
    union_blocks = (m + BLOCK_ROWS - 1) // BLOCK_ROWS
    run, b = job // union_blocks, job % union_blocks
    _tournament(union_f[run], wins[run], given_opponents, run, b * BLOCK_ROWS, min(m, (b + 1) * BLOCK_ROWS), q, step,
                key, opponents[job])


@job
def _selection(run, k, x, cx, union_f, wins, keep, q, block_nan, nan_evals, best_x, best_f, hit, it, target,
               has_target, record):
    """Step 6 for `run` and the engine's bookkeeping (the union's best always survives)."""
    pop = x.shape[1]
    i = _survivors(union_f[run], wins[run], keep[run], q)
    for b in range(block_nan.shape[1]):
        nan_evals[run] += block_nan[run, b]
    point = x[run, i] if i < pop else cx[run, i - pop]
    track_best(run, union_f[run, i], point, best_x, best_f, hit, it, target, has_target, record, k)


@job
def _gathering(job, blocks, x, eta, f, cx, ceta, cf, ox, oeta, of, keep):
    """The survivors of block `job` (run job // blocks) into the other buffers."""
    pop = x.shape[1]
    run, b = job // blocks, job % blocks
    _gather(x, eta, f, cx, ceta, cf, ox, oeta, of, keep, run, b * BLOCK_ROWS, min(pop, (b + 1) * BLOCK_ROWS))


@kernel
def _generations(xa, etaa, fa, xb, etab, fb, cx, ceta, cf, union_f, wins, keep, scratch, opponents, lower, upper,
                 tau, tau_prime, eta_min, pi_err, q, gaussian, given_r, given_opponents, drawn_r, f_in, fid, fdata,
                 fast, half, steps, move, select, best_x, best_f, hit, it, target, has_target, record, block_f, block_i,
                 block_nan, nan_evals, counter, key, jobs):
    """`steps` generations; the parents are in buffers a (x, eta, f), or in b after an odd
    number of selections. `jobs`: the parallel loops' CompiledJobs and the offspring's
    helpers (NativeFEP.jobs). Returns the number of selections."""
    runs, pop, dim = xa.shape
    blocks = block_nan.shape[1]
    union_blocks = (2 * pop + BLOCK_ROWS - 1) // BLOCK_ROWS
    offspring, evaluation, tournaments, selection, gathering, helpers = jobs
    flips = 0
    for k in range(steps):
        step = counter[0]
        x, eta, f, ox, oeta, of = (xa, etaa, fa, xb, etab, fb) if flips % 2 == 0 else (xb, etab, fb, xa, etaa, fa)
        for job in prange(runs * blocks):  # (3) mutation, (4) the offspring's values
            if move:
                call_job(offspring, np.int64(job), np.int64(blocks), step, select, x, eta, cx, ceta, cf, lower, upper,
                         tau, tau_prime, eta_min, pi_err, gaussian, key, half, given_r, drawn_r, scratch, fid, fdata,
                         fast, helpers)
            if select:
                call_job(evaluation, np.int64(job), cf, f, union_f, f_in, fid > 0, block_nan)
        if move:
            it[0] += 1
        if not select:
            continue
        for job in prange(runs * union_blocks):  # (5) q opponents for every member of the union
            call_job(tournaments, np.int64(job), step, union_f, wins, given_opponents, q, key, opponents)
        for run in prange(runs):  # (6) the mu with most wins; the engine's bookkeeping
            call_job(selection, np.int64(run), np.int64(k), x, cx, union_f, wins, keep, q, block_nan, nan_evals,
                     best_x, best_f, hit, it, target, has_target, record)
        for job in prange(runs * blocks):  # the survivors, into the other buffers
            call_job(gathering, np.int64(job), np.int64(blocks), x, eta, f, cx, ceta, cf, ox, oeta, of, keep)
        counter[0] += 1
        flips += 1
    return flips


class NativeFEP(NativeIteration):
    """`FEP`'s generations on the CPU; the population alternates between two buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        super().__init__(problem, runs, algorithm.pop_size, target, seed)
        dtype = problem.lower.dtype
        ftype = torch.empty(0, dtype=dtype).numpy().dtype.type
        tau, tau_prime = learning_rates(self.dim)
        eta_min = 0.0 if algorithm.eta_min is None else algorithm.eta_min  # (eta' >= 0 anyway)
        self.coef = tuple(ftype(c) for c in (tau, tau_prime, eta_min, pi_error(ftype)))
        self.q, self.gaussian = algorithm.q, algorithm.mutation == "gaussian"
        self.half = max(2, 1 << (self.dim - 1).bit_length()) // 2  # the Triton kernel's coordinate pairs per row
        shape = (runs, self.pop, self.dim)
        self.child_x, self.child_eta = torch.empty(shape, dtype=dtype), torch.empty(shape, dtype=dtype)
        self.child_f = torch.empty(runs, self.pop, dtype=dtype)
        self.union_f = np.empty((runs, 2 * self.pop), ftype)
        self.wins = np.empty((runs, 2 * self.pop), np.int64)
        self.keep = np.empty((runs, self.pop), np.int64)
        # Per job (block): the numbers of one pass of _mutate (delta_j, N_j(0,1), N(0,1), and
        # two rows of _draw's uniforms; then delta_j's row takes the pass's objective terms
        # and the first row of uniforms tau' N(0,1) per coordinate), the opponents of a block
        # of union members.
        width = 2 * self.half
        self.scratch = np.empty((runs * self.blocks, 5, max(1, min(DRAW_COORDS // width, self.pop)) * width), ftype)
        rows = self.scratch.shape[2] // width  # rows per pass of _mutate, and their bounds
        self.lower_rows, self.upper_rows = np.tile(self.lower, rows), np.tile(self.upper, rows)
        union_blocks = math.ceil(2 * self.pop / BLOCK_ROWS)
        q4 = -(-self.q // 4) * 4  # rows for every word of the Philox calls (q rounded up to 4s)
        self.opponents = np.empty((runs * union_blocks, q4, min(BLOCK_ROWS, 2 * self.pop)), np.uint32)
        box = max(float(abs(self.lower).max()), float(abs(self.upper).max()))
        self.fast = box < FAST_BOX  # offspring are clipped to the box
        # Test hooks, besides given_r: (3, runs, pop, dim) to store the numbers drawn in
        # (delta_j, N_j(0,1), N(0,1) repeated along dim; given_r takes the same), and
        # (runs, 2 pop q) opponents to use instead of Philox's.
        self.drawn_r: torch.Tensor | None = None
        self.given_opponents: torch.Tensor | None = None
        self._jobs: tuple | None = None  # (what their types depend on, the CompiledJobs), see `jobs`

    def moved(self, s) -> torch.Tensor:
        return self.child_x

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        out = self.other_buffers(s)
        v = self.view
        given_r, drawn_r, opponents = (None if t is None else v(t) for t in (self.given_r, self.drawn_r,
                                                                              self.given_opponents))
        args = (v(s.x), v(s.eta), v(s.f), v(out.x), v(out.eta), v(out.f), v(self.child_x), v(self.child_eta),
                v(self.child_f), self.union_f, self.wins, self.keep, self.scratch, self.opponents, self.lower_rows,
                self.upper_rows, *self.coef, self.q, self.gaussian, given_r, opponents, drawn_r,
                self.values_in(s, f_in), self.fitness, self.fdata, self.fast, self.half, steps, move, select,
                *self.common_args(best_x, hit, it, best_f, record))
        flips = self.kernel(_generations)(*args, self.jobs(args))
        self.spare = s if flips % 2 else out
        return out if flips % 2 else s

    def jobs(self, args) -> tuple:
        """The CompiledJobs of `_generations`' parallel loops for these arguments (compiled or
        loaded from disk once per run set and kind of launch: the test hooks and, for problems
        evaluated between calls, the values' dtype change their types). The mutation is a
        compile-time constant of the offspring's job: a run builds the one it draws."""
        (xa, etaa, fa, xb, etab, fb, cx, ceta, cf, union_f, wins, keep, scratch, opponents, lower, upper, tau,
         tau_prime, eta_min, pi_err, q, gaussian, given_r, given_opponents, drawn_r, f_in, fid, fdata, fast, half,
         steps, move, select, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan,
         nan_evals, counter, key) = args
        depends = (f_in.dtype, given_r is None, drawn_r is None, given_opponents is None)
        if self._jobs is None or self._jobs[0] != depends:
            t, i64, flag = typeof, types.int64, types.boolean
            x_t, f_t, pi_t = t(xa), t(fa), t(pi_err)
            gaussian_t = types.literal(bool(gaussian))  # (a constant: a run builds the mutation it draws)
            helpers = helper_specs(pi_err, gaussian, fid, fdata, fast)
            helpers_t = types.Tuple([JobType(argtypes) for _, argtypes in helpers])
            jobs = compiled_jobs(  # the longest first (see compiled_jobs)
                (_offspring, (
                    i64, i64, i64, flag, x_t, x_t, x_t, x_t, f_t, t(lower), t(upper), t(tau), t(tau_prime),
                    t(eta_min), pi_t, gaussian_t, i64, i64, t(given_r), t(drawn_r), t(scratch), t(fid), t(fdata),
                    t(fast), helpers_t)),
                (_tournaments, (i64, i64, t(union_f), t(wins), t(given_opponents), t(q), i64, t(opponents))),
                *helpers[1:],
                (_selection, (i64, i64, x_t, x_t, t(union_f), t(wins), t(keep), t(q), t(block_nan), t(nan_evals),
                              t(best_x), t(best_f), t(hit), t(it), t(target), t(has_target), t(record))),
                (_gathering, (i64, i64, x_t, x_t, f_t, x_t, x_t, f_t, x_t, x_t, f_t, t(keep))),
                (_evaluate, (i64, f_t, f_t, t(union_f), t(f_in), flag, t(block_nan))),
                helpers[0])
            offspring, tournaments, draw, values, selection, gathering, evaluation, draw_common = jobs
            self._jobs = (depends, (offspring, evaluation, tournaments, selection, gathering,
                                    (draw_common, draw, values)))
        return self._jobs[1]


def helper_specs(pi_err, gaussian: bool, fid, fdata, fast) -> tuple:
    """(job, argument types) of the offspring's helpers, `_draw_common`, `_draw` and
    `_values`, as `_mutate` calls them (64-bit integers; the run's float type)."""
    i64, pi_t = types.int64, typeof(pi_err)
    row, rows = types.Array(pi_t, 1, "C"), types.Array(pi_t, 2, "C")
    return ((_draw_common, (i64, i64, i64, i64, pi_t, row)),
            (_draw, (i64, i64, i64, i64, i64, types.literal(bool(gaussian)), pi_t, row, row, rows)),
            (_values, (typeof(fid), typeof(fdata), typeof(fast), rows, row, i64, i64, row)))


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativeFEP
