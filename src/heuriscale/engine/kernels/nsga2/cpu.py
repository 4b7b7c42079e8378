"""NSGA-II's generations as one Numba kernel: the native fast path of the CPU engine.

The math is `algorithms/nsga2.py`'s (with `genetic.py`'s operators and `pareto.py`'s
crowding), which stays the reference: the tests hand the kernel the eager step's own random
numbers and compare. One generation of one run (the runs spread over threads):

1. move: the binary tournament (two random permutations of P_t, the winner by rank, then
   crowding, then a coin), SBX of each pair and polynomial mutation of each child, into
   `children` (what `moved` hands to a problem evaluated between kernel calls); for the
   inline problems (ZDT, DTLZ: `cpu_moo_objectives.py`) their objectives;
2. select: R_t = P_t and the children, a point with a NaN or infinite objective made worse
   than every finite one; its fronts (`sorting.front_ranks`, with constrained
   domination), the crowding of the fronts that fill P_t+1, and P_t+1: the first N of R_t
   by rank, then larger crowding, then a random key (eager's order, so that the next
   generation pairs the same points).

Random numbers: Philox 4x32-10 keyed by the run set's key; per run and generation one row of
uniforms in the run's dtype, counters (q, run, generation, 0) for its words 4q..4q+3 (the
pairs' mating, crossing, SBX and exchange draws, then the children's mutation draws and
individual draws, as `UniformLayout` lays them out), and one row of float32 uniforms,
counters (q, run, generation, 1): the permutations' keys, the tournament coins and the
survival's tie keys. The test hook (`give`) writes the eager step's numbers into those rows.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch
from numba import prange

from ....algorithms.nsga2 import NSGA2, total_violation
from ....problems.compiled import call_row
from ..cpu_common import NativeIteration, as_written, kernel, native_view, stable_by, track_best
from ..cpu_jobs import inner
from ..cpu_moo_objectives import objective_buffers
from ..cpu_random import UNIT32, row_words, uniform
from .sorting import crowding, front_ranks, survival_order

IN_DTYPE, FLOAT32 = 0, 1  # Philox streams: the row in the run's dtype, the float32 row


@dataclass(frozen=True)
class UniformLayout:
    """Where each draw of a generation lies in a run's two rows of uniforms (n parents, D
    coordinates): in the run's dtype, per pair mates (pairs), cross, SBX u, exchange (pairs x
    D each), per child mutate, PM u (n x D each), individual (n); in float32 the permutations'
    keys (perms x n), the tournament coins (k) and the tie keys (2n)."""

    n: int
    dim: int

    @property
    def pairs(self) -> int:
        return (self.n + 1) // 2

    @property
    def perms(self) -> int:  # permutations of P_t for the 2k = 4 pairs contestants
        return math.ceil(4 * self.pairs / self.n)

    @property
    def width(self) -> int:
        return self.pairs * (1 + 3 * self.dim) + self.n * (2 * self.dim + 1)

    @property
    def width32(self) -> int:
        return self.perms * self.n + 2 * self.pairs + 2 * self.n


@inner
def _fill(row, key, run, step, stream, single):
    """row[:] = uniforms from Philox words, counters (q, run, step, stream) for words 4q..4q+3:
    float32 as the CUDA kernels convert (`uniform`), float64 as word x 2^-32."""
    L = row.shape[0]
    for q in range((L + 3) // 4):
        words = row_words(key, q, run, step, stream)
        for r in range(4):
            e = 4 * q + r
            if e < L:
                if single:
                    row[e] = uniform(words[r])
                else:
                    row[e] = np.float64(words[r]) * UNIT32
    return L


@inner
def _sbx(c1, c2, p1, p2, lower, upper, mates, cross, u, swap, coef):
    """`genetic.sbx` for one pair, in the run's dtype, eager's order of operations."""
    eta, p_c, p_var, p_exchange = coef[0], coef[1], coef[2], coef[3]
    T = c1.dtype.type
    one, two, half = T(1.0), T(2.0), T(0.5)
    e1, power = T(-(eta + 1.0)), T(1.0 / (eta + 1.0))
    mate = mates < T(p_c)
    for d in range(c1.shape[0]):
        a, b, lo, hi = p1[d], p2[d], lower[d], upper[d]
        crossed = mate and cross[d] < T(p_var) and abs(a - b) > T(1e-14) and lo != hi
        if not crossed:
            c1[d], c2[d] = min(max(a, lo), hi), min(max(b, lo), hi)
            continue
        y1, y2 = min(a, b), max(a, b)
        delta = y2 - y1
        ud = u[d]
        beta = one + two * (y1 - lo) / delta
        alpha = two - beta ** e1
        betaq = (ud * alpha if ud <= one / alpha else one / (two - ud * alpha)) ** power
        k1 = half * ((y1 + y2) - betaq * delta)
        beta = one + two * (hi - y2) / delta
        alpha = two - beta ** e1
        betaq = (ud * alpha if ud <= one / alpha else one / (two - ud * alpha)) ** power
        k2 = half * ((y1 + y2) + betaq * delta)
        first, second = (k1, k2) if a < b else (k2, k1)
        if (swap[d] < T(p_exchange)) != (a > b):
            first, second = second, first
        c1[d], c2[d] = min(max(first, lo), hi), min(max(second, lo), hi)


@inner
def _mutate(x, lower, upper, mutate, u, individual, coef):
    """`genetic.polynomial_mutation` of one child in place, in the run's dtype."""
    eta, p_m, p_individual = coef[4], coef[5], coef[6]
    T = x.dtype.type
    if not individual <= T(p_individual):
        return
    one, two, half = T(1.0), T(2.0), T(0.5)
    e1, power = T(eta + 1.0), T(1.0 / (eta + 1.0))
    for d in range(x.shape[0]):
        lo, hi = lower[d], upper[d]
        if not (mutate[d] < T(p_m) and lo != hi):
            continue
        span = hi - lo
        v, ud = x[d], u[d]
        if ud <= half:
            step = (two * ud + (one - two * ud) * (one - (v - lo) / span) ** e1) ** power - one
        else:
            step = one - (two * (one - ud) + two * (ud - half) * (one - (hi - v) / span) ** e1) ** power
        x[d] = min(max(v + step * span, lo), hi)


@inner
def _move(run, x, rank, crowd, children, child_f, U, U32, ints, lower, upper, coef, fid, fbuf, draw, single, key,
          step, nan_evals):
    """Part 1 for `run`: the tournament, SBX and PM into children[run]; inline objectives."""
    n, dim = x.shape[1], x.shape[2]
    pairs = (n + 1) // 2
    k = 2 * pairs
    perms = (2 * k + n - 1) // n
    if draw:
        _fill(U[run], key, run, step, np.int64(IN_DTYPE), single)
        _fill(U32[run], key, run, step, np.int64(FLOAT32), True)
    order, spare, winners = ints[run, 0], ints[run, 1], ints[run, 2]
    for p in range(perms):  # the permutations: each by its keys, a stable sort
        seg = order[p * n:(p + 1) * n]
        for t in range(n):
            seg[t] = t
        stable_by(seg, spare, n, U32[run, p * n:(p + 1) * n])
    coins = U32[run, perms * n:perms * n + k]
    for t in range(k):  # the crowded comparison <_n, a coin on equal rank and crowding
        a, b = order[2 * t], order[2 * t + 1]
        ra, rb, ca, cb = rank[run, a], rank[run, b], crowd[run, a], crowd[run, b]
        a_wins = ra < rb or (ra == rb and (ca > cb or (ca == cb and coins[t] < np.float32(0.5))))
        winners[t] = a if a_wins else b
    u = U[run]
    sbx0, pm0 = pairs, pairs * (1 + 3 * dim)
    for p in range(pairs):  # children: every first child, then every second (the last dropped for odd n)
        second = children[run, pairs + p] if pairs + p < n else children[run, 0].copy()
        _sbx(children[run, p], second, x[run, winners[2 * p]], x[run, winners[2 * p + 1]], lower, upper, u[p],
             u[sbx0 + p * dim:sbx0 + (p + 1) * dim], u[sbx0 + (pairs + p) * dim:sbx0 + (pairs + p + 1) * dim],
             u[sbx0 + (2 * pairs + p) * dim:sbx0 + (2 * pairs + p + 1) * dim], coef)
    for i in range(n):
        _mutate(children[run, i], lower, upper, u[pm0 + i * dim:pm0 + (i + 1) * dim],
                u[pm0 + (n + i) * dim:pm0 + (n + i + 1) * dim], u[pm0 + 2 * n * dim + i], coef)
    if fid:  # the inline objective, through its pointer: fbuf[run] = (address, alpha, the M values)
        M, flat, out = child_f.shape[2], children[run].reshape(n * dim), fbuf[run]
        address = np.int64(out[0])
        for i in range(n):
            call_row(address, flat, i * dim, dim, out)
            nan = False
            for m in range(M):
                nan = nan or out[2 + m] != out[2 + m]
                child_f[run, i, m] = out[2 + m]
            nan_evals[run] += nan


@inner
def _select(run, x, f, rank, crowd, viol, children, child_f, child_v, RX, RF, RV, rank2, crowd2, vals, S, U32, ints):
    """Part 2 for `run`: R_t, its fronts and crowding, and P_t+1 into the state."""
    n, dim, M = x.shape[1], x.shape[2], f.shape[2]
    T = RF.dtype.type
    inf = T(np.inf)
    for i in range(2 * n):  # R_t = P_t and Q_t; a non-finite row: +inf in every objective (finite_rows)
        src_x, src_f = (x[run, i], f[run, i]) if i < n else (children[run, i - n], child_f[run, i - n])
        for d in range(dim):
            RX[run, i, d] = src_x[d]
        finite = True
        for m in range(M):
            finite = finite and abs(src_f[m]) < inf
        for m in range(M):
            RF[run, i, m] = src_f[m] if finite else inf
        RV[run, i] = viol[run, i] if i < n else child_v[run, i - n]
    order, spare, members, start = ints[run, 0], ints[run, 1], ints[run, 3], ints[run, 4]
    fronts = front_ranks(RF[run], RV[run], rank2[run], order, spare, ints[run, 2], S[run])
    crowding(RF[run], rank2[run], fronts, n, crowd2[run], members, start, vals[run], order, spare)
    k = 2 * ((n + 1) // 2)  # the tournaments
    tie0 = (2 * k + n - 1) // n * n + k  # after the permutations' keys and the coins
    tie = U32[run, tie0:tie0 + 2 * n]
    survival_order(order, spare, 2 * n, rank2[run], crowd2[run], tie, vals[run])
    for t in range(n):
        i = order[t]
        for d in range(dim):
            x[run, t, d] = RX[run, i, d]
        for m in range(M):
            f[run, t, m] = RF[run, i, m]
        rank[run, t], crowd[run, t], viol[run, t] = rank2[run, i], crowd2[run, i], RV[run, i]


@kernel
def _generations(x, f, rank, crowd, viol, children, child_f, child_v, RX, RF, RV, rank2, crowd2, vals, S, U, U32, ints,
                 lower, upper, coef, fid, fbuf, draw, single, steps, move, select, best_x, best_f, hit, it, target, has_target,
                 record, nan_evals, counter, key):
    """`steps` generations of every run (`move`: part 1, `select`: part 2; both for inline
    objectives); the engine's bookkeeping: with one objective best-so-far, else its history
    row (best_f stays +inf: the fronts are read from the populations)."""
    runs, n, M = f.shape
    for k in range(steps):
        step = counter[0]
        if move:
            for run in prange(runs):
                _move(run, x, rank, crowd, children, child_f, U, U32, ints, lower, upper, coef, fid, fbuf, draw,
                      single, key, step, nan_evals)
            it[0] += 1
        if not select:
            continue
        for run in prange(runs):
            _select(run, x, f, rank, crowd, viol, children, child_f, child_v, RX, RF, RV, rank2, crowd2, vals, S,
                    U32, ints)
        for run in range(runs):
            if M == 1:  # an elitist GA: the population holds the best point so far
                i = 0
                for j in range(1, n):
                    if f[run, j, 0] < f[run, i, 0]:
                        i = j
                track_best(run, f[run, i, 0], x[run, i], best_x, best_f, hit, it, target, has_target, record, k)
            else:
                record[k, run] = best_f[run]
        counter[0] += 1


def unsupported(algorithm) -> str | None:
    """The kernel follows nsga2.py exactly: a subclass that changes its step has none."""
    return as_written(algorithm, (NSGA2,), "NSGA-II")


class NativeNSGA2(NativeIteration):
    """`NSGA2`'s generations on the CPU, in place on the state's buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        super().__init__(problem, runs, algorithm.pop_size, target, seed)
        n, dim, dtype = self.pop, self.dim, problem.lower.dtype
        self.M = max(1, int(problem.objectives))
        self.layout = UniformLayout(n, dim)
        p_m = 1.0 / dim if algorithm.p_m is None else algorithm.p_m
        self.coef = (float(algorithm.eta_c), float(algorithm.p_c), float(algorithm.p_var), float(algorithm.p_exchange),
                     float(algorithm.eta_m), float(p_m), float(algorithm.p_individual))
        np_dtype = torch.empty(0, dtype=dtype).numpy().dtype
        self.children = torch.zeros(runs, n, dim, dtype=dtype)  # what a problem evaluated between calls sees
        self.child_f = np.zeros((runs, n, self.M), np_dtype)
        self.child_v = np.zeros((runs, n), np_dtype)
        self.RX = np.zeros((runs, 2 * n, dim), np_dtype)
        self.RF = np.zeros((runs, 2 * n, self.M), np_dtype)
        self.RV = np.zeros((runs, 2 * n), np_dtype)
        self.rank2 = np.zeros((runs, 2 * n), np.int64)
        self.crowd2 = np.zeros((runs, 2 * n), np_dtype)
        self.vals = np.zeros((runs, 2 * n), np_dtype)
        self.S = np.zeros((runs, self.M, 2 * n), np_dtype)  # R_t's objectives in lexicographic order
        self.U = np.zeros((runs, self.layout.width), np_dtype)
        self.U32 = np.zeros((runs, self.layout.width32), np.float32)
        self.ints = np.zeros((runs, 5, max(2 * n, self.layout.perms * n) + 2), np.int64)
        #: Test hook: True once the eager step's numbers are written into U and U32 (`give`):
        #: the next launch reads them instead of drawing.
        self.given = False

    @functools.cached_property
    def objective(self) -> tuple[int, np.ndarray]:
        """(fid, fbuf): see `cpu_moo_objectives.objective_buffers`."""
        return objective_buffers(self.problem.inner, self.runs)

    def work(self) -> int:
        return self.runs * self.pop * max(self.pop, self.dim)  # the sort compares pairs of points

    def parts(self) -> int:
        return self.runs

    def moved(self, s) -> torch.Tensor:
        return self.children

    def advance(self, s, best_x, hit, it, best_f, steps: int, record: torch.Tensor):
        if self.fitness:
            return self._launch(s, best_x, hit, it, best_f, steps, record, True, True, None)
        rows = native_view(record)
        for k in range(steps):  # other problems: evaluated (and their constraints) between two calls
            self._launch(s, best_x, hit, it, best_f, 1, rows[k:k + 1], True, False, None)
            self._launch(s, best_x, hit, it, best_f, 1, rows[k:k + 1], False, True, self.evaluate_moved(s))
        return s

    def evaluate_moved(self, s):
        """The children's objectives (guarded: NaN counted, +inf) and total violations, into
        the buffers the select call reads."""
        f = self.problem.evaluate(self.children)
        self.child_f[:] = native_view(f.reshape(self.runs, self.pop, self.M).contiguous())
        self.child_v[:] = native_view(total_violation(self.problem, self.children).contiguous())
        return self.child_f

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        v = self.view
        runs, n = self.runs, self.pop
        draw = not self.given
        self.given = self.given and not select  # the hook's numbers serve one generation
        self.kernel(_generations)(
            v(s.x), v(s.f, (runs, n, self.M)), v(s.rank), v(s.crowding), v(s.violation), v(self.children),
            self.child_f, self.child_v, self.RX, self.RF, self.RV, self.rank2, self.crowd2, self.vals, self.S, self.U,
            self.U32, self.ints, self.lower, self.upper, self.coef, self.fitness, self.fdata, draw,
            self.U.dtype == np.float32, steps, move,
            select, *self.common_args(best_x, hit, it, best_f, record)[:7], self.nan_evals, v(self.counter), self.seed)
        return s

    def give(self, perm_keys, coins, mates, cross, u_sbx, swap, mutate, u_pm, individual, tie) -> None:
        """Test hook: the eager step's random numbers for the next generation, shaped as it
        draws them (perm_keys (runs, perms, n), coins (runs, k), ... tie (runs, 2n))."""
        runs = self.runs
        flat = lambda *t: torch.cat([a.reshape(runs, -1) for a in t], 1).numpy()  # noqa: E731
        self.U[:] = flat(mates, cross, u_sbx, swap, mutate, u_pm, individual)
        self.U32[:] = flat(perm_keys, coins, tie)
        self.given = True


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativeNSGA2
