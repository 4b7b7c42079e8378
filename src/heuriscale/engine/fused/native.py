"""What the native CPU iterations (Numba) share: Philox draws, inline objectives, the
engine's best-so-far bookkeeping, serial and parallel builds of each kernel, and the host
side that drives them.

Each algorithm's CPU kernel (`<algorithm>/cpu.py`) is one function advancing every run by
`steps` iterations in one call, on NumPy views of the run set's torch tensors (no copies),
in place. Work goes out in blocks of rows (`BLOCK_ROWS` individuals of one run) through
`prange`; each block writes its best new value and its NaN count, and a serial pass per run
reduces the blocks and does the bookkeeping, as the CUDA kernels do. The objective is
computed inline for the built-in functions (`INLINE`); any other problem is evaluated by
the engine between two calls of the same kernel (`move=True, select=False`, then
`move=False, select=True`).

Random numbers are counter-based: Philox 4x32-10 keyed by the run set's key, with the
counter naming the individual, coordinate, iteration and stream. A number therefore does
not depend on which thread draws it, or on how many threads there are: the same seed gives
the same runs on 1 or 16 threads. The counter layouts are the Triton kernels', so where an
algorithm has both, the CPU and CUDA fast paths draw the same numbers.

Numba compiles a kernel on its first call for each dtype and caches the machine code on
disk beside the source (`cache=True`); later processes load it in milliseconds.
"""

from __future__ import annotations

import math
import time
import types

import numba
import numpy as np
import torch
from numba import njit

from ...problems import classic
from . import native_loaded
from ...problems.classic import ClassicProblem

#: Individuals of one run per block of parallel work (one block's best is kept per call).
BLOCK_ROWS = 256
#: Below this many coordinates per iteration (runs x pop x dim) one thread is faster: a
#: parallel region costs a few microseconds to open (measured: about 1 us on one thread,
#: 3 us on two).
PARALLEL_MIN = 8192

#: Built-in objectives computed inside the kernels; 0 means "evaluated by the problem".
INLINE = {
    classic.sphere: 1, classic.euclidean: 2, classic.rastrigin: 3, classic.ackley: 4, classic.griewank: 5,
    classic.rosenbrock: 6, classic.schwefel_1_2: 7, classic.schwefel_2_21: 8, classic.schwefel_2_22: 9,
    classic.schwefel_2_26: 10, classic.step: 11, classic.zakharov: 12, classic.levy: 13, classic.bent_cigar: 14,
    classic.elliptic: 15, classic.hgbat: 16,
}


#: Application problems computed inside the kernels from their data (`inline_objective`).
SPRING_PENALTY, SPRING_DEB, OTSU = 17, 18, 19


def inline_objective(problem) -> tuple[int, np.ndarray]:
    """(fid, fdata): the objective the kernels compute inline, 0 for one the engine evaluates
    between kernel calls, and the float64 data it reads: the spring design's penalty weight
    or Deb offset, Otsu's cumulative sums omega and mu (257 each, as `OtsuThresholding` keeps
    them). Exact types only: a subclass may change the objective."""
    from ...problems.constraints import Constrained
    from ...problems.engineering import SpringDesign
    from ...problems.otsu import OtsuThresholding

    if type(problem) is ClassicProblem:
        return INLINE.get(problem.fn, 0), NO_DATA
    if type(problem) is Constrained and type(problem.inner) is SpringDesign:
        penalty = problem.method == "penalty"
        return (SPRING_PENALTY if penalty else SPRING_DEB), np.array([problem.weight if penalty else problem.offset])
    if type(problem) is OtsuThresholding:
        sums = torch.cat([problem.omega, problem.mu]).to("cpu", torch.float64)
        return OTSU, sums.numpy().copy()
    return 0, NO_DATA


#: fdata of objectives that need none.
NO_DATA = np.zeros(1)


def kernel(fn):
    """`fn` compiled twice, one thread (`.serial`) and with `prange` spread over threads
    (`.parallel`): a parallel region costs microseconds that small populations cannot repay.
    The twin gets its own name, so the two builds get their own entries in the disk cache."""
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_parallel", fn.__defaults__, fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + "_parallel"
    return types.SimpleNamespace(serial=njit(cache=True)(fn), parallel=njit(cache=True, parallel=True)(twin),
                                 name=fn.__name__)


def threads() -> int:
    """Threads the native kernels use (`set_cpu_threads`; by default all cores)."""
    return numba.get_num_threads()


# -- Philox 4x32-10 (Salmon et al. 2011), as Triton's tl.random.philox computes it ---------------
_MASK = np.uint64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def philox(key, c0, c1, c2, c3):
    """Four 32-bit words (in uint64s) for a 64-bit `key` and a 128-bit counter (c0..c3)."""
    k0 = np.uint64(key) & _MASK
    k1 = np.uint64(key) >> np.uint64(32)
    c0, c1, c2, c3 = np.uint64(c0) & _MASK, np.uint64(c1) & _MASK, np.uint64(c2) & _MASK, np.uint64(c3) & _MASK
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p2 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p2 >> np.uint64(32)) ^ c1 ^ k0, p2 & _MASK, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & _MASK)
        k0 = (k0 + np.uint64(0x9E3779B9)) & _MASK
        k1 = (k1 + np.uint64(0xBB67AE85)) & _MASK
    return c0, c1, c2, c3


@njit(cache=True, inline="always")
def uniform(word):
    """A 32-bit word as a number in [0, 1), as tl.random.uint_to_uniform_float does (float32):
    the word read as a signed int32 x, then -x - 1 where x < 0 (that is ~x), times 2^-31.
    All in int32, as int32 -> float32 is a SIMD conversion and int64 -> float32 is not
    before AVX-512: in int64 this took most of a Philox call's time again (checked equal
    on every one of the 2^32 words)."""
    x = np.int32(word)  # the low 32 bits, wrapped
    x = np.int32(x ^ np.int32(x >> np.int32(31)))
    return np.float32(x) * np.float32(4.6566127342e-10)


@njit(cache=True, inline="always")
def word_pair(key, row, d, half, step, stream):
    """Two uniforms for coordinate d of population row `row` in iteration `step`: the Triton
    kernels' `uniform_pairs` layout (one Philox call per pair of coordinates, row-major over
    `half` pairs per row)."""
    pair = np.uint64(row) * np.uint64(half) + np.uint64(d // 2)
    a, b, c, e = philox(key, pair & _MASK, pair >> np.uint64(32), step, stream)
    if d % 2 == 0:
        return uniform(a), uniform(c)
    return uniform(b), uniform(e)


# -- the built-in objectives, one row at a time ---------------------------------------------
@njit(cache=True)
def objective(fid, x, fdata):
    """The built-in function `fid` (see INLINE and `inline_objective`) at the point x (1-D),
    in float64."""
    n = x.shape[0]
    acc = 0.0
    if fid == 1 or fid == 2:  # sphere, euclidean
        for d in range(n):
            acc += np.float64(x[d]) * x[d]
        return acc if fid == 1 else math.sqrt(acc)
    if fid == 3:  # rastrigin
        for d in range(n):
            v = np.float64(x[d])
            acc += v * v - 10.0 * math.cos(2.0 * math.pi * v)
        return 10.0 * n + acc
    if fid == 4:  # ackley
        sq, cs = 0.0, 0.0
        for d in range(n):
            v = np.float64(x[d])
            sq += v * v
            cs += math.cos(2.0 * math.pi * v)
        return -20.0 * math.exp(-0.2 * math.sqrt(sq / n)) - math.exp(cs / n) + 20.0 + math.e
    if fid == 5:  # griewank
        prod = 1.0
        for d in range(n):
            v = np.float64(x[d])
            acc += v * v
            prod *= math.cos(v / math.sqrt(d + 1.0))
        return acc / 4000.0 - prod + 1.0
    if fid == 6:  # rosenbrock
        for d in range(n - 1):
            a, b = np.float64(x[d]), np.float64(x[d + 1])
            acc += 100.0 * (b - a * a) ** 2 + (a - 1.0) ** 2
        return acc
    if fid == 7:  # schwefel 1.2
        s = 0.0
        for d in range(n):
            s += x[d]
            acc += s * s
        return acc
    if fid == 8:  # schwefel 2.21
        for d in range(n):
            acc = max(acc, abs(np.float64(x[d])))
        return acc
    if fid == 9:  # schwefel 2.22
        prod = 1.0
        for d in range(n):
            acc += abs(np.float64(x[d]))
            prod *= abs(np.float64(x[d]))
        return acc + prod
    if fid == 10:  # schwefel 2.26
        for d in range(n):
            v = np.float64(x[d])
            acc -= v * math.sin(math.sqrt(abs(v)))
        return acc
    if fid == 11:  # step
        for d in range(n):
            acc += math.floor(np.float64(x[d]) + 0.5) ** 2
        return acc
    if fid == 12:  # zakharov
        s = 0.0
        for d in range(n):
            v = np.float64(x[d])
            acc += v * v
            s += 0.5 * (d + 1) * v
        return acc + s * s + s ** 4
    if fid == 13:  # levy
        w0 = 1.0 + (np.float64(x[0]) - 1.0) / 4.0
        acc = math.sin(math.pi * w0) ** 2
        for d in range(n - 1):
            w = 1.0 + (np.float64(x[d]) - 1.0) / 4.0
            acc += (w - 1.0) ** 2 * (1.0 + 10.0 * math.sin(math.pi * w + 1.0) ** 2)
        w = 1.0 + (np.float64(x[n - 1]) - 1.0) / 4.0
        return acc + (w - 1.0) ** 2 * (1.0 + math.sin(2.0 * math.pi * w) ** 2)
    if fid == 14:  # bent cigar
        for d in range(1, n):
            acc += np.float64(x[d]) * x[d]
        return np.float64(x[0]) * x[0] + 1e6 * acc
    if fid == 15:  # elliptic: weights 1e6 ** (d / (n - 1)) as a running product (a power per term is slow)
        ratio, weight = 1e6 ** (1.0 / max(n - 1, 1)), 1.0
        for d in range(n):
            acc += weight * np.float64(x[d]) * x[d]
            weight *= ratio
        return acc
    if fid == 16:  # hgbat
        s = 0.0
        for d in range(n):
            v = np.float64(x[d])
            acc += v * v
            s += v
        return math.sqrt(abs(acc * acc - s * s)) + (0.5 * acc + s) / n + 0.5
    if fid == OTSU:
        return otsu(x, fdata)
    return spring(x, fid == SPRING_PENALTY, fdata[0])


@njit(cache=True, inline="always")
def spring(x, penalty, weight_or_offset):
    """`Constrained(SpringDesign())`: the weight (N + 2) D d^2 with its four constraints
    g <= 0 folded in, as a static penalty f + weight v or Deb's offset + v (v the total
    violation, for infeasible points only); the terms in the eager problem's order."""
    d, D, N = np.float64(x[0]), np.float64(x[1]), np.float64(x[2])
    f = (N + 2.0) * D * d * d
    d4 = math.pow(d, 4.0)  # powers as torch takes them: squares and cubes multiplied out, pow() for d^4
    g1 = 1.0 - D * D * D * N / (71785.0 * d4)
    g2 = (4.0 * (D * D) - d * D) / (12566.0 * (D * (d * d * d) - d4)) + 1.0 / (5108.0 * (d * d)) - 1.0
    g3 = 1.0 - 140.45 * d / ((D * D) * N)
    g4 = (d + D) / 1.5 - 1.0
    v = max(g1, 0.0) + max(g2, 0.0) + max(g3, 0.0) + max(g4, 0.0)
    if not v > 0:
        return f
    return f + weight_or_offset * v if penalty else weight_or_offset + v


@njit(cache=True)
def otsu(x, sums):
    """Minus the between-class variance of the thresholds floor(x) in 0..255 (sorted), from
    the cumulative sums omega = sums[:257], mu = sums[257:]: `OtsuThresholding.evaluate`."""
    levels, top = x.shape[0], 256
    for d in range(levels):
        if x[d] != x[d]:
            return math.nan
    t = np.empty(levels + 2, np.int64)  # the class edges: 0, t_1 + 1, ..., t_K + 1, 256
    t[0], t[levels + 1] = 0, top
    for d in range(levels):
        t[d + 1] = np.int64(min(max(math.floor(np.float64(x[d])), 0.0), 255.0)) + 1
    t[1:levels + 1].sort()
    mu_t, acc = sums[top + 1 + top], 0.0  # mu[256]: the mean grey level
    for j in range(levels + 1):
        w = sums[t[j + 1]] - sums[t[j]]
        m = sums[top + 1 + t[j + 1]] - sums[top + 1 + t[j]]
        if w > 0:  # w_j (mu_j - mu_T)^2, mu_j = m_j / w_j; empty classes add nothing
            acc += (m - w * mu_t) ** 2 / w
    return -acc


@njit(cache=True, inline="always")
def new_value(fid, fdata, x, f_in, row):
    """The row's objective value, NaN -> +inf (and whether it was NaN): inline, or for
    fid == 0 the one the engine's (already guarded) problem wrote to f_in."""
    f = objective(fid, x, fdata) if fid else np.float64(f_in[row])
    if f != f:
        return math.inf, 1
    return f, 0


@njit(cache=True)
def block_values(fid, fdata, xs, dim, f_in, row0, vals):
    """The objective of a block's rows (flat coordinates xs) into vals (float64, NaN kept):
    sphere and euclidean as passes over coordinates that vectorise, the other built-in
    functions row by row, other problems read from f_in (rows row0, row0 + 1, ...)."""
    rows = xs.shape[0] // dim
    if fid == 1 or fid == 2:
        vals[:rows] = 0.0
        for d in range(dim):
            for i in range(rows):
                v = np.float64(xs[i * dim + d])
                vals[i] += v * v
        if fid == 2:
            for i in range(rows):
                vals[i] = math.sqrt(vals[i])
    elif fid:
        for i in range(rows):
            vals[i] = objective(fid, xs[i * dim:(i + 1) * dim], fdata)
    else:
        for i in range(rows):
            vals[i] = f_in[row0 + i]


# -- the engine's bookkeeping, one run at a time (serial, after the parallel part) -------------
@njit(cache=True)
def reduce_blocks(block_f, block_i, run):
    """The run's best new value over its block bests, and its index (the first on ties)."""
    m, i = block_f[run, 0], block_i[run, 0]
    for b in range(1, block_f.shape[1]):
        if block_f[run, b] < m:
            m, i = block_f[run, b], block_i[run, b]
    return m, i


@njit(cache=True)
def track_best(run, m, x_row, best_x, best_f, hit, it, target, has_target, record, step):
    """Best-so-far of `run` given this iteration's best new value m at x_row, the iteration
    the target was first reached, and the history row of step `step`."""
    if m < best_f[run]:
        best_f[run] = m
        best_x[run, :] = x_row
    if has_target and best_f[run] <= target and hit[run] < 0:
        hit[run] = it[0]
    record[step, run] = best_f[run]


@njit(cache=True)
def close_step(run, rows, dim, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan,
               nan_evals, step):
    """The engine's bookkeeping of `run` after the parallel part of a step: its best new value
    over the block bests (the first on ties) at its row of `rows` (the run's new population,
    flat, rows of dim), its NaN count, best-so-far, target iteration and history row. Returns
    (best new value, its row)."""
    m, i = reduce_blocks(block_f, block_i, run)
    nan_evals[run] += block_nan[run].sum()
    track_best(run, m, rows[i * dim:(i + 1) * dim], best_x, best_f, hit, it, target, has_target, record, step)
    return m, i


def native_view(t: torch.Tensor) -> np.ndarray:
    """A NumPy view of a CPU tensor (0-d tensors as 1-element arrays, so kernels can write them)."""
    view = (t.detach() if t.requires_grad else t).numpy()  # detach costs a microsecond
    return view.reshape(1) if t.ndim == 0 else view


class NativeIteration:
    """Host side of a native CPU iteration, called like the engine's generic advance
    (`state, best_x, hit, it, best_f, record`) for one step, or `advance(..., steps, record)`
    for many in one kernel call. Subclasses give `_launch(s, best_x, hit, it, best_f, steps,
    record, move, select, f_in)`.

    `counter` (a 0-d int64 tensor) is the Philox counter: the iterations drawn so far.
    """

    engine = "native"

    def __init__(self, problem, runs: int, pop: int, target: float | None, seed: int,
                 block_rows: int = BLOCK_ROWS) -> None:
        self.problem = problem  # the engine's NaN-guarded view
        self.fitness, self.fdata = inline_objective(problem.inner)
        self.runs, self.pop, self.dim = runs, pop, problem.dim
        self.target, self.seed = target, seed
        self.blocks = math.ceil(pop / block_rows)
        self.lower, self.upper = native_view(problem.lower.contiguous()), native_view(problem.upper.contiguous())
        dtype = problem.lower.dtype
        self.block_f = np.empty((runs, self.blocks), dtype=torch.empty(0, dtype=dtype).numpy().dtype)
        self.block_i = np.empty((runs, self.blocks), dtype=np.int64)
        self.block_nan = np.zeros((runs, self.blocks), dtype=np.int64)
        self.counter = torch.zeros((), dtype=torch.int64)
        self.counters: tuple[torch.Tensor, ...] = (self.counter,)
        self.nan_evals = native_view(problem.nan_evals)
        self.spare = None
        self.given_r: torch.Tensor | None = None  # test hook: the eager step's random numbers
        self._scratch: dict = {}

    @staticmethod
    def prepare(state):
        """Own, contiguous buffers (init may share tensors between fields; kernels write in place)."""
        fields = {k: v.clone(memory_format=torch.contiguous_format) for k, v in vars(state).items()}
        return type(state)(**fields)

    def work(self) -> int:
        """About how many coordinate updates one iteration makes (what parallel work repays)."""
        return self.runs * self.pop * max(self.dim, 4)

    def group_scratch(self, width: int, dtype) -> tuple[np.ndarray, np.ndarray]:
        """Scratch for kernels that spread groups of blocks over threads (any number of groups
        gives the same results): per group, three rows of `width` numbers in `dtype` and a
        block's float64 values. Kept between launches: allocated inside a kernel, per step,
        they cost 0.1-0.2 us, a fifth of a small population's iteration."""
        groups = min(self.runs * self.blocks, 4 * threads())
        key = (groups, width, np.dtype(dtype))
        if key not in self._scratch:
            self._scratch = {key: (np.empty((groups, 3, width), dtype), np.empty((groups, BLOCK_ROWS)))}
        return self._scratch[key]

    def kernel(self, compiled):
        """The serial or the parallel build, by the work of one iteration and the threads set."""
        return compiled.parallel if self.work() >= PARALLEL_MIN and threads() > 1 else compiled.serial

    def warm_up(self, s, best_x, hit, it, best_f) -> float:
        """Compile (or load from the disk cache) the kernels this run set calls, by calling
        them for zero steps; returns the seconds it took."""
        started = time.perf_counter()
        record = torch.empty(0, self.runs, dtype=best_f.dtype)
        for select in ((True,) if self.fitness else (False, True)):
            self._launch(s, best_x, hit, it, best_f, 0, record, not select or bool(self.fitness), select,
                         s.f if select else None)
        native_loaded.add(type(self).__name__)
        return time.perf_counter() - started

    def __call__(self, s, best_x, hit, it, best_f, record=None):
        rows = torch.empty(1, self.runs, dtype=best_f.dtype)
        s = self.advance(s, best_x, hit, it, best_f, 1, rows)
        if record is not None:
            record.copy_(rows[0])
        return s, best_x, hit, it, best_f

    def advance(self, s, best_x, hit, it, best_f, steps: int, record: torch.Tensor):
        """`steps` iterations in place; record[k] gets the best-so-far after step k. Returns
        the state (the same object, or the other buffers for synchronous updates)."""
        if self.fitness:
            return self._launch(s, best_x, hit, it, best_f, steps, record, True, True, None)
        for k in range(steps):  # other objectives: between a move call and a select call
            s = self._launch(s, best_x, hit, it, best_f, 1, record[k:k + 1], True, False, None)
            f_in = self.problem.evaluate(self.moved(s))
            s = self._launch(s, best_x, hit, it, best_f, 1, record[k:k + 1], False, True, f_in)
        return s

    def other_buffers(self, s):
        """Buffers like s's for an update that reads s while it writes the next population: the
        previous population's (`spare`, which the caller keeps up to date), unless they are s's."""
        out = self.spare
        if out is None or out.x.data_ptr() == s.x.data_ptr():
            out = type(s)(**{k: torch.empty_like(v) for k, v in vars(s).items()})
        return out

    def moved(self, s) -> torch.Tensor:
        """The points a move call wrote, for the problem to evaluate (default: s.x)."""
        return s.x

    @staticmethod
    def values_in(s, f_in) -> np.ndarray:
        """The objective values a select call reads (flat, one per row): the problem's, or a
        placeholder when the kernel computes them inline."""
        return native_view((s.f if f_in is None else f_in).contiguous()).reshape(-1)

    def common_args(self, best_x, hit, it, best_f, record):
        """The bookkeeping arguments every kernel takes, as NumPy views."""
        return (native_view(best_x), native_view(best_f), native_view(hit), native_view(it),
                0.0 if self.target is None else float(self.target), self.target is not None, native_view(record),
                self.block_f, self.block_i, self.block_nan, self.nan_evals, native_view(self.counter), self.seed)

