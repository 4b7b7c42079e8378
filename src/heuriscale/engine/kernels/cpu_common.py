"""What the native CPU iterations (Numba) share: serial and parallel builds of each kernel,
the engine's best-so-far bookkeeping, and the host side that drives them.

Each algorithm's CPU kernel (`<algorithm>/cpu.py`) is one function advancing every run by
`steps` iterations in one call, on NumPy views of the run set's torch tensors (no copies),
in place. Work goes out in blocks of rows (`BLOCK_ROWS` individuals of one run) through
`prange`; each block writes its best new value and its NaN count, and a serial pass per run
reduces the blocks and does the bookkeeping, as the CUDA kernels do. The objective is
computed inside the kernel for the built-in functions, through the compiled function of the
one the run uses (`cpu_objectives.py`); any other problem is evaluated by the engine between
two calls of the same kernel. Random numbers come from Philox (`cpu_random.py`), so a seed
gives the same runs on any number of threads.

Numba compiles a kernel on its first call for each dtype and caches the machine code on
disk beside the source (`cache=True`); later processes load it in milliseconds. The first
build is what a new machine waits for, so the kernels keep it small: only the
run's objective is compiled, helpers only kernels call have no Python entry point
(`cpu_jobs.inner`), the big kernels' parallel work is compiled once as jobs
(`cpu_jobs.py`), and NumPy functions whose Numba versions compile slowly (slice
assignment's shape check, np.argsort, np.partition) are loops here.
"""

from __future__ import annotations

import functools
import math
import time
import types

import numpy as np
import torch
from . import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit

from ...problems.base import check_fitness
from ..threads import choose_threads, use_numba_threads
from .cpu_jobs import inner
from .cpu_objectives import inline_objective

#: Names of the native iterations whose kernels this process has compiled or loaded already
#: (what `auto` weighs: see `kernels.native_in_process`).
native_loaded: set[str] = set()


def loaded_key(kernel: str, parallel: bool) -> str:
    """What `native_loaded` holds of a kernel class: its name and its build (the serial and the
    parallel build are compiled and loaded apart, so one being loaded says nothing of the other)."""
    return f"{kernel}/{'parallel' if parallel else 'serial'}"

#: Individuals of one run per block of parallel work (one block's best is kept per call).
BLOCK_ROWS = 256
#: Below this many coordinates per iteration (runs x pop x dim) one thread is faster: a
#: parallel region costs a few microseconds to open (measured: about 1 us on one thread,
#: 3 us on two).
PARALLEL_MIN = 8192


def kernel(fn):
    """`fn` compiled twice, one thread (`.serial`) and with `prange` spread over threads
    (`.parallel`): a parallel region costs microseconds that small populations cannot repay.
    The twin gets its own name, so the two builds get their own entries in the disk cache."""
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_parallel", fn.__defaults__, fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + "_parallel"
    return types.SimpleNamespace(serial=njit(cache=True)(fn), parallel=njit(cache=True, parallel=True)(twin),
                                 name=fn.__name__)


@njit(cache=True, inline="always")
def copy_into(dst, src):
    """dst[i] = src[i] for every i of the 1-D array src, as a loop. Slice assignment from
    an array (`dst[:] = src`) checks the shapes, and the check compiles its error message
    (integers and tuples formatted as text): 1.4 s of a kernel's first build for each
    number of dimensions assigned, for an error these copies cannot have."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


# -- sorting and selection, as loops: NumPy's versions in Numba (np.argsort, np.partition) -----
# compile 1-4 s of code each (the partition's argument checks alone pull in np.unique); these
# compile in a fraction of a second and give the same numbers (a stable order, and a k-th
# smallest value, are unique).
@njit(cache=True, inline="always")
def _before(a, b):
    """a < b, NaN after every number (as NumPy sorts)."""
    return a < b or (b != b and a == a)


@inner
def stable_order(f, order, spare):
    """order = np.argsort(f, kind="stable"): the indices of f by increasing value, ties in
    index order, NaN last; spare: scratch of f's length (int64)."""
    for i in range(f.shape[0]):
        order[i] = i
    stable_by(order, spare, f.shape[0], f)


@inner
def stable_by(order, spare, n, f):
    """order[:n] reordered stably by f[order[t]] (ties keep their order, NaN last): a
    bottom-up merge sort over runs of 16 first put in order by insertion (spare: int64
    scratch of n). Sorting by several keys is one pass per key, the least significant first."""
    run = 16
    for lo in range(0, n, run):  # insertion sort of each run: stable (moves past strictly greater only)
        for i in range(lo + 1, min(lo + run, n)):
            k, j = order[i], i
            while j > lo and _before(f[k], f[order[j - 1]]):
                order[j] = order[j - 1]
                j -= 1
            order[j] = k
    src, dst, in_order = order, spare, True
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):  # the right run's element first only if strictly smaller: stable
                if j < hi and (i >= mid or _before(f[src[j]], f[src[i]])):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
        src, dst, in_order = dst, src, not in_order
        width *= 2
    if not in_order:
        for k in range(n):
            order[k] = spare[k]


@inner
def kth_smallest(a, k):
    """The k-th smallest value of a (0-based), NaN above every number: np.partition(a, k)[k].
    Reorders a (Hoare's selection)."""
    lo, hi = 0, a.shape[0] - 1
    while lo < hi:
        pivot = a[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while _before(a[i], pivot):
                i += 1
            while _before(pivot, a[j]):
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if k <= j:  # a[lo..j] <= pivot <= a[i..hi], and between them values equal to it
            hi = j
        elif k >= i:
            lo = i
        else:
            return a[k]
    return a[k]


# -- the engine's bookkeeping, one run at a time (serial, after the parallel part) -------------
@inner
def reduce_blocks(block_f, block_i, run):
    """The run's best new value over its block bests, and its index (the first on ties)."""
    m, i = block_f[run, 0], block_i[run, 0]
    for b in range(1, block_f.shape[1]):
        if block_f[run, b] < m:
            m, i = block_f[run, b], block_i[run, b]
    return m, i


@inner
def track_best(run, m, x_row, best_x, best_f, hit, it, target, has_target, record, step):
    """Best-so-far of `run` given this iteration's best new value m at x_row, the iteration
    the target was first reached, and the history row of step `step`."""
    if m < best_f[run]:
        best_f[run] = m
        copy_into(best_x[run], x_row)
    if has_target and best_f[run] <= target and hit[run] < 0:
        hit[run] = it[0]
    record[step, run] = best_f[run]


@inner
def close_step(run, rows, dim, best_x, best_f, hit, it, target, has_target, record, block_f, block_i, block_nan,
               nan_evals, step):
    """The engine's bookkeeping of `run` after the parallel part of a step: its best new value
    over the block bests (the first on ties) at its row of `rows` (the run's new population,
    flat, rows of dim), its NaN count, best-so-far, target iteration and history row. Returns
    (best new value, its row)."""
    m, i = reduce_blocks(block_f, block_i, run)
    for b in range(block_nan.shape[1]):  # (a loop: .sum() is 0.3 s more to compile)
        nan_evals[run] += block_nan[run, b]
    track_best(run, m, rows[i * dim:(i + 1) * dim], best_x, best_f, hit, it, target, has_target, record, step)
    return m, i


def as_written(algorithm, classes: tuple, what: str) -> str | None:
    """None where `algorithm` is exactly one of `classes`; else why their native kernel does not
    run it: the kernel computes `what` as written, and a subclass may change the step (a
    kernel module's `unsupported`, for kernels found through `Kernels(folder=...)`)."""
    if type(algorithm) in classes:
        return None
    return (f"the native kernel computes {what} as written; {type(algorithm).__name__} changes it: "
            "use engine='eager'")


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
        self._views: dict = {}
        self._f_in: np.ndarray | None = None  # the values of problems evaluated between kernel calls

    @functools.cached_property
    def objective(self) -> tuple[int, np.ndarray]:
        """(fid, fdata): `inline_objective` of the problem. Resolved on first use, inside
        `warm_up` (its first launch): that compiles, or loads, the objective's wrapper, which
        is part of the setup warm_up times."""
        return inline_objective(self.problem.inner)

    fitness = property(lambda self: self.objective[0], doc="The inline objective's id (0: evaluated between calls).")
    fdata = property(lambda self: self.objective[1], doc="The inline objective's numbers (its address first).")

    def view(self, t: torch.Tensor, shape: tuple[int, ...] | None = None) -> np.ndarray:
        """`native_view(t)` (reshaped to `shape`), kept per tensor: one costs 0.7-0.9 us
        (measured on a (32, 2) tensor), and a launch takes a dozen or more, which small
        populations feel (a problem evaluated between kernel calls launches twice per iteration)."""
        key = (id(t), shape)
        entry = self._views.get(key)
        if entry is None or entry[0] is not t:
            if len(self._views) > 64:  # tensors replaced (checkpoints, migration): forget the old ones
                self._views.clear()
            view = native_view(t)
            entry = self._views[key] = (t, view if shape is None else view.reshape(shape))
        return entry[1]

    @staticmethod
    def prepare(state):
        """Own, contiguous buffers (init may share tensors between fields; kernels write in place)."""
        fields = {k: v.clone(memory_format=torch.contiguous_format) for k, v in vars(state).items()}
        return type(state)(**fields)

    def work(self) -> int:
        """About how many coordinate updates one iteration makes (what parallel work repays)."""
        return self.runs * self.pop * max(self.dim, 4)

    def parts(self) -> int:
        """Independent pieces of an iteration's parallel work (more threads than these idle)."""
        return self.runs * self.blocks

    @functools.cached_property
    def threads(self) -> tuple[int, str]:
        """(threads, why) for this run set's parallel launches: a fixed count (`set_cpu_threads`),
        else what its work per iteration can use (`threads.choose_threads`), decided once."""
        what = f"{self.pop:,} x {self.dim:,} x {self.runs:,} run{'s' if self.runs > 1 else ''}"
        return choose_threads(self.work(), self.parts(), what, PARALLEL_MIN)

    def group_scratch(self, width: int, dtype) -> tuple[np.ndarray, np.ndarray]:
        """Scratch for kernels that spread groups of blocks over threads (any number of groups
        gives the same results): per group, three rows of `width` numbers in `dtype` and a
        block's float64 values. Kept between launches: allocated inside a kernel, per step,
        they cost 0.1-0.2 us, a fifth of a small population's iteration."""
        groups = min(self.runs * self.blocks, 4 * self.threads[0])
        key = (groups, width, np.dtype(dtype))
        if key not in self._scratch:
            self._scratch = {key: (np.empty((groups, 3, width), dtype), np.empty((groups, BLOCK_ROWS)))}
        return self._scratch[key]

    def parallel(self) -> bool:
        """Whether this launch goes over several threads (`threads`: then Numba's count for this
        calling thread is set to them); one iteration's work below PARALLEL_MIN never does."""
        n = self.threads[0]
        parallel = n > 1 and self.work() >= PARALLEL_MIN and self.parts() > 1
        if parallel:
            use_numba_threads(n)
        return parallel

    def kernel(self, compiled):
        """The serial or the parallel build, by the work of one iteration and the threads set."""
        return compiled.parallel if self.parallel() else compiled.serial

    def warm_up(self, s, best_x, hit, it, best_f) -> float:
        """Compile (or load from the disk cache) the kernels this run set calls, by calling
        them for zero steps; returns the seconds it took."""
        started = time.perf_counter()
        record = torch.empty(0, self.runs, dtype=best_f.dtype)
        for select in ((True,) if self.fitness else (False, True)):
            self._launch(s, best_x, hit, it, best_f, 0, record, not select or bool(self.fitness), select,
                         s.f if select else None)
        native_loaded.add(loaded_key(type(self).__name__, self.parallel()))
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
        rows = native_view(record)  # a NumPy row per step, without a torch slice for each
        for k in range(steps):  # other objectives: between a move call and a select call
            s = self._launch(s, best_x, hit, it, best_f, 1, rows[k:k + 1], True, False, None)
            f_in = self.evaluate_moved(s)
            s = self._launch(s, best_x, hit, it, best_f, 1, rows[k:k + 1], False, True, f_in)
        return s

    def evaluate_moved(self, s) -> np.ndarray:
        """The values of the points a move call wrote, by the run set's problem, into one flat
        buffer the select call reads. The select call counts NaN values and takes them as
        +inf (the engine's guard, done in the kernel). Host objectives (NumPy, scalar Python)
        get a NumPy view of the points, with no torch round trip."""
        x = self.moved(s)
        problem = self.problem.inner
        if self._f_in is None or self._f_in.shape[0] != x.shape[0] * x.shape[1]:
            self._f_in = np.empty(x.shape[0] * x.shape[1], dtype=native_view(x).dtype)
        rows_of = getattr(problem, "values_of_rows", None)
        if rows_of is not None:
            self._f_in[:] = rows_of(self.view(x, (-1, self.dim)))
        else:
            f = check_fitness(problem.evaluate(x), x, problem.name)
            self._f_in[:] = native_view(f.detach().reshape(-1))
        return self._f_in

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

    def values_in(self, s, f_in) -> np.ndarray:
        """The objective values a select call reads (flat, one per row): the problem's
        (`evaluate_moved`), or a placeholder when the kernel computes them inline."""
        if isinstance(f_in, np.ndarray):
            return f_in
        return self.view((s.f if f_in is None else f_in).contiguous(), (-1,))

    def common_args(self, best_x, hit, it, best_f, record):
        """The bookkeeping arguments every kernel takes, as NumPy views (`record` may be one)."""
        v = self.view
        record = record if isinstance(record, np.ndarray) else native_view(record)
        return (v(best_x), v(best_f), v(hit), v(it), 0.0 if self.target is None else float(self.target),
                self.target is not None, record, self.block_f, self.block_i, self.block_nan, self.nan_evals,
                v(self.counter), self.seed)

