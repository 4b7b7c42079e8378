"""The fast path on CUDA: a compiled step, replayed `chunk` steps at a time from a CUDA graph.

Small populations are dominated by kernel-launch and Python overhead, not by arithmetic.
`GraphStepper` removes both: it compiles the engine's pure "advance one iteration" function
(the algorithm's step plus best-so-far tracking) with `torch.compile` (fusing elementwise
work), captures `chunk` consecutive calls into one CUDA graph over static state buffers, and
replays that graph. The host then only checks stop criteria between chunks.

Random numbers: graph capture registers the device's default generator, so each replay
draws fresh numbers from the run's stream (the engine's `RngStream` stays in charge).
Without compilation a replay draws exactly the numbers the eager steps would: the graph
path then gives bit-identical results, which the tests use. Compiled steps use inductor's
own random streams: same distributions, different numbers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import warnings

import torch

from .. import triton_ahead
from .compiled import compiled_step

#: Steps per captured graph by default: long enough to amortise a replay's host cost,
#: short enough that stop criteria and progress stay responsive.
DEFAULT_CHUNK = 64


def _flatten(value) -> list[torch.Tensor]:
    if dataclasses.is_dataclass(value):
        return [getattr(value, f.name) for f in dataclasses.fields(value)]
    return [value]


def clone_carry(carry: tuple) -> tuple:
    return tuple(
        dataclasses.replace(c, **{f.name: getattr(c, f.name).clone() for f in dataclasses.fields(c)})
        if dataclasses.is_dataclass(c) else c.clone()
        for c in carry
    )


@contextlib.contextmanager
def _no_collection():
    """Python's cyclic garbage collector paused.

    A collection during a capture may free another object's CUDA graph or tensors (a user's
    reference cycle holding a runner), which the capture does not allow: it fails with
    "operation failed due to a previous error during capture". Pausing costs nothing; a
    full collection before every capture (torch's force_cudagraph_gc) would cost start-up
    time for each run set, and garbage waits only until the capture ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class GraphStepper:
    """Advance a runner's tensors `chunk` iterations per CUDA-graph replay."""

    def __init__(self, advance, carry: tuple, chunk: int, compile_step: bool, counters: tuple = (),
                 sample=None) -> None:
        """`advance(*carry, record=row) -> carry'` is one iteration (pure, or in place on
        `carry`'s tensors); it writes the step's best_f (the last carry item) into `row`,
        the step's row of the chunk's history. `counters`: tensors outside `carry` that
        `advance` updates in place (NaN counts, a Philox counter); the warm-up leaves them as
        they were. `sample(carry) -> tensors`: what else to keep of every step of a chunk (in
        `samples`, one (chunk, ...) buffer per tensor; several objectives: the population's
        values), copied inside the graph so that the host reads them without a synchronisation.
        """
        self.chunk = chunk
        self.compiled = False
        self.sample = sample
        fn = advance
        if compile_step:
            triton_ahead.wait()  # (inductor sets Triton up too: not while that thread does)
            try:
                fn = compiled_step(advance)  # a frame of its own, whole or an error (compiled.py)
                self._warm_up(fn, carry, counters)
                self.compiled = True
            except Exception as exc:  # noqa: BLE001 - any compiler failure falls back
                warnings.warn(
                    f"torch.compile could not compile this step ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); "
                    "replaying the uncompiled step from a CUDA graph instead",
                    RuntimeWarning,
                    stacklevel=3,
                )
                fn = advance
        if not self.compiled:  # called as it will be captured: with a history row (kernels
            # specialised on it, e.g. Triton's, are built now, not during capture)
            self._warm_up(lambda *c: fn(*c, record=torch.empty_like(c[-1])), carry, counters)
        self._capture(fn, carry)

    def _warm_up(self, fn, carry, counters) -> None:
        """Run once on a side stream (on copies, so the runs do not advance) before capture."""
        saved = [c.clone() for c in counters]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        generator = torch.cuda.default_generators[torch.cuda.current_device()]
        rng = generator.get_state()
        with torch.cuda.stream(stream), torch.no_grad():
            out = fn(*clone_carry(carry))
            if self.sample is not None:
                self.sample(out)
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        generator.set_state(rng)  # warm-up draws do not count
        for c, value in zip(counters, saved):
            c.copy_(value)

    def _capture(self, fn, carry) -> None:
        self.static = carry = clone_carry(carry)
        self.history = torch.empty(self.chunk, *carry[-1].shape, device=carry[-1].device, dtype=carry[-1].dtype)
        shapes = [] if self.sample is None else self.sample(carry)
        self.samples = [torch.empty(self.chunk, *t.shape, device=t.device, dtype=t.dtype) for t in shapes]
        self.graph = torch.cuda.CUDAGraph()
        generator = torch.cuda.default_generators[torch.cuda.current_device()]
        rng = generator.get_state()
        chained = getattr(fn, "chained", contextlib.nullcontext)  # (fused kernels whose launches chain: cuda_chain)
        with _no_collection(), torch.no_grad(), torch.cuda.graph(self.graph):
            out = carry
            with chained():
                out = self._steps(fn, out)
            for dst, src in zip(self._tensors(self.static), self._tensors(out)):
                if dst.data_ptr() != src.data_ptr():  # steps that work in place return the buffers
                    dst.copy_(src)
        generator.set_state(rng)  # capture draws nothing real; replays will
        torch.cuda.synchronize()

    def _steps(self, fn, out) -> tuple:
        """The chunk's steps, each with its history row (and samples)."""
        for k in range(self.chunk):
            if self.compiled:  # a compiled step is called as it was warmed up: no recompilation
                out = fn(*out)
                self.history[k].copy_(out[-1])
            else:
                out = fn(*out, record=self.history[k])
            if self.samples:
                for buffer, value in zip(self.samples, self.sample(out)):
                    buffer[k].copy_(value)
        return out

    @staticmethod
    def _tensors(carry) -> list[torch.Tensor]:
        return [t for item in carry for t in _flatten(item)]

    def load(self, carry: tuple) -> None:
        """Copy the runner's current tensors into the static buffers."""
        for dst, src in zip(self._tensors(self.static), self._tensors(carry)):
            if dst.data_ptr() != src.data_ptr():
                dst.copy_(src)

    def replay(self) -> tuple:
        """`chunk` iterations; returns the advanced carry (the static buffers)."""
        self.graph.replay()
        return self.static
