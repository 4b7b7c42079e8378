"""Jobs: the work of a kernel's parallel loop, compiled once as a function of its own and
called through its address.

Why: Numba compiles a `prange` body into functions of their own (the loop body, its ufunc
wrapper, the threads' wrapper), and each one links the machine-independent code of every
function the body calls and optimises all of it again: the body's helpers were optimised
and turned into machine code four or five times, which made a parallel build cost about
twice its serial twin (FEP's 12.6 s against 7.4 s, APO's 13.2 s against 6.2 s on one core
of the development machine). Called through its address, a job's code is
compiled once, for both builds, and the kernels around it are small.

    @job
    def _mutation(j, x, ...):        # returns nothing: writes into its arrays
        ...

    @kernel
    def _steps(x, ..., mutation):    # mutation: a CompiledJob
        for j in prange(jobs):
            call_job(mutation, np.int64(j), x, ...)

    mutation, selection = compiled_jobs(           # the longest first
        (_mutation, (types.int64, typeof(x), ...)),  # loaded from the disk cache, or compiled:
        (_selection, (...)))                         # on a new machine, in processes at once

The arguments' types at the call must be the job's exactly (checked when the kernel, or a
job that calls it, compiles; a forked process drops the error, and this process raises it when
it compiles that job at the kernel's first call), so a job built for other types is a compile
error, never a wrong call. A call costs from 35 ns (20 arrays, measured) to a few hundred
(the job counts references to the arrays it uses), against microseconds of work per job:
FEP and APO at 32 x 2 ran no slower than with their loops' bodies in the kernels. PSO's
and PRS's serial kernels keep theirs written out: at 32 particles PSO's iteration took 0.67
us calling its body as a job against 0.51, PRS's 1.4 against 1.0 (PRS's serial kernel
calls a block's three parts as jobs instead, 0.1-0.3 us at that size: its build halves).
Their iterations over several threads call it as a job through `spread`, a small parallel
loop, so that the body compiles beside the kernel; Firefly's, microseconds even at 32 x 2,
call their block job on one thread too (6.2 us an iteration against 6.0).

A kernel's jobs are independent compiles, and Numba compiles one function at a time in a
process: on a new machine `compiled_jobs` compiles them in processes forked for the purpose
(one per thread the native kernels may use but one, at most one per job), while this process
compiles the kernel that calls them (FEP's and APO's first native runs,
docs/benchmarks.md). A job may call other jobs (their CompiledJobs passed in as arguments,
e.g. a tuple `helpers`): FEP's offspring job calls its draws and values that way, APO's
candidates their mask and dense moves, L-SHADE's blocks their parameters, draws and
selection, CMA-ES's update its ranking, adaptation and restart, PRS's group its block's parts
(as PRS's serial kernel does), so that on a new machine each part compiles in a process of
its own, not one after another in its caller's. A call costs nothing next to a pass or block
of work; per row, it can (APO's `_candidate` stays inlined for that reason; it calls `_dense`
and `_mask_words` per row only where rows have DENSE_DIM coordinates or more, microseconds of
work each).
"""

from __future__ import annotations

import logging
import multiprocessing
import sys
import time
import warnings

import numpy as np
from llvmlite import ir
from . import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit, prange, types
from numba.core import cgutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.errors import TypingError
from numba.extending import NativeValue, intrinsic, models, register_model, typeof_impl, unbox

from .. import threads as cpu_threads


class CompiledJob:
    """The `job` function `fn` compiled for `argtypes` (Numba types; or loaded from the disk
    cache), and the address kernels call (`call_job`). Made by `compiled_jobs` on a new
    machine, it is being compiled in other processes, and its address is ready when the
    kernel that calls it first runs (that is when Numba reads it)."""

    def __init__(self, fn, argtypes, building: _Build | None = None) -> None:
        self.fn, self.argtypes, self.name = fn, tuple(argtypes), fn.__name__
        self._building = building
        self._address: int | None = None
        if building is None:
            self._resolve()

    @property
    def address(self) -> int:
        if self._address is None:
            self._building.finish()  # (then the job is in the disk cache: `_resolve` loads it)
            self._resolve()
        return self._address

    def _resolve(self) -> None:
        if self.argtypes not in self.fn.overloads:
            self.fn.compile(self.argtypes)
        compiled = self.fn.overloads[self.argtypes]  # kept alive by fn: the address stays valid
        if compiled.signature.return_type != types.none:
            raise TypeError(f"a job returns nothing (it writes into its arrays); {self.name} returns "
                            f"{compiled.signature.return_type}")
        self._address = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)


def compiled_jobs(*specs) -> tuple[CompiledJob, ...]:
    """CompiledJob(fn, argtypes) for each spec (fn, argtypes), in order.

    Jobs that neither this process nor the disk cache holds yet (a new machine) are compiled
    at once in processes forked from this one, each writing Numba's disk cache: Numba compiles
    one function at a time in a process, and a kernel's jobs are most of its build.
    Meanwhile this process goes on and compiles the kernel (which needs only the jobs' types);
    at the kernel's first call it compiles what is left of the jobs, from the back of the list
    (the forked ones take them from the front: list the longest first), waits for the others
    and loads what they built."""
    missing = [not _loaded(*spec) for spec in specs]
    building = _Build.start([s for s, m in zip(specs, missing) if m]) if any(missing) else None  # (None: here, now)
    return tuple(CompiledJob(fn, argtypes, building if m else None) for (fn, argtypes), m in zip(specs, missing))


def _loaded(fn, argtypes) -> bool:
    """Whether `fn` is compiled for `argtypes` in this process, or now is, from the disk cache
    (the first half of Numba's `Dispatcher.compile`, under its lock, without its compiling half)."""
    if tuple(argtypes) in fn.overloads:
        return True
    with global_compiler_lock:
        try:
            cres = fn._cache.load_overload(tuple(argtypes), fn.targetctx)
        except Exception:  # noqa: BLE001 (another Numba: compile as usual)
            return True
        if cres is None:
            return False
        fn.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
        fn.add_overload(cres)
    return True


#: How long a forked process may take before this one stops waiting and compiles its jobs
#: itself (a forked process that inherited a lock held by another thread would never end).
FORKED_TIMEOUT = 120.0


class _Build:
    """Jobs compiled by min(threads - 1, jobs) processes forked here (the threads set for the
    native kernels), while this one compiles the kernel that calls them, and by this one in
    `finish`; they take the jobs from the two ends of one list (one job alone is forked too:
    PSO's parallel iterations have one). A forked process only compiles (it runs neither
    torch nor a parallel region, and ends by os._exit). Whatever a forked process did not
    write to the disk cache (it failed, was killed, or took longer than FORKED_TIMEOUT) this
    process compiles in its usual way (`CompiledJob._resolve`), which reports any error. Off
    Linux (fork is unsafe on macOS, missing on Windows), with one thread, or with no way to
    start a process (no /dev/shm for the list's lock, a process limit), `start` gives None and
    this process compiles them all."""

    def __init__(self, specs: list, ends) -> None:
        self.specs, self.ends, self.forked, self.done = specs, ends, [], False

    @classmethod
    def start(cls, specs: list) -> _Build | None:
        others = min(cpu_threads.thread_limit() - 1, len(specs))
        if others < 1 or not sys.platform.startswith("linux"):
            return None
        context, build = multiprocessing.get_context("fork"), None
        try:
            build = cls(specs, context.Array("i", [0, len(specs)]))  # [next from the front, one past the last]
            with warnings.catch_warnings():  # (Python 3.12 warns of fork in a process with threads: see above)
                warnings.simplefilter("ignore", DeprecationWarning)
                for _ in range(others):
                    process = context.Process(target=build._compile_forked, daemon=True)
                    process.start()
                    build.forked.append(process)
        except (OSError, ValueError) as exc:  # (those started still help)
            logging.getLogger("heuriscale").debug("native kernels compiled in one process (%s: %s)",
                                                  type(exc).__name__, exc)
        return build if build is not None and build.forked else None

    def _take(self, front: bool) -> int | None:
        lock = self.ends.get_lock()
        if not lock.acquire(timeout=FORKED_TIMEOUT):  # (held by a process that was killed)
            return None
        try:
            if self.ends[0] >= self.ends[1]:
                return None
            if front:
                self.ends[0] += 1
                return self.ends[0] - 1
            self.ends[1] -= 1
            return self.ends[1]
        finally:
            lock.release()

    def _compile_from(self, front: bool) -> None:
        while (i := self._take(front)) is not None:
            fn, argtypes = self.specs[i]
            fn.compile(tuple(argtypes))

    def _compile_forked(self) -> None:
        try:
            self._compile_from(True)
        except BaseException:  # noqa: BLE001 (quietly: this process's compile of the job reports it)
            sys.exit(1)

    def finish(self) -> None:
        """Compile this process's share and wait for the forked ones (once)."""
        if self.done:
            return
        self.done = True
        try:
            self._compile_from(False)
        finally:
            deadline = time.monotonic() + FORKED_TIMEOUT
            for process in self.forked:
                process.join(max(0.0, deadline - time.monotonic()))
                if process.is_alive():
                    process.kill()
                    process.join()
        failed = [process.exitcode for process in self.forked if process.exitcode != 0]
        if failed:
            logging.getLogger("heuriscale").debug("a process compiling native kernels ended with %s; this one "
                                                  "compiles what it did not", failed)


class JobType(types.Type):
    """Numba's type of a CompiledJob: its argument types (so kernels specialise on them)."""

    def __init__(self, argtypes) -> None:
        self.argtypes = tuple(argtypes)
        super().__init__(name=f"CompiledJob({', '.join(map(str, self.argtypes))})")

    @property
    def key(self):
        return self.argtypes


@typeof_impl.register(CompiledJob)
def _typeof_job(job, context):
    return JobType(job.argtypes)


@register_model(JobType)
class _JobModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):  # the address
        super().__init__(dmm, fe_type, ir.IntType(64))


@unbox(JobType)
def _unbox_job(typ, obj, c):
    address = c.pyapi.object_getattr_string(obj, "address")  # NULL if the job failed to compile
    value = cgutils.alloca_once_value(c.builder, ir.Constant(ir.IntType(64), 0))
    with c.builder.if_then(cgutils.is_not_null(c.builder, address)):
        c.builder.store(c.pyapi.long_as_longlong(address), value)
        c.pyapi.decref(address)
    return NativeValue(c.builder.load(value), is_error=c.pyapi.c_api_error())


@intrinsic
def call_job(typingctx, handle, *args):
    """`fn(*args)` for the CompiledJob `handle` of fn, through its address (Numba's own
    calling convention: its errors propagate as a direct call's would)."""
    if not isinstance(handle, JobType):
        return None
    expected = tuple(types.unliteral(t) for t in handle.argtypes)
    given = tuple(types.unliteral(t) for t in args)
    if given != expected:
        raise TypingError(f"call_job: the arguments ({', '.join(map(str, given))}) are not the job's "
                          f"({', '.join(map(str, handle.argtypes))}); build the CompiledJob from these types")
    star = types.StarArgTuple.from_types(args)

    def codegen(context, builder, signature, llargs):
        address, packed = llargs
        values = [context.cast(builder, builder.extract_value(packed, i), t, want)
                  for i, (t, want) in enumerate(zip(signature.args[1], handle.argtypes))]
        fnty = context.call_conv.get_function_type(types.none, list(handle.argtypes))
        fn = builder.inttoptr(address, fnty.as_pointer())
        status, _ = context.call_conv.call_function(builder, fn, types.none, list(handle.argtypes), values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return context.get_dummy_value()

    return types.none(handle, star), codegen


@njit(cache=True, parallel=True)
def spread(groups, handle, packed):
    """call_job(handle, grp, packed) for grp in 0..groups, over the threads set: the one parallel
    loop of a kernel that is otherwise serial (PSO's, PRS's, Firefly's synchronous one). A
    small function for Numba's parallel passes, which take time for every array of the
    function they compile; packed: the job's other arguments, one tuple."""
    for grp in prange(groups):
        call_job(handle, np.int64(grp), packed)


def inner(fn=None, **options):
    """Decorator, `@inner` or `@inner(fastmath=...)`: `numba.njit(cache=True, **options)` for
    a function only compiled code calls, built without a Python or C entry point: wrapping
    a dozen arrays for Python is code Numba would build and optimise for nothing (0.3 s of
    FEP's build, 0.4 s of APO's)."""
    if fn is None:
        return lambda f: inner(f, **options)
    return njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, **options)(fn)


def job(fn=None, **options):
    """Decorator, `@job` or `@job(error_model=...)`: `fn` (a Python function returning
    nothing) compiled as a job for `CompiledJob`, an `inner` function (see there)."""
    if fn is None:
        return lambda f: job(f, **options)
    count = fn.__code__.co_argcount
    if count + 1 >= 30:  # CPython passes a call of 30 or more arguments as *args (CALL_FUNCTION_EX)
        raise TypeError(f"a job takes at most 28 arguments, {fn.__name__} takes {count}: pass some as a tuple")
    return inner(fn, **options)
