"""What the fused iterations share: inline objectives, Philox draws, block bests, and the
engine's best-so-far bookkeeping, as Triton device functions; plus their host-side buffers.

A fused iteration has a per-block kernel that moves and evaluates a block of one run's
population and writes the block's best new value with its index; the block bests are then
reduced for the engine's bookkeeping (best-so-far, target iteration, history row) next to
the algorithm's own (e.g. PSO's gbest): by a per-run kernel after it (`finish_run`), or by
every program of the next launch (`cuda_chain`: PSO, PRS).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor

import torch
import triton
import triton.language as tl

from ... import triton_ahead
from ...problems import classic
from ...problems.classic import ClassicProblem
from ...triton_ahead import interpreted

#: Built-in objectives computed inside the kernels; 0 means "evaluate with the problem".
FITNESS = {classic.sphere: 1, classic.euclidean: 2, classic.rastrigin: 3, classic.ackley: 4, classic.griewank: 5}
#: A user's `TritonFunction`, called inside the kernels (its function passed as USER_FN).
USER = 20


def fitness_id(problem) -> tuple[int, object]:
    """(FITNESS, USER_FN): a built-in objective's id, or USER and the user's Triton function,
    or (0, None) for a problem the engine evaluates between two launches."""
    from ...problems.triton_function import TritonFunction

    if type(problem) is TritonFunction:
        return USER, problem.fn
    return (FITNESS.get(problem.fn, 0) if type(problem) is ClassicProblem else 0), None


@triton.jit
def _product(a, b):
    return a * b


@triton.jit
def objective(x, d, dm, D, FITNESS: tl.constexpr):
    """Row-wise objective of a (rows, BLOCK_D) tile whose columns >= D are padding."""
    x = tl.where(dm[None, :], x, 0.0)
    if FITNESS == 1:  # sphere
        f = tl.sum(x * x, 1)
    elif FITNESS == 2:  # euclidean (paper 001)
        f = tl.sqrt(tl.sum(x * x, 1))
    elif FITNESS == 3:  # rastrigin
        f = 10.0 * D + tl.sum(tl.where(dm[None, :], x * x - 10.0 * tl.cos(6.283185307179586 * x), 0.0), 1)
    elif FITNESS == 4:  # ackley
        mean_sq = tl.sum(x * x, 1) / D
        mean_cos = tl.sum(tl.where(dm[None, :], tl.cos(6.283185307179586 * x), 0.0), 1) / D
        f = -20.0 * tl.exp(-0.2 * tl.sqrt(mean_sq)) - tl.exp(mean_cos) + 20.0 + 2.718281828459045
    else:  # griewank
        scale = tl.sqrt((d + 1).to(x.dtype))
        cosines = tl.where(dm[None, :], tl.cos(x / scale[None, :]), 1.0)
        f = tl.sum(x * x, 1) / 4000.0 - tl.reduce(cosines, 1, _product) + 1.0
    return f


@triton.jit
def uniform_pairs(seed, counter_ptr, row, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr, WIDE: tl.constexpr,
                  STREAM: tl.constexpr = 0):
    """Two (BLOCK_P, BLOCK_D) tiles of U[0, 1) numbers for the rows `row` of this iteration.

    Philox 4x32-10 keyed by the run set's seed; counter = (row's coordinate pair (64 bits),
    iteration, STREAM): one call gives four numbers, i.e. two per coordinate for two
    neighbouring coordinates; another STREAM gives independent ones.
    """
    return uniform_pairs_at(seed, tl.load(counter_ptr), row, BLOCK_P, BLOCK_D, WIDE, STREAM)


@triton.jit
def uniform_pairs_at(seed, count, row, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr, WIDE: tl.constexpr,
                     STREAM: tl.constexpr = 0):
    """`uniform_pairs` at the Philox counter's value `count` (loaded with a kernel's other loads)."""
    a, b, c, e = pair_uniforms_at(seed, count, row, BLOCK_D, WIDE, STREAM)
    return interleave(a, b, BLOCK_P, BLOCK_D), interleave(c, e, BLOCK_P, BLOCK_D)


@triton.jit
def pair_uniforms(seed, counter_ptr, row, BLOCK_D: tl.constexpr, WIDE: tl.constexpr, STREAM: tl.constexpr = 0):
    """`uniform_pairs`' four numbers of each coordinate pair j (columns 2j, 2j + 1), as four
    (BLOCK_P, BLOCK_D // 2) tiles."""
    return pair_uniforms_at(seed, tl.load(counter_ptr), row, BLOCK_D, WIDE, STREAM)


@triton.jit
def pair_uniforms_at(seed, count, row, BLOCK_D: tl.constexpr, WIDE: tl.constexpr, STREAM: tl.constexpr = 0):
    """`pair_uniforms` at the Philox counter's value `count`."""
    HALF: tl.constexpr = BLOCK_D // 2
    pair = row[:, None] * HALF + tl.arange(0, HALF)[None, :]
    zero = (pair * 0).to(tl.uint32)
    high = zero
    if WIDE:
        high = (pair >> 32).to(tl.uint32)
    step = zero + count.to(tl.uint32)
    a, b, c, e = tl.random.philox(seed, pair.to(tl.uint32), high, step, zero + STREAM)
    return (tl.random.uint_to_uniform_float(a), tl.random.uint_to_uniform_float(b),
            tl.random.uint_to_uniform_float(c), tl.random.uint_to_uniform_float(e))


@triton.jit
def interleave(even, odd, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr):
    """A (BLOCK_P, BLOCK_D) tile with columns 2j from `even` and 2j + 1 from `odd`."""
    return tl.reshape(tl.join(even, odd), (BLOCK_P, BLOCK_D))


@triton.jit
def tile(P, D, BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr, WIDE: tl.constexpr, DENSE: tl.constexpr = False):
    """This program's tile: block program_id(0) of run program_id(1)'s P rows of D numbers.

    Returns (block, run, p, d, pm, dm, mask, row, off): row indices p in the population and
    coordinates d with their masks, the rows in (runs * P) and the elements' offsets (64-bit
    when WIDE: 2**31 elements or more).
    """
    block = tl.program_id(0)
    run = tl.program_id(1)
    p = block * BLOCK_P + tl.arange(0, BLOCK_P)
    d = tl.arange(0, BLOCK_D)
    pm = p < P
    dm = d < D
    row = run * P + p
    if WIDE:
        row = run.to(tl.int64) * P + p
    if DENSE:  # D == BLOCK_D: rows start at multiples of BLOCK_D, so a thread may load a row's numbers at once
        return block, run, p, d, pm, dm, tl.broadcast_to(pm[:, None], (BLOCK_P, BLOCK_D)), row, \
            row[:, None] * BLOCK_D + d[None, :]
    return block, run, p, d, pm, dm, pm[:, None] & dm[None, :], row, row[:, None] * D + d[None, :]


@triton.jit
def new_values(x, f_in_ptr, nan_ptr, run, row, pm, d, dm, D, FITNESS: tl.constexpr, USER_FN: tl.constexpr):
    """The rows' objective values: inline (NaN -> +inf, counted), or for FITNESS == 0 those
    the engine's (NaN-guarded) problem computed between a move launch and a select launch.
    FITNESS == USER calls the user's Triton function on the rows (padding coordinates 0)."""
    f, nan = values_and_nans(x, f_in_ptr, row, pm, d, dm, D, FITNESS, USER_FN)
    count_nans(nan, nan_ptr, run)
    return f


@triton.jit
def values_and_nans(x, f_in_ptr, row, pm, d, dm, D, FITNESS: tl.constexpr, USER_FN: tl.constexpr):
    """`new_values` before the NaN count: the values with NaN -> +inf, and where a row of the
    population (`pm`) gave NaN. A kernel that reduces its block anyway counts them in that
    reduction (`cuda_chain.store_block_best_row`): each block-wide reduction is a barrier."""
    if FITNESS == 0:  # (guarded and counted by the engine: no NaN here)
        f = tl.load(f_in_ptr + row, mask=pm, other=float("inf"))
    elif FITNESS == 20:  # USER
        f = USER_FN(tl.where(dm[None, :], x, 0.0), dm[None, :])
    else:
        f = objective(x, d, dm, D, FITNESS)
    nan = f != f
    return tl.where(nan, float("inf"), f), nan & pm


@triton.jit
def count_nans(nan, nan_ptr, run):
    """Add the NaN rows `nan` to run `run`'s count. The count is added only where there is
    one: an atomic on every block's path would make the iteration's chain of memory
    latencies one longer."""
    nans = tl.sum(nan.to(tl.int64), 0)
    if nans > 0:
        tl.atomic_add(nan_ptr + run, nans)


@triton.jit
def store_block_best(f, rows_ok, block, run, NB, block_f_ptr, block_i_ptr, BLOCK_P: tl.constexpr):
    """The block's best value (masked rows count as +inf) and its index in the population."""
    best_f, best_i = tl.min(tl.where(rows_ok, f, float("inf")), 0, return_indices=True)
    tl.store(block_f_ptr + run * NB + block, best_f)
    tl.store(block_i_ptr + run * NB + block, block * BLOCK_P + best_i)


@triton.jit
def reduce_blocks(block_f_ptr, block_i_ptr, run, NB, BLOCK_B: tl.constexpr):
    """The run's best new value over all block bests and its index in the population."""
    lanes = tl.arange(0, BLOCK_B)
    acc_f = tl.load(block_f_ptr + run * NB + lanes, mask=lanes < NB, other=float("inf"))
    acc_i = tl.load(block_i_ptr + run * NB + lanes, mask=lanes < NB, other=0)
    for start in range(BLOCK_B, NB, BLOCK_B):
        idx = start + lanes
        f = tl.load(block_f_ptr + run * NB + idx, mask=idx < NB, other=float("inf"))
        i = tl.load(block_i_ptr + run * NB + idx, mask=idx < NB, other=0)
        take = f < acc_f
        acc_f = tl.where(take, f, acc_f)
        acc_i = tl.where(take, i, acc_i)
    m, lane = tl.min(acc_f, 0, return_indices=True)
    return m, tl.sum(tl.where(lanes == lane, acc_i, 0), 0)


@triton.jit
def sum_blocks_from(first, block_s_ptr, run, NB, BLOCK_B: tl.constexpr):
    """The run's sum of per-block partial sums, the first BLOCK_B of them `first` (loaded
    with a kernel's other loads)."""
    lanes = tl.arange(0, BLOCK_B)
    acc = first
    for start in range(BLOCK_B, NB, BLOCK_B):
        acc += tl.load(block_s_ptr + run * NB + start + lanes, mask=start + lanes < NB, other=0.0)
    return tl.sum(acc, 0)


@triton.jit
def where_row(dm, flag):
    """The row mask `dm` where the scalar `flag` holds (broadcast explicitly: the
    interpreter does not `&` a scalar bool with a block)."""
    return dm & ((dm.to(tl.int32) * 0 + flag.to(tl.int32)) != 0)


@triton.jit
def track_best(m, x, d, dm, run, D, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, target,
               HAS_TARGET: tl.constexpr, IT_AHEAD: tl.constexpr = 0):
    """The engine's bookkeeping for one run: best-so-far (value `m` at point `x`), the
    iteration the target was first reached, and this iteration's history row. The iteration
    is the count at `it_ptr` plus IT_AHEAD (1 where the count advances after this, see
    `finish_iteration`)."""
    best = tl.load(best_f_ptr + run)
    improved = m < best
    tl.store(best_f_ptr + run, m, mask=improved)
    tl.store(best_x_ptr + run * D + d, x, mask=where_row(dm, improved))
    best = tl.minimum(best, m)
    if HAS_TARGET:
        hit = tl.load(hit_ptr + run)
        tl.store(hit_ptr + run, tl.load(it_ptr) + IT_AHEAD, mask=(best <= target) & (hit < 0))
    tl.store(record_ptr + run, best)


@triton.jit
def best_of_run(block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, coef_ptr, run,
                P, D, NB, HAS_TARGET: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr,
                IT_AHEAD: tl.constexpr = 0):
    """Run `run`'s best new value `m` and point `x` from its block bests, and the engine's
    bookkeeping (target = coef[0]). Returns (m, x, d, dm) for the algorithm's own."""
    m, i = reduce_blocks(block_f_ptr, block_i_ptr, run, NB, BLOCK_B)
    d = tl.arange(0, BLOCK_D)
    dm = d < D
    x = tl.load(x_ptr + (run.to(tl.int64) * P + i) * D + d, mask=dm)
    track_best(m, x, d, dm, run, D, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, tl.load(coef_ptr),
               HAS_TARGET, IT_AHEAD)
    return m, x, d, dm


@triton.jit
def finish_run(block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr, counter_ptr,
               coef_ptr, P, D, NB, HAS_TARGET: tl.constexpr, BLOCK_B: tl.constexpr,
               BLOCK_D: tl.constexpr):
    """The per-run kernel's shared part: the iteration's best new value `m` and point `x`
    (from the block bests), the engine's bookkeeping, and the Philox counter advanced.
    Returns (m, x, d, dm) for the algorithm's own bookkeeping (target = coef[0])."""
    run = tl.program_id(0)
    m, x, d, dm = best_of_run(block_f_ptr, block_i_ptr, x_ptr, best_x_ptr, best_f_ptr, hit_ptr, it_ptr, record_ptr,
                              coef_ptr, run, P, D, NB, HAS_TARGET, BLOCK_B, BLOCK_D)
    if run == 0:
        tl.store(counter_ptr, tl.load(counter_ptr) + 1)
    return m, x, d, dm


#: Programs a launch should have at least before its blocks get smaller (`row_tiles`).
SPREAD_PROGRAMS = 128
#: ... but no block of fewer elements than this.
MIN_BLOCK = 256


def row_tiles(dim: int, rows: int | None = None) -> tuple[int, int, int]:
    """(BLOCK_D, BLOCK_P, num_warps) for kernels that keep a block of rows in registers:
    coordinates padded to a power of two (at least 2: Philox gives them in pairs), about 1,024
    elements and 4 warps per program, the fastest measured on an H100 for PSO at 65,536 x 2 and
    1,000,000 x 30 (benchmarks/fused_tiles.py); rows of 2,048 or more get 8 warps. Given a
    run's `rows`, blocks shrink (to MIN_BLOCK elements) until the run has SPREAD_PROGRAMS of
    them: a small population's iteration is a chain of latencies, shorter over more
    multiprocessors (PRS at paper 000's 1,024 x 4: 4 blocks of 256 rays took 6.0 us a launch
    on an H200)."""
    block_d = max(2, triton.next_power_of_2(dim))
    block_p = max(1, min(512, 1024 // block_d))
    while rows is not None and block_p > 1 and block_p * block_d > MIN_BLOCK and -(-rows // block_p) < SPREAD_PROGRAMS:
        block_p //= 2
    return block_d, block_p, 4 if block_d < 2048 else 8


#: Inside `compiled_together`, what `launch` gives a kernel it compiled (a compiled kernel, or
#: its future); else None, and `launch` launches.
_compiling = contextvars.ContextVar("heuriscale_compiling", default=None)


def launch(kernel, grid, *args, **kwargs) -> None:
    """kernel[grid](*args, **kwargs); inside `compiled_together`, only its compilation."""
    compiling = _compiling.get()
    if compiling is not None:
        compiled = kernel.warmup(*args, grid=grid, **kwargs)
        if compiled is not None:
            compiling(compiled)
    else:
        kernel[grid](*args, **kwargs)


def compiling_only() -> bool:
    """Whether `launch` only compiles here (inside `compiled_together`)."""
    return _compiling.get() is not None


def can_compile_together() -> bool:
    """Whether this Triton compiles kernels in threads (its AsyncCompileMode, Triton >= 3.4)
    and kernels are compiled at all (not under TRITON_INTERPRET=1)."""
    if interpreted():
        return False
    try:
        from triton.runtime._async_compile import AsyncCompileMode  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def compiled_together(threads: int = 8):
    """The kernels `launch`ed inside are not launched but compiled, all at once in threads
    (Triton's compiler releases the GIL; ptxas is a process of its own), and are ready when
    the block ends, with their launchers (`build_launcher`, each as soon as its kernel is
    compiled, while the others still compile). On the device machine's Xeon six kernels took
    17-18 s to compile one after another and 4.5-5.2 s in six threads."""
    from triton.runtime._async_compile import AsyncCompileMode

    seen: list = []
    with ThreadPoolExecutor(threads) as pool, ThreadPoolExecutor(threads) as launchers:
        def compiling(kernel) -> None:
            if all(kernel is not other for other in seen):  # (one per build)
                seen.append(kernel)
                launchers.submit(build_launcher, kernel)

        token = _compiling.set(compiling)
        try:
            with AsyncCompileMode(pool):
                yield
        finally:
            _compiling.reset(token)
        # (leaving the pools waits for the launchers)


def build_launcher(kernel) -> None:
    """Build the launcher of a kernel compiled in `compiled_together`, into Triton's cache.

    Triton 3.6 (the device machine's) makes a C module per kernel signature, with the system's
    C compiler, when the kernel first runs, one after another: there, three such builds took
    1.13 s of the 1.56 s first chunk of APO at paper 003's size with empty caches
    (docs/benchmarks.md). Built here in threads, the first launch loads them from the cache.
    (Triton 3.9 launches every kernel through one shared launcher: nothing is built here.)
    Best effort, through Triton's driver interface (`launcher_cls`): if that fails, the first
    launch builds the launcher itself, as without this, and raises there if it cannot."""
    try:
        from triton.runtime.driver import driver

        future = getattr(kernel, "future", None)  # AsyncCompileMode's: waited for, not finalised here
        compiled = future.result() if future is not None else getattr(kernel, "result", lambda: kernel)()
        driver.active.launcher_cls(compiled.src, compiled.metadata)
    except Exception as exc:  # noqa: BLE001 (see above: the launch itself is the place for errors)
        logging.getLogger("heuriscale").debug("a Triton launcher was not built ahead (%s: %s); its first launch "
                                              "builds it", type(exc).__name__, exc)


class FusedIteration:
    """Host side of a fused iteration: block layout, block-best buffers, Philox counter and
    the algorithm's coefficients in device memory (Triton passes Python floats as float32):
    `coef = [target, *coef]`, so an algorithm's k-th coefficient is at `coef_ptr + 1 + k`.

    Called like the engine's generic advance: `(state, best_x, hit, it, best_f, record)`.
    """

    engine = "fused"

    def __init__(self, problem, runs: int, pop: int, block_p: int, coef: list[float],
                 target: float | None, seed: int) -> None:
        self.problem = problem  # the engine's NaN-guarded view
        self.fitness, self.user_fn = fitness_id(problem.inner)
        self.runs, self.pop, self.dim = runs, pop, problem.dim
        self.lower, self.upper = problem.lower.contiguous(), problem.upper.contiguous()
        self.target, self.seed = target, seed
        device, dtype = problem.lower.device, problem.lower.dtype
        self.coef = torch.tensor([0.0 if target is None else target, *coef], device=device, dtype=dtype)
        self.block_p = block_p
        self.blocks = math.ceil(pop / block_p)
        self.block_f = torch.empty(runs, self.blocks, device=device, dtype=dtype)
        self.block_i = torch.empty(runs, self.blocks, device=device, dtype=torch.int64)
        self.counter = torch.zeros((), device=device, dtype=torch.int64)
        # Where the history row goes when a step is not recorded: always storing one keeps a
        # single specialisation of each kernel, so the one a graph's warm-up compiles (timed as
        # setup) is the one every later step runs (no compilation inside a timed run).
        self.unrecorded = torch.empty(runs, device=device, dtype=dtype)
        #: Buffers outside the state that an iteration updates in place (a graph's warm-up
        #: restores them): the Philox counter, plus what an algorithm carries over.
        self.counters: tuple[torch.Tensor, ...] = (self.counter,)
        self.spare = None  # the second population buffers of synchronous updates (other_buffers)
        # Test hooks, (2, runs, pop, dim): numbers to use instead of Philox's / to store Philox's in.
        self.given_r: torch.Tensor | None = None
        self.drawn_r: torch.Tensor | None = None

    @staticmethod
    def prepare(state):
        """Own, contiguous buffers (init may share tensors between fields; kernels write in place)."""
        fields = {k: v.clone(memory_format=torch.contiguous_format) for k, v in vars(state).items()}
        return type(state)(**fields)

    def warm_up(self, s, best_x, hit, it, best_f) -> float:
        """Compile every kernel of an iteration at once (`compiled_together`), by calling it
        with nothing launched, before a graph's warm-up would compile them one after another
        as it launches them; returns the seconds it took (0 where Triton cannot)."""
        triton_ahead.wait()  # (Triton's one-time work, if started ahead: never beside a compile's)
        if not can_compile_together():
            return 0.0
        started, spare = time.perf_counter(), self.spare
        with compiled_together():
            self.calls_to_compile(s, best_x, hit, it, best_f)
        self.spare = spare
        return time.perf_counter() - started

    def calls_to_compile(self, s, best_x, hit, it, best_f) -> None:
        """The calls that launch every kernel specialisation the steps will (`warm_up`)."""
        self(s, best_x, hit, it, best_f, record=torch.empty_like(best_f))  # the history row as a graph's steps pass it

    def move_and_select(self, kernel, args: dict, x_new: torch.Tensor, f_out: torch.Tensor, **options) -> None:
        """Launch the per-block kernel: once with the objective inline, else move, evaluate
        `x_new` with the engine's (NaN-guarded) problem, then select. `options`: Triton's
        launch options (launch_pdl)."""
        grid = (self.blocks, self.runs)
        if self.fitness:
            launch(kernel, grid, f_in_ptr=f_out, MOVE=True, SELECT=True, **args, **options)
        else:
            launch(kernel, grid, f_in_ptr=f_out, MOVE=True, SELECT=False, **args, **options)
            compiling = compiling_only()  # (then nothing has moved: no point to evaluate, nor NaN to count)
            f_in = f_out if compiling else self.problem.evaluate(x_new)
            launch(kernel, grid, f_in_ptr=f_in, MOVE=False, SELECT=True, **args, **options)

    def random_args(self, x: torch.Tensor) -> dict:
        r = self.given_r if self.given_r is not None else self.drawn_r
        return dict(r_ptr=x if r is None else r, seed=self.seed, RPD=x.numel(), GIVEN_R=self.given_r is not None,
                    EMIT_R=self.given_r is None and self.drawn_r is not None, WIDE=x.numel() >= 2**31)

    def other_buffers(self, s):
        """Empty buffers like `s` for an update that reads `s` while it writes the next
        population: the previous iteration's `s`, unless a graph replay left the state there."""
        out = self.spare
        if out is None or out.x.data_ptr() == s.x.data_ptr():
            out = type(s)(**{k: torch.empty_like(v) for k, v in vars(s).items()})
        self.spare = s
        return out

    def track_args(self, best_x, hit, it, best_f, record) -> dict:
        """The engine's bookkeeping arguments of a per-run kernel (see track_best).

        A graph's history rows (`record`) are rows of one (chunk, runs) tensor: for one run in
        float32, three rows in four start off Triton's 16-byte alignment, and a kernel
        specialised on the pointer's alignment was built again, alone, inside the first
        capture, after the set-up had compiled the others together (FEP at paper
        004's size, set-up with empty caches 3.23 s before, 1.79 s after, H100 machine). The
        kernels that take `record_ptr` do not specialise on it (`do_not_specialize`)."""
        return dict(best_x_ptr=best_x, best_f_ptr=best_f, hit_ptr=hit, it_ptr=it,
                    record_ptr=self.unrecorded if record is None else record, counter_ptr=self.counter,
                    coef_ptr=self.coef, HAS_TARGET=self.target is not None)

    def reduce_args(self) -> dict:
        """Tile and warps of a per-run kernel that reduces this iteration's block bests."""
        return dict(BLOCK_B=min(4096, triton.next_power_of_2(self.blocks)), num_warps=4 if self.blocks <= 1024 else 8)
