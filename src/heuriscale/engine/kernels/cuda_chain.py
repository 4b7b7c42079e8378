"""Iterations whose launches form a chain: each launch finishes the one before it.

A population-wide step (PSO's gbest, PRS's mean deviation) needs every block of the last
iteration. Where a run has few blocks (CHAIN_BLOCKS), every program of a launch reduces the
last launch's block bests itself, from L2, at its start: no arrival count, no last block that
waits for the others and then reads their results, so one iteration is one launch whose
programs each make one round trip to memory before they compute. Block 0 of each run also
does the engine's bookkeeping of the last iteration (best-so-far, target iteration, history
row), which is thus one launch behind: the launch after the last one of a chain, `settle`,
one program per run, does it for the last iteration and puts everything back in its place.

What a launch reads while another program of the same launch writes its next value (block
bests, the Philox counter, the iteration count, an algorithm's carried values) alternates
between two buffers: a launch reads the buffers its predecessor wrote and writes the other
two (`links`); the chain's first launch reads the state's own ("canonical") tensors and
`settle` writes them. So between chains (every chunk a graph replays, every single step)
the state, the counters and the history are where and what they are without chains, bit for
bit: checkpoints, resumes and the host see no difference.

The chain is on only inside `chained()` (the graph's capture of a chunk); every other call
settles at once. A run with more blocks settles after every launch: two launches per
iteration, the second one program per run.

With programmatic dependent launch (Hopper and later, PDL) a launch's programs start while
the launch before finishes and wait for it (`gdc_wait`) before they read what it wrote
(`pdl_mode`).
"""

from __future__ import annotations

import contextlib

import torch
import triton
import triton.language as tl

from ...triton_ahead import interpreted
from .cuda_common import FusedIteration, launch, where_row

#: A run's blocks up to which the launches form a chain (every program reads them all).
CHAIN_BLOCKS = 256
#: Block bests (values x padded row) up to which a program loads their rows with their values.
ALL_ROWS = 4096

try:  # Triton >= 3.4
    from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
except ImportError:  # pragma: no cover
    gdc_launch_dependents = gdc_wait = None


#: A chained kernel's PDL constexpr: no programmatic dependent launch; the next launch may
#: start once this one's programs have issued their work; it may start at once.
NO_PDL, PDL_AFTER_WORK, PDL_AT_ONCE = 0, 1, 2


def pdl_mode(programs: int, device: torch.device) -> int:
    """How a launch of `programs` programs lets the next one start: with programmatic dependent
    launch where it exists (a compiled kernel on a GPU of compute capability 9.0 or more, a
    Triton that has it); at once where they fill at most half the multiprocessors, else once
    their work is issued. Measured on an H200 (docs/benchmarks.md): PRS at paper 000's size,
    16 programs, 3.5 us an iteration without, 3.2 after work, 2.9 at once; PSO at paper 001's,
    128 programs, 4.1, 3.9 and 4.5 us (next launches waiting on the multiprocessors that the
    last one still uses)."""
    if gdc_wait is None or interpreted() or device.type != "cuda" or torch.cuda.get_device_capability(device)[0] < 9:
        return NO_PDL
    return PDL_AT_ONCE if 2 * programs <= torch.cuda.get_device_properties(device).multi_processor_count else PDL_AFTER_WORK




#: Whether the kernels run in Triton's interpreter (NumPy: no fused multiply-adds, no PTX).
_INTERPRETED = tl.constexpr(interpreted())


@triton.jit
def product_rounded(a, b):
    """a * b rounded as a product of its own, which the compiler never fuses into a later add:
    a value one launch stored and the next one added rounded twice; computed where it is used
    (a chain), a fused multiply-add would round it once, to other bits."""
    if _INTERPRETED:
        product = a * b
    elif a.dtype == tl.float64:
        product = tl.inline_asm_elementwise("mul.rn.f64 $0, $1, $2;", "=d,d,d", [a, b], dtype=tl.float64, is_pure=True,
                                            pack=1)
    else:
        product = tl.inline_asm_elementwise("mul.rn.f32 $0, $1, $2;", "=f,f,f", [a, b], dtype=tl.float32, is_pure=True,
                                            pack=1)
    return product


@triton.jit
def start_after_last(PDL: tl.constexpr):
    """With PDL (`pdl_mode`): wait until the last launch has finished and its writes are
    visible (PDL_AT_ONCE: let the next one start first). Without (or interpreted): nothing
    (the stream orders the launches)."""
    if PDL != 0 and not _INTERPRETED:
        if PDL == 2:
            gdc_launch_dependents()
        gdc_wait()


@triton.jit
def let_next_start(PDL: tl.constexpr):
    """PDL_AFTER_WORK, once this program's work is issued: the next launch may start."""
    if PDL == 1 and not _INTERPRETED:
        gdc_launch_dependents()


@triton.jit
def pick_row(rows, chosen):
    """The row of the tile `rows` where the row mask `chosen` holds (once), bit for bit: a
    sum of bit patterns (a float sum with zeros would make -0.0 +0.0)."""
    if rows.dtype == tl.float64:
        bits = rows.to(tl.int64, bitcast=True)
    else:
        bits = rows.to(tl.int32, bitcast=True)
    return tl.sum(tl.where(chosen[:, None], bits, 0), 0).to(rows.dtype, bitcast=True)


@triton.jit
def _first_min(f1, i1, f2, i2):
    """Whether (f1, i1) goes before (f2, i2): the smaller value, the first of equal ones (as
    tl.min's indices)."""
    return (f1 < f2) | ((f1 == f2) & (i1 < i2))


@triton.jit
def _first_min_and_count(f1, i1, n1, f2, i2, n2):
    """Combine of `store_block_best_row`'s reduction: `_first_min`'s, and NaN rows added."""
    first = _first_min(f1, i1, f2, i2)
    return tl.where(first, f1, f2), tl.where(first, i1, i2), n1 + n2


@triton.jit
def store_block_best_row(f, nan, x, rows_ok, block, run, NB, D, d, dm, block_f_ptr, block_x_ptr, nan_ptr,
                         BLOCK_P: tl.constexpr):
    """The block's best value (masked rows count as +inf; the first of equal ones) and its
    point, for the next launch (`pending_best`), and the block's NaN rows `nan` counted
    (`cuda_common.values_and_nans`): one block-wide reduction for the three, and the best
    row stored by the threads that hold it (no second reduction to gather it)."""
    lanes = tl.arange(0, BLOCK_P)
    best_f, best_i, nans = tl.reduce((tl.where(rows_ok, f, float("inf")), lanes, nan.to(tl.int32)), 0,
                                     _first_min_and_count)
    if nans > 0:
        tl.atomic_add(nan_ptr + run, nans.to(tl.int64))
    slot = run * NB + block
    tl.store(block_f_ptr + slot, best_f)
    row_ptr = block_x_ptr + slot.to(tl.int64) * D
    tl.store(row_ptr + lanes[:, None] * 0 + d[None, :], x, mask=(lanes == best_i)[:, None] & dm[None, :])


@triton.jit
def load_pending(block_f_ptr, block_x_ptr, best_f_ptr, hit_ptr, coef_ptr, run, NB, D, d, dm, BLOCK_B: tl.constexpr,
                 ALL: tl.constexpr):
    """What `finish_pending` reads, loaded where a kernel issues its other loads (a warp issues
    in order: a load after the first use of another waits for it). ALL (NB * BLOCK_D <=
    ALL_ROWS): the block bests' points too; else the first BLOCK_B values only."""
    lanes = tl.arange(0, BLOCK_B)
    slots = run * NB + lanes
    values = tl.load(block_f_ptr + slots, mask=lanes < NB, other=float("inf"))
    rows = values
    if ALL:
        rows = tl.load(block_x_ptr + slots[:, None].to(tl.int64) * D + d[None, :],
                       mask=(lanes < NB)[:, None] & dm[None, :], other=0.0)
    return values, rows, tl.load(best_f_ptr + run), tl.load(hit_ptr + run), tl.load(coef_ptr)


@triton.jit
def _first_min_and_pick(f1, i1, x1, f2, i2, x2):
    """Combine of `pending_best`'s one reduction: `_first_min`'s, with its point's bits."""
    first = _first_min(f1, i1, f2, i2)
    return tl.where(first, f1, f2), tl.where(first, i1, i2), tl.where(first, x1, x2)


@triton.jit
def pending_best(values, rows, block_f_ptr, block_x_ptr, run, NB, D, d, dm, BLOCK_B: tl.constexpr, ALL: tl.constexpr,
                 DENSE: tl.constexpr = False):
    """The last launch's best new value of run `run` and its point, from its block bests (the
    first BLOCK_B `values` and, with ALL, their points `rows`): the first block of equal
    values, as `cuda_common.reduce_blocks` picks it. DENSE (`cuda_common.tile`'s): the value,
    its block and its point in one reduction (PSO in D = 2 on an H200: 2.95 us an iteration
    against 3.09 with two; without DENSE the two took the same time)."""
    lanes = tl.arange(0, BLOCK_B)
    if ALL and DENSE:
        if rows.dtype == tl.float64:
            bits = rows.to(tl.int64, bitcast=True)
        else:
            bits = rows.to(tl.int32, bitcast=True)
        shape: tl.constexpr = rows.shape
        columns, _, bits = tl.reduce((tl.broadcast_to(values[:, None], shape), tl.broadcast_to(lanes[:, None], shape),
                                      bits), 0, _first_min_and_pick)
        m = tl.min(columns, 0)  # (the same in every column)
        x = bits.to(rows.dtype, bitcast=True)
    elif ALL:
        m, lane = tl.min(values, 0, return_indices=True)
        x = pick_row(rows, lanes == lane)
    else:
        acc = values
        acc_b = lanes
        for start in range(BLOCK_B, NB, BLOCK_B):
            f = tl.load(block_f_ptr + run * NB + start + lanes, mask=start + lanes < NB, other=float("inf"))
            take = f < acc
            acc = tl.where(take, f, acc)
            acc_b = tl.where(take, start + lanes, acc_b)
        m, lane = tl.min(acc, 0, return_indices=True)
        b = tl.sum(tl.where(lanes == lane, acc_b, 0), 0)
        x = tl.load(block_x_ptr + (run * NB + b).to(tl.int64) * D + d, mask=dm)
    return m, x


@triton.jit
def finish_pending(pending, it, block_f_ptr, block_x_ptr, best_x_ptr, best_f_ptr, hit_ptr, record_ptr, block, run,
                   NB, D, d, dm, HAS_TARGET: tl.constexpr, BLOCK_B: tl.constexpr, ALL: tl.constexpr,
                   DENSE: tl.constexpr = False):
    """The last iteration's best new value `m` and point `x` of run `run` (every program), and
    its bookkeeping (block 0): best-so-far, the target's iteration (the count `it` read, plus
    one) and its history row. `pending`: `load_pending`'s."""
    values, rows, best, hit, target = pending
    m, x = pending_best(values, rows, block_f_ptr, block_x_ptr, run, NB, D, d, dm, BLOCK_B, ALL, DENSE)
    owner = block == 0
    improved = (m < best) & owner
    tl.store(best_f_ptr + run, m, mask=improved)
    tl.store(best_x_ptr + run * D + d, x, mask=where_row(dm, improved))
    best = tl.minimum(best, m)
    if HAS_TARGET:
        tl.store(hit_ptr + run, it + 1, mask=(best <= target) & (hit < 0) & owner)
    tl.store(record_ptr + run, best, mask=owner)
    return m, x


@triton.jit
def pass_counts(count, it, counter_out_ptr, it_out_ptr, block, run, MOVE: tl.constexpr, PENDING: tl.constexpr):
    """The next launch's Philox counter (one more after a move) and iteration count (one more
    once the pending iteration's bookkeeping is done), from this launch's, by its first program."""
    if MOVE:
        count += 1
    if PENDING:
        it += 1
    first = (block == 0) & (run == 0)
    tl.store(counter_out_ptr, count, mask=first)
    tl.store(it_out_ptr, it, mask=first)


class ChainedIteration(FusedIteration):
    """Host side of a fused iteration whose launches chain (see the module's docstring).

    A subclass's kernel takes `k_in_ptr` and `k_out_ptr` for each carried tensor `k` (the
    Philox `counter`, the iteration count `it`, the algorithm's own that it passes to
    `launch_linked`) and each block field (`block_f`, `block_x`, its `block_fields`), and the
    constexprs PENDING (the last launch's bookkeeping is this launch's), ALL, PDL and BLOCK_B.
    Its host side calls `launch_linked` with the rest of the arguments."""

    def __init__(self, problem, runs: int, pop: int, block_p: int, coef: list[float], target: float | None,
                 seed: int, block_fields: dict[str, tuple[int, ...]] | None = None) -> None:
        super().__init__(problem, runs, pop, block_p, coef, target, seed)
        self.chains = self.blocks <= CHAIN_BLOCKS
        device, dtype = self.lower.device, self.lower.dtype
        shapes = {"block_f": (), "block_x": (self.dim,), **(block_fields or {})}
        # two separate tensors each (not one of two halves: each keeps Triton's 16-byte alignment)
        self.block_links = [{k: torch.empty(runs, self.blocks, *s, device=device, dtype=dtype) for k, s in shapes.items()}
                            for _ in range(2)]
        self.scratch: dict[str, list[torch.Tensor]] = {}
        self.link: int | None = None  # the buffers the last launch wrote; None: all in place
        self.last: tuple | None = None  # (kernel, arguments, canonical tensors) of the last launch
        self.pending_record: torch.Tensor | None = None  # the history row of the pending iteration
        self.chaining = False
        self.pdl = pdl_mode(self.blocks * runs, device)

    @contextlib.contextmanager
    def chained(self):
        """The calls inside chain their launches (where this run's blocks allow); leaving
        settles the last one."""
        self.chaining = True
        try:
            yield
        finally:
            self.chaining = False
            self.settle()

    def links(self, canonical: dict[str, torch.Tensor], settle: bool = False) -> dict:
        """`k_in_ptr` and `k_out_ptr` of each carried tensor and block field for this launch."""
        read = self.link
        write = None if settle else (1 if read == 0 else 0)
        args = {}
        for name, tensor in canonical.items():
            pair = self.scratch.get(name)
            if pair is None or pair[0].shape != tensor.shape or pair[0].dtype != tensor.dtype:
                pair = self.scratch[name] = [torch.empty_like(tensor) for _ in range(2)]
            args[f"{name}_in_ptr"] = tensor if read is None else pair[read]
            args[f"{name}_out_ptr"] = tensor if write is None else pair[write]
        for name in self.block_links[0]:
            args[f"{name}_in_ptr"] = self.block_links[0 if read is None else read][name]
            args[f"{name}_out_ptr"] = self.block_links[0 if write is None else write][name]
        return args

    def launch_linked(self, kernel, args: dict, carried: dict[str, torch.Tensor], it: torch.Tensor, x_new,
                      f_out) -> None:
        """This iteration's launch(es) with `args` (the kernel's own), the last one's
        bookkeeping pending in it; then `settle`, unless inside `chained()` and this run's
        blocks allow a chain. `carried`: the canonical tensors the kernel passes on (besides
        the Philox counter and the iteration count `it`)."""
        canonical = {"counter": self.counter, "it": it, **carried}
        own_record = args["record_ptr"]
        pending = self.link is not None
        args = dict(args, record_ptr=self.pending_record if pending else own_record, PENDING=pending, PDL=self.pdl,
                    ALL=self.blocks_padded() * self.block_d <= ALL_ROWS, BLOCK_B=self.blocks_padded(),
                    **self.links(canonical))
        self.move_and_select(kernel, args, x_new, f_out, **self.pdl_option())
        self.link = 1 if self.link == 0 else 0
        self.last, self.pending_record = (kernel, args, canonical), own_record
        if not (self.chaining and self.chains):
            self.settle()

    def settle(self) -> None:
        """The pending iteration's bookkeeping, and everything carried back in its place: one
        program per run."""
        if self.link is None:
            return
        kernel, args, canonical = self.last
        args = dict(args, PENDING=True, MOVE=False, SELECT=False, f_in_ptr=args["f_ptr"], record_ptr=self.pending_record,
                    **self.links(canonical, settle=True))
        launch(kernel, (1, self.runs), **args, **self.pdl_option())
        self.link, self.last, self.pending_record = None, None, None

    def book_args(self, best_x, hit, best_f, record) -> dict:
        """The engine's bookkeeping arguments of a chained kernel (see `finish_pending`)."""
        return dict(best_x_ptr=best_x, best_f_ptr=best_f, hit_ptr=hit, coef_ptr=self.coef,
                    record_ptr=self.unrecorded if record is None else record, HAS_TARGET=self.target is not None)

    def calls_to_compile(self, s, best_x, hit, it, best_f) -> None:
        """A chain of two calls: the chain's first launch, a later one, and `settle`."""
        with self.chained():
            for _ in range(2):
                self(s, best_x, hit, it, best_f, record=torch.empty_like(best_f))

    def pdl_option(self) -> dict:
        return {"launch_pdl": True} if self.pdl != NO_PDL else {}

    def blocks_padded(self) -> int:
        return min(4096, triton.next_power_of_2(self.blocks))

    def prepare(self, state):
        self.settle()  # (nothing is pending between chains; this keeps it so)
        return super().prepare(state)
