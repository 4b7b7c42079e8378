"""Jobs: the work of a kernel's parallel loop, compiled once as a function of its own and
called through its address.

Why: Numba compiles a `prange` body into functions of their own (the loop body, its ufunc
wrapper, the threads' wrapper), and each one links the machine-independent code of every
function the body calls and optimises all of it again: the body's helpers were optimised
and turned into machine code four or five times, which made a parallel build cost about
twice its serial twin (FEP's 12.6 s against 7.4 s, APO's 13.2 s against 6.2 s on one core
of the development machine, issue 30). Called through its address, a job's code is
compiled once, for both builds, and the kernels around it are small.

    @job
    def _mutation(j, x, ...):        # returns nothing: writes into its arrays
        ...

    @kernel
    def _steps(x, ..., mutation):    # mutation: a CompiledJob
        for j in prange(jobs):
            call_job(mutation, np.int64(j), x, ...)

    mutation = CompiledJob(_mutation, (types.int64, typeof(x), ...))  # compiled or loaded here

The arguments' types at the call must be the job's exactly (checked when the kernel
compiles), so a job built for other types is a compile error, never a wrong call. A call
costs from 35 ns (20 arrays, measured) to a few hundred (the job counts references to the
arrays it uses), against microseconds of work per job: FEP and APO at 32 x 2 ran no slower
than with their loops' bodies in the kernels. PSO's, PRS's and Firefly's kernels keep theirs:
their serial builds would call the body too, and at 32 particles PSO's iteration took 0.67
us that way against 0.51 (measured; their parallel builds would be 1.1 s shorter).
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import NativeValue, intrinsic, models, register_model, typeof_impl, unbox


class CompiledJob:
    """The `job` function `fn` compiled for `argtypes` (Numba types; or loaded from the disk
    cache), and the address kernels call (`call_job`)."""

    def __init__(self, fn, argtypes) -> None:
        self.argtypes = tuple(argtypes)
        if self.argtypes not in fn.overloads:
            fn.compile(self.argtypes)
        compiled = fn.overloads[self.argtypes]  # kept alive by fn: the address stays valid
        if compiled.signature.return_type != types.none:
            raise TypeError(f"a job returns nothing (it writes into its arrays); {fn.__name__} returns "
                            f"{compiled.signature.return_type}")
        self.address = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
        self.name = fn.__name__


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
    address = c.pyapi.object_getattr_string(obj, "address")
    value = c.pyapi.long_as_longlong(address)
    c.pyapi.decref(address)
    return NativeValue(value, is_error=c.pyapi.c_api_error())


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


def inner(fn=None, **options):
    """Decorator, `@inner` or `@inner(fastmath=...)`: `numba.njit(cache=True, **options)` for
    a function only compiled code calls, built without a Python or C entry point: wrapping
    a dozen arrays for Python is code Numba would build and optimise for nothing (0.3 s of
    FEP's build, 0.4 s of APO's, issue 30)."""
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
