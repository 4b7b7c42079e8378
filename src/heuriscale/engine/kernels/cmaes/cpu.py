"""CMA-ES's generations as one Numba kernel: the native fast path of the CPU engine.

The math is `algorithms/cmaes.py`'s (Hansen's tutorial, equations numbered as there), which
stays the reference (the tests compare the two with eager's random numbers fed in through
the test hooks). A run's generation is a chain of small dense steps, so the parallel work is
whole runs. One generation:

1. per run (parallel): C = B D^2 B^T by LAPACK's symmetric eigensolver (Numba's
   np.linalg.eigh), eigenvalues floored at the dtype's tiny; lambda standard normal z_k,
   y_k = B D z_k (39), x_k = m + sigma y_k (40) projected onto the box, into the state's x
   (what `moved` hands to a problem evaluated between kernel calls); the inline objective's
   values;
2. per run (parallel): NaN -> +inf counted; the engine's bookkeeping; the ranking by
   f(clipped) + gamma |x - clipped|^2 (pycma's BoundPenalty, gamma from this generation's
   interquartile range; stable sorts, as eager's argsort(stable=True)); (41)-(47), C kept
   exactly symmetric (its upper triangle computed, mirrored); the best-value history; the
   restarts on Appendix B.3's criteria (`restarts=True`).

B is kept transposed (`Bt[j]` the j-th eigenvector, contiguous), so that y_k = sum_j d_j z_kj
b_j and B <z>_w are row sweeps that vectorise. LAPACK runs on one thread during a launch
(`_serial_lapack`): the runs are the parallel work.

Random numbers: Philox 4x32-10 keyed by the run set's key, counters
- (row * quads + q, 0, generation, NORMAL) for row = run * lambda + k: z_k's coordinates
  4q..4q+3, Box-Muller on words (a, b) and (c, e) read as 32-bit uniforms;
- (run * quads + q, 0, generation, RESTART): the new mean's uniforms of a restart, 4q..4q+3.

Test hooks: eager's numbers. The eigenvectors of LAPACK's builds differ in sign (torch's and
SciPy's did for about a third of random matrices), so the hook takes eager's sample rotated
into the problem's coordinates, w_k = B_eager z_k, which is N(0, I) too: the kernel's z_k =
B^T w_k, and y_k = B D B^T w_k = C^1/2 w_k, B z_k = w_k do not depend on the basis (nor on
its choice where eigenvalues are equal, as at the start on a box with equal sides).
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np
import torch
from numba import prange, typeof, types

from ....algorithms.cmaes import CMAES, TOL_CONDITION, TOL_FUN, TOL_X, TOL_X_UP, table1
from ..cpu_common import NativeIteration, as_written, kernel, stable_order, track_best
from ..cpu_jobs import JobType, call_job, compiled_jobs, inner, job
from ..cpu_objectives import block_values
from ..cpu_random import UNIT32, row_words

NORMAL, RESTART = 5, 6  # Philox streams (a key is one run set's, of one algorithm: no other kernel's draws)
TWO_PI = 2.0 * math.pi


@inner
def _normals(out, key, first, step):
    """Standard normal numbers into out (its length n): Box-Muller, two per pair of 32-bit
    words, one Philox call per four coordinates (counters first, first + 1, ...)."""
    T = out.dtype.type
    n = out.shape[0]
    for q in range((n + 3) // 4):
        a, b, c, e = row_words(key, first + q, 0, step, np.int64(NORMAL))
        r1 = math.sqrt(-2.0 * math.log(1.0 - np.float64(a) * UNIT32))
        r2 = math.sqrt(-2.0 * math.log(1.0 - np.float64(c) * UNIT32))
        t1, t2 = TWO_PI * np.float64(b) * UNIT32, TWO_PI * np.float64(e) * UNIT32
        values = (r1 * math.cos(t1), r1 * math.sin(t1), r2 * math.cos(t2), r2 * math.sin(t2))
        for i in range(4):
            if 4 * q + i < n:
                out[4 * q + i] = T(values[i])


@inner
def _finite(a):
    """True when every entry of the 2-D array a is a finite number."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if not math.isfinite(a[i, j]):
                return False
    return True


# -- the parallel loops' work, job by job: compiled once for both builds (see cpu_jobs.py) -------
@job(error_model="numpy")  # IEEE arithmetic, as eager: x / 0 is inf or NaN, not an error
def _sample(run, x, mean, sigma, C, z, y, Bt, d, given_w, lower, upper, vals, f_in, fid, fdata, key, step, select,
            tiny):
    """Part 1 for `run`: eigendecomposition, lambda samples into x (flat rows), their values."""
    lam, n = vals.shape[1], lower.shape[0]
    T = x.dtype.type
    if _finite(C[run]):  # (LAPACK refuses NaN and inf: a broken run samples NaN, which its restart catches)
        d2, V = np.linalg.eigh(C[run])  # ascending, as torch.linalg.eigh
        for j in range(n):
            d[run, j] = T(math.sqrt(max(d2[j], tiny)))
            for i in range(n):
                Bt[run, j, i] = V[i, j]
    else:
        for j in range(n):
            d[run, j] = T(np.nan)
            for i in range(n):
                Bt[run, j, i] = T(np.nan)
    quads = (n + 3) // 4
    s = sigma[run]
    for k in range(lam):
        zk, yk, xk = z[run, k * n:(k + 1) * n], y[run, k * n:(k + 1) * n], x[run, k * n:(k + 1) * n]
        if given_w.shape[0]:  # the test hook: eager's B z_k, into this basis
            w = given_w[run, k * n:(k + 1) * n]
            for j in range(n):
                acc = T(0.0)
                for i in range(n):
                    acc += Bt[run, j, i] * w[i]
                zk[j] = acc
        else:
            _normals(zk, key, (run * lam + k) * quads, step)  # (38)
        for i in range(n):
            yk[i] = T(0.0)
        for j in range(n):  # (39) y_k = B D z_k
            c = zk[j] * d[run, j]
            for i in range(n):
                yk[i] += c * Bt[run, j, i]
        for i in range(n):  # (40), projected onto the box
            xk[i] = min(max(mean[run, i] + s * yk[i], lower[i]), upper[i])
    if fid and select:
        block_values(fid, fdata, x[run], n, f_in, 0, vals[run])


@inner(error_model="numpy")
def _restart_due(run, g_before, f, mean, sigma, C, p_c, best_hist, g, Bt, d, sigma0):
    """Appendix B.3's criteria that eager checks, on the updated state of `run` (d, Bt: this
    generation's eigendecomposition; g_before: the generations before it)."""
    lam, n = f.shape[1], mean.shape[1]
    T = mean.dtype.type
    s = sigma[run]
    if not math.isfinite(s):
        return True
    for i in range(n):
        if not math.isfinite(mean[run, i]):
            return True
    if not _finite(C[run]):
        return True
    H = best_hist.shape[1]
    if g[run] >= H:  # TolFun
        lo, hi = best_hist[run, 0], best_hist[run, 0]
        for h in range(H):
            lo, hi = min(lo, best_hist[run, h]), max(hi, best_hist[run, h])
        f_lo, f_hi = f[run, 0], f[run, 0]
        for k in range(lam):
            f_lo, f_hi = min(f_lo, f[run, k]), max(f_hi, f[run, k])
        if hi - lo < T(TOL_FUN) and f_hi - f_lo < T(TOL_FUN):
            return True
    small, tiny_path, widest, no_coord = True, True, T(0.0), False
    for i in range(n):
        std = s * T(math.sqrt(max(C[run, i, i], T(0.0))))
        small = small and std < T(TOL_X) * sigma0
        tiny_path = tiny_path and s * abs(p_c[run, i]) < T(TOL_X) * sigma0
        widest = max(widest, std)
        no_coord = no_coord or mean[run, i] + T(0.2) * std == mean[run, i]
    if (small and tiny_path) or widest > T(TOL_X_UP) * sigma0 or no_coord:  # TolX, TolXUp, NoEffectCoord
        return True
    d_lo, d_hi = d[run, 0], d[run, 0]
    for j in range(n):
        d_lo, d_hi = min(d_lo, d[run, j]), max(d_hi, d[run, j])
    if (d_hi / d_lo) ** 2 > T(TOL_CONDITION):  # ConditionCov
        return True
    axis = g_before % n  # NoEffectAxis: 0.1 sigma d_i b_i, i = g mod n
    step = T(0.1) * s
    for i in range(n):
        if mean[run, i] + step * (Bt[run, axis, i] * d[run, axis]) != mean[run, i]:
            return False
    return True


@job(error_model="numpy")
def _rank(run, f, x, y, mean, sigma, C, keys, order, spare):
    """The ranking of `run`'s samples into order[run] (i:lambda, i = 1..mu first): f(clipped) +
    gamma |x - clipped|^2 (pycma's BoundPenalty, gamma from the interquartile range of f)."""
    lam, n = f.shape[1], mean.shape[1]
    T = mean.dtype.type
    s = sigma[run]
    stable_order(f[run], order[run], spare[run])  # the interquartile range of f, BoundPenalty's weight
    iqr = f[run, order[run, min(3 * (lam + 1) // 4, lam - 1)]] - f[run, order[run, (lam + 1) // 4]]
    diag = T(0.0)
    for i in range(n):
        diag += C[run, i, i]
    var = s ** 2 * (diag / T(n))
    gamma = (T(2.0) * iqr if (math.isfinite(iqr) and iqr > 0) else T(1.0)) / var
    for j in range(lam):  # ranking key: f(clipped) + gamma |x - clipped|^2
        outside = T(0.0)
        for i in range(n):
            u = mean[run, i] + s * y[run, j * n + i] - x[run, j * n + i]
            outside += u * u
        keys[run, j] = f[run, j] + (gamma * outside if outside > 0 else T(0.0))
    stable_order(keys[run], order[run], spare[run])


@job(error_model="numpy")
def _adapt(run, mean, sigma, C, p_sigma, p_c, g, y, z, Bt, R, order, vec, coef, weights):
    """(41)-(47) for `run`, its samples ranked in order[run]; C kept exactly symmetric."""
    mu, c_m, c_s, d_s, c_c, c_1, c_mu, chi_n, mu_eff, restarts = coef
    n = mean.shape[1]
    T = mean.dtype.type
    s = sigma[run]
    y_w, z_w, bz = vec[run, 0], vec[run, 1], vec[run, 2]
    for i in range(n):
        y_w[i], z_w[i], bz[i] = T(0.0), T(0.0), T(0.0)
    w_sum = T(0.0)
    for r in range(mu):  # (41), and <z>_w
        row, w = order[run, r], weights[r]
        w_sum += w
        for i in range(n):
            y_w[i] += w * y[run, row * n + i]
            z_w[i] += w * z[run, row * n + i]
    for j in range(n):  # C^-1/2 <y>_w = B <z>_w
        for i in range(n):
            bz[i] += z_w[j] * Bt[run, j, i]
    cs_mu = T(math.sqrt(c_s * (2 - c_s) * mu_eff))
    norm2 = T(0.0)
    for i in range(n):
        mean[run, i] = mean[run, i] + T(c_m) * s * y_w[i]  # (42)
        p_sigma[run, i] = T(1 - c_s) * p_sigma[run, i] + cs_mu * bz[i]  # (43)
        norm2 += p_sigma[run, i] * p_sigma[run, i]
    norm = T(math.sqrt(norm2))
    sigma[run] = s * T(math.exp(T(c_s / d_s) * (norm / T(chi_n) - T(1.0))))  # (44)
    stall = T(1.0) - T(1 - c_s) ** T(2 * (g[run] + 1))
    h_sigma = T(1.0) if norm / T(math.sqrt(stall)) < T((1.4 + 2 / (n + 1)) * chi_n) else T(0.0)
    cc_mu = h_sigma * T(math.sqrt(c_c * (2 - c_c) * mu_eff))
    for i in range(n):  # (45)
        p_c[run, i] = T(1 - c_c) * p_c[run, i] + cc_mu * y_w[i]
    delta = (T(1.0) - h_sigma) * T(c_c * (2 - c_c))
    keep = T(1.0) + T(c_1) * delta - T(c_1) - T(c_mu) * w_sum
    Rr = R[run]
    for i in range(n):
        for j in range(i, n):
            Rr[i, j] = T(0.0)
    for r in range(mu):  # sum_i w_i y_i y_i^T, upper triangle (row by row: it vectorises)
        row, w = order[run, r], weights[r]
        yr = y[run, row * n:(row + 1) * n]
        for i in range(n):
            c = w * yr[i]
            for j in range(i, n):
                Rr[i, j] += c * yr[j]
    for i in range(n):  # (47), the upper triangle mirrored: C stays exactly symmetric
        for j in range(i, n):
            value = keep * C[run, i, j] + T(c_1) * (p_c[run, i] * p_c[run, j]) + T(c_mu) * Rr[i, j]
            C[run, i, j] = value
            C[run, j, i] = value


@job(error_model="numpy")
def _restart(run, g_before, f, mean, sigma, C, p_sigma, p_c, best_hist, g, restarted, Bt, d, given_mean, lower,
             upper, start, key, step):
    """Appendix B.3's restart of `run` where its criteria say so (`_restart_due`): a uniform
    mean in the box (stream RESTART), sigma0, C0, empty paths and history."""
    n = mean.shape[1]
    T = mean.dtype.type
    if not _restart_due(run, g_before, f, mean, sigma, C, p_c, best_hist, g, Bt, d, start[n]):
        return
    quads = (n + 3) // 4
    for q in range(quads):
        words = row_words(key, run * quads + q, 0, step, np.int64(RESTART))
        for t in range(4):
            i = 4 * q + t
            if i < n:
                u = given_mean[run, i] if given_mean.shape[0] else T(np.float64(words[t]) * UNIT32)
                mean[run, i] = min(lower[i] + (upper[i] - lower[i]) * u, upper[i])
    sigma[run] = start[n]
    for i in range(n):
        p_sigma[run, i], p_c[run, i] = T(0.0), T(0.0)
        for j in range(n):
            C[run, i, j] = start[i] if i == j else T(0.0)
    for h in range(best_hist.shape[1]):
        best_hist[run, h] = np.inf
    g[run] = 0
    restarted[run] += 1


@job(error_model="numpy")
def _update(run, k, state, buffers, given_mean, coef, weights, lower, upper, start, f_in, fid, key, step, books,
            helpers):
    """Part 2 for `run`: values, bookkeeping, then the ranking, (41)-(47), the history and the
    restart, the first two and the last called as jobs (`helpers`: `_rank`'s, `_adapt`'s,
    `_restart`'s CompiledJobs; apart, each compiles in a process of its own on a new machine).
    state: CMAESState's arrays (x, f flat as the kernel keeps them); start: C0's diagonal, then
    sigma0."""
    x, f, mean, sigma, C, p_sigma, p_c, g, best_hist, restarted = state
    z, y, Bt, d, R, keys, order, spare, vals, vec = buffers
    best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals = books
    ranking, adaptation, restart = helpers
    lam, n = f.shape[1], mean.shape[1]
    best, best_i, nans = np.inf, 0, 0
    for i in range(lam):  # the values: NaN -> +inf, counted
        value = vals[run, i] if fid else np.float64(f_in[run * lam + i])
        if value != value:
            value, nans = np.inf, nans + 1
        f[run, i] = value
        if f[run, i] < best:
            best, best_i = f[run, i], i
    nan_evals[run] += nans
    track_best(run, best, x[run, best_i * n:(best_i + 1) * n], best_x, best_f, hit, it, target, has_target, record, k)
    call_job(ranking, run, f, x, y, mean, sigma, C, keys, order, spare)
    call_job(adaptation, run, mean, sigma, C, p_sigma, p_c, g, y, z, Bt, R, order, vec, coef, weights)
    H = best_hist.shape[1]
    g_before = g[run]
    best_hist[run, g_before % H] = best
    g[run] = g_before + 1
    if coef[-1]:  # restarts (NativeCMAES.coef ends with the flag)
        call_job(restart, run, g_before, f, mean, sigma, C, p_sigma, p_c, best_hist, g, restarted, Bt, d, given_mean,
                 lower, upper, start, key, step)


@kernel
def _generations(state, buffers, hooks, coef, weights, lower, upper, start, tiny, f_in, fid, fdata, steps, move,
                 select, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals,
                 counter, key, jobs):
    """`steps` generations. `jobs`: the two parallel loops' CompiledJobs and the second one's
    helpers (NativeCMAES.jobs)."""
    x, f, mean, sigma, C = state[0], state[1], state[2], state[3], state[4]
    z, y, Bt, d, vals = buffers[0], buffers[1], buffers[2], buffers[3], buffers[8]
    given_w, given_mean = hooks
    runs = f.shape[0]
    books = (best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals)
    sample, update, helpers = jobs  # (apart: a parallel loop takes no tuple holding a tuple)
    for k in range(steps):
        step = counter[0]
        if move:
            for run in prange(runs):  # (1) eigendecomposition, samples, values
                call_job(sample, np.int64(run), x, mean, sigma, C, z, y, Bt, d, given_w, lower, upper, vals, f_in,
                         fid, fdata, key, step, select, tiny)
            it[0] += 1
        if not select:
            continue
        for run in prange(runs):  # (2) bookkeeping and the update
            call_job(update, np.int64(run), np.int64(k), state, buffers, given_mean, coef, weights, lower, upper,
                     start, f_in, fid, key, step, books, helpers)
        counter[0] += 1


@functools.cache
def _lapack_threads() -> tuple:
    """(get, set) of the thread count of each BLAS/LAPACK library loaded (Numba's eigh calls
    SciPy's LAPACK), by threadpoolctl. The kernel spreads runs over threads itself; LAPACK's
    own threads on one 100 x 100 eigh made it 30x slower (17 ms against 0.54 on the 2-core
    machine)."""
    import scipy.linalg.cython_lapack  # noqa: F401  (loaded, so that threadpoolctl finds its library)
    import threadpoolctl

    libs = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
    return tuple((lib.get_num_threads, lib.set_num_threads) for lib in libs)


@contextlib.contextmanager
def _serial_lapack():
    """LAPACK on one thread for the duration (2-3 us a launch), then as it was."""
    controls = _lapack_threads()
    before = [get() for get, _ in controls]
    for _, put in controls:
        put(1)
    try:
        yield
    finally:
        for (_, put), count in zip(controls, before):
            put(count)


def unsupported(algorithm) -> str | None:
    """The kernel follows cmaes.py exactly: a subclass that changes its hooks has none."""
    if (reason := as_written(algorithm, (CMAES,), "CMA-ES")) is not None:
        return reason
    if algorithm.ipop:
        return ("the native kernel runs whole generations of one population; IPOP's restarts grow it "
                "(restarts=True with pop_increase > 1): use engine='eager', or pop_increase=1 to restart at the "
                "same population")
    return None


class NativeCMAES(NativeIteration):
    """`CMAES`'s generations on the CPU, in place on the state's buffers."""

    def __init__(self, algorithm, problem, runs: int, target: float | None, seed: int) -> None:
        lam = algorithm.pop_size if algorithm.pop_size is not None else algorithm.default_pop(problem.dim)
        super().__init__(problem, runs, lam, target, seed)
        n, dtype = self.dim, problem.lower.dtype
        P = table1(n, lam)
        self.coef = (int(P["mu"]), P["c_m"], P["c_sigma"], P["d_sigma"], P["c_c"], P["c_1"], P["c_mu"], P["chi_n"],
                     P["mu_eff"], bool(algorithm.restarts))
        mu = P["mu"]  # (49), (53) as eager makes them, in the run's dtype
        w = math.log((lam + 1) / 2) - torch.log(torch.arange(1, mu + 1, dtype=dtype))
        self.weights = (w / w.sum()).numpy()
        sigma0, C0 = algorithm._start(problem, 1)
        sigma0_ = sigma0[0] if algorithm.sigma0 is None else torch.tensor(algorithm.sigma0, dtype=dtype)
        self.start = torch.cat([C0[0].diagonal(), sigma0_.reshape(1).to(dtype)]).contiguous().numpy()
        ftype = self.block_f.dtype
        self.tiny = np.finfo(ftype).tiny  # eager's floor of the eigenvalues (a NumPy scalar of the dtype)
        self.z, self.y = np.empty((runs, lam * n), ftype), np.empty((runs, lam * n), ftype)
        self.Bt, self.R = np.empty((runs, n, n), ftype), np.empty((runs, n, n), ftype)
        self.d = np.empty((runs, n), ftype)
        self.keys = np.empty((runs, lam), ftype)
        self.order, self.sort_spare = np.zeros((runs, lam), np.int64), np.zeros((runs, lam), np.int64)
        self.vals = np.empty((runs, lam))
        self.vec = np.empty((runs, 3, n), ftype)
        # Test hooks: eager's numbers, (runs, lambda, n) its B z_k (see the module's docstring),
        # (runs, n) the restart's uniforms.
        self.given_w: torch.Tensor | None = None
        self.given_mean: torch.Tensor | None = None
        self.no_rows = np.empty((0, 0), ftype)
        self._jobs: tuple | None = None

    def work(self) -> int:
        """A generation's work: an n^3 eigendecomposition and lambda n^2 for the samples, per
        run; the parallel work is whole runs, so one run takes the serial build."""
        return self.runs * (self.dim ** 3 + self.pop * self.dim ** 2) if self.runs > 1 else 0

    def _launch(self, s, best_x, hit, it, best_f, steps, record, move, select, f_in):
        v, flat = self.view, (self.runs, self.pop * self.dim)
        state = (v(s.x, flat), v(s.f), v(s.mean), v(s.sigma), v(s.C), v(s.p_sigma), v(s.p_c), v(s.g), v(s.best_hist),
                 v(s.restarted))
        buffers = (self.z, self.y, self.Bt, self.d, self.R, self.keys, self.order, self.sort_spare, self.vals,
                   self.vec)
        hooks = (v(self.given_w.contiguous(), flat) if self.given_w is not None else self.no_rows,
                 v(self.given_mean.contiguous()) if self.given_mean is not None else self.no_rows)
        args = (state, buffers, hooks, self.coef, self.weights, self.lower, self.upper, self.start, self.tiny,
                self.values_in(s, f_in), self.fitness, self.fdata, steps, move, select,
                *self.common_args(best_x, hit, it, best_f, record))
        with _serial_lapack() if move else contextlib.nullcontext():  # (move: the eigendecompositions)
            self.kernel(_generations)(*args, self.jobs(args))
        return s

    def jobs(self, args) -> tuple:
        """The CompiledJobs of `_generations`' two parallel loops and the tuple of the second
        one's helpers, for these arguments' types (compiled, or loaded from the disk cache,
        once per run set and kind of launch)."""
        (state, buffers, hooks, coef, weights, lower, upper, start, tiny, f_in, fid, fdata, steps, move, select, best_x,
         best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals, counter, key) = args
        depends = (f_in.dtype, f_in.ndim, record.ndim, record.flags.c_contiguous)
        if self._jobs is None or self._jobs[0] != depends:
            t, i64 = typeof, types.int64
            x, f, mean, sigma, C, p_sigma, p_c, g, best_hist, restarted = state
            z, y, Bt, d, R, keys, order, spare, vals, vec = buffers
            books = t((best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan, nan_evals))
            helper_specs = (  # `_update`'s jobs, in the order it takes them
                (_rank, (i64, t(f), t(x), t(y), t(mean), t(sigma), t(C), t(keys), t(order), t(spare))),
                (_adapt, (i64, t(mean), t(sigma), t(C), t(p_sigma), t(p_c), t(g), t(y), t(z), t(Bt), t(R),
                          t(order), t(vec), t(coef), t(weights))),
                (_restart, (i64, t(g).dtype, t(f), t(mean), t(sigma), t(C), t(p_sigma), t(p_c), t(best_hist),
                            t(g), t(restarted), t(Bt), t(d), t(hooks[1]), t(lower), t(upper), t(start), i64, i64)))
            helpers_t = types.Tuple([JobType(argtypes) for _, argtypes in helper_specs])
            sample, restart, adaptation, ranking, update = compiled_jobs(  # the longest first (see compiled_jobs)
                (_sample, (i64, t(x), t(mean), t(sigma), t(C), t(z), t(y), t(Bt), t(d), t(hooks[0]),
                           t(lower), t(upper), t(vals), t(f_in), i64, t(fdata), i64, i64, types.boolean,
                           t(tiny))),
                helper_specs[2],
                helper_specs[1],
                helper_specs[0],
                (_update, (i64, i64, t(state), t(buffers), t(hooks[1]), t(coef), t(weights), t(lower),
                           t(upper), t(start), t(f_in), i64, i64, i64, books, helpers_t)))
            self._jobs = (depends, (sample, update, (ranking, adaptation, restart)))
        return self._jobs[1]


#: The host side the engine builds for this algorithm (see engine/kernels/__init__.py).
ITERATION = NativeCMAES
