"""Compile the Triton kernels a piece of code launches for an H100 (sm_90), on a machine without a GPU.

Triton's interpreter (TRITON_INTERPRET=1: how the CPU suite runs the fused kernels) executes
a kernel's Python line by line on NumPy arrays; it never builds Triton IR, so it misses what
only the compiler checks (a loop-carried variable that changes type, a scalar where a tile is
expected, an op the GPU backend lacks). Triton can also compile for a GPU it does not see:
`triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))` builds the PTX and, with
the ptxas that Triton bundles, the cubin. This module joins the two:

1. `recording(...)` (interpreter mode) runs code that launches kernels and notes each launch:
   the kernel and the specialisation a real launch with the same arguments would compile,
   computed by Triton's own binder (the one `JITFunction.run` calls) for the sm_90 backend:
   argument types (tensors '*fp32', '*i64', ...; ints 'i32'/'i64' by magnitude; floats 'fp32';
   bools 'u1'), the values of constexprs (an int argument equal to 1 becomes one, as on the
   GPU), alignment attributes (pointers and ints divisible by 16), launch options (num_warps).
2. `compile_launches(...)` (compiler mode) compiles each distinct launch from its kernel's
   JITFunction and returns each one's error, if any.

Why two modes, and so two processes: TRITON_INTERPRET is read when `@triton.jit` decorates a
function, at its module's import. In interpreter mode the kernels and every device function
they call are `InterpretedFunction`s, which Triton's compiler cannot compile (it resolves a
kernel's callees from the module's globals), and the interpreter patches `triton.language`
for the process. So the compile runs in a fresh Python with TRITON_INTERPRET=0, where the same
modules imported give `JITFunction`s. Launches cross between the two as JSON, kernels (and
`@triton.jit` functions passed as constexprs) named by "module:qualname". `recorded` and
`compiled` run their half in this process when it is in that mode, else in child processes
(`python tests/triton_aot.py record|compile`; two compile at once).

Compiles go through Triton's on-disk cache (keyed by the source of the kernel and of every
function it calls, the specialisation, the options and Triton's version), so an unchanged
kernel is compiled once per machine; a failed compile is never cached.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

#: The GPU the kernels are compiled for: an H100 (compute capability 9.0, warps of 32).
H100 = ("cuda", 90, 32)


def interpreting() -> bool:
    """Whether `@triton.jit` makes InterpretedFunctions in this process (TRITON_INTERPRET=1)."""
    from triton import knobs

    return bool(knobs.runtime.interpret)


def _name(fn) -> str:
    """'module:qualname' of a Python function (what a child process imports)."""
    return f"{fn.__module__}:{fn.__qualname__}"


def _resolve(name: str):
    module, _, qualname = name.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _backend(target=H100):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    return make_backend(GPUTarget(*target))


class _Specialiser:
    """Triton's binder for an interpreted kernel: JITFunction.run's first step, for sm_90."""

    def __init__(self, target=H100) -> None:
        self.backend = _backend(target)
        self.binders = {}  # the interpreted kernel's Python function -> (JITFunction, binder)

    def binder(self, kernel):
        from triton.runtime.jit import JITFunction, create_function_from_signature

        if kernel.fn not in self.binders:
            # A JITFunction of the same function and decorator arguments (do_not_specialize, ...):
            # built only for its parameters, never compiled here.
            twin = JITFunction(kernel.fn, **kernel.kwargs)
            self.binders[kernel.fn] = twin, create_function_from_signature(twin.signature, twin.params, self.backend)
        return self.binders[kernel.fn]

    def launch(self, kernel, args, kwargs) -> dict:
        twin, binder = self.binder(kernel)
        bound, specialization, options = binder(*args, **kwargs)
        signature, constexprs, attrs = {}, {}, {}
        for name, (kind, spec) in zip(twin.arg_names, specialization):
            signature[name] = kind
            if kind == "constexpr":
                constexprs[name] = _constexpr_json(bound[name])
            elif isinstance(spec, str):  # "D": divisible by 16, "": nothing known
                attrs[name] = self.backend.parse_attr(spec)
        return dict(kernel=_name(kernel.fn), signature=signature, constexprs=constexprs, attrs=attrs,
                    options=dict(options))


def _constexpr_json(value):
    if callable(value) and hasattr(value, "fn"):  # a @triton.jit function (InterpretedFunction or JITFunction)
        return {"jit_function": _name(value.fn)}
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise TypeError(f"cannot record a constexpr of type {type(value).__name__}: {value!r}")
    return value


def _constexpr_value(value):
    return _resolve(value["jit_function"]) if isinstance(value, dict) else value


def launch_key(launch: dict) -> str:
    return json.dumps(launch, sort_keys=True)


def describe(launch: dict) -> str:
    """One line naming a launch: its kernel, types of non-constexpr arguments and constexprs."""
    types = ", ".join(f"{k}: {v}" for k, v in launch["signature"].items() if v != "constexpr")
    consts = ", ".join(f"{k}={v['jit_function'] if isinstance(v, dict) else v!r}"
                       for k, v in launch["constexprs"].items())
    return f"{launch['kernel']}({types}; {consts}; {launch['options']})"


@contextmanager
def recording(target=H100):
    """Note every kernel launch made inside the block (interpreter mode); yields the list of
    distinct launches, filled as they happen. The kernels still run, interpreted."""
    from triton.runtime.interpreter import InterpretedFunction

    if not interpreting():
        raise RuntimeError("recording kernel launches needs Triton's interpreter: set TRITON_INTERPRET=1 before "
                           "the kernels' modules are imported (or use recorded(...))")
    specialiser, seen, launches = _Specialiser(target), set(), []
    interpreted_run = InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        launch = specialiser.launch(self, args, kwargs)
        if (key := launch_key(launch)) not in seen:
            seen.add(key)
            launches.append(launch)
        return interpreted_run(self, *args, grid=grid, warmup=warmup, **kwargs)

    InterpretedFunction.run = run
    try:
        yield launches
    finally:
        InterpretedFunction.run = interpreted_run


def record(workload: str) -> list[dict]:
    """The distinct launches of `workload()` ('module:function'), in interpreter mode."""
    with recording() as launches:
        _resolve(workload)()
    return launches


def compile_launches(launches: list[dict], target=H100) -> list[dict]:
    """Compile each launch for `target` (compiler mode); per launch {"error": str | None,
    "seconds": float}. Ends at the cubin: Triton's frontend, its passes to LLVM IR, PTX, ptxas."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if interpreting():
        raise RuntimeError("compiling kernels needs TRITON_INTERPRET unset (or 0) when they are imported "
                           "(or use compiled(...))")
    results = []
    for launch in launches:
        start = time.perf_counter()
        try:
            kernel = _resolve(launch["kernel"])
            arg_names = kernel.arg_names
            src = ASTSource(kernel, launch["signature"],
                            {k: _constexpr_value(v) for k, v in launch["constexprs"].items()},
                            {(arg_names.index(k),): v for k, v in launch["attrs"].items()})
            compiled = triton.compile(src, target=GPUTarget(*target), options=launch["options"])
            error = None if compiled.asm.get("cubin") else "no cubin came out of the compile"
        except Exception as e:  # the compiler's own message names the line and what is wrong
            error = f"{type(e).__name__}: {e}"
        results.append({"error": error, "seconds": time.perf_counter() - start})
    return results


def recorded(workload: str) -> list[dict]:
    """`record(workload)`: here if this process interprets kernels, else in a child that does."""
    if interpreting():
        return record(workload)
    return _children(True, "record", [workload])[0]


def compiled(launches: list[dict], workers: int = 2) -> list[dict]:
    """`compile_launches(launches)`: here if this process compiles kernels, else in `workers`
    children that do, each given every `workers`-th launch (ptxas and LLVM are single-threaded)."""
    if not interpreting():
        return compile_launches(launches)
    shares = [launches[k::workers] for k in range(workers) if launches[k::workers]]
    results = [None] * len(launches)
    for k, share in enumerate(_children(False, "compile", shares)):
        results[k::workers] = share
    return results


def _children(interpret: bool, command: str, payloads: list) -> list:
    """Run `python triton_aot.py command` once per payload, at the same time, in the mode asked."""
    env = dict(os.environ, TRITON_INTERPRET="1" if interpret else "0")
    here = str(Path(__file__).resolve().parent)  # the tests' modules (workloads, user objectives)
    env["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [env.get("PYTHONPATH")])])
    children = [subprocess.Popen([sys.executable, __file__, command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env, text=True) for _ in payloads]
    with ThreadPoolExecutor(len(children)) as pool:  # feed and drain every child at once
        outputs = list(pool.map(lambda child, payload: child.communicate(json.dumps(payload)), children, payloads))
    for child, (_, stderr) in zip(children, outputs):
        if child.returncode != 0:
            raise RuntimeError(f"`{command}` in a child process (TRITON_INTERPRET={env['TRITON_INTERPRET']}) "
                               f"failed:\n{stderr[-4000:]}")
    return [json.loads(stdout.strip().splitlines()[-1]) for stdout, _ in outputs]


def main() -> None:
    command, payload = sys.argv[1], json.loads(sys.stdin.read())
    result = record(payload) if command == "record" else compile_launches(payload)
    print(json.dumps(result))  # the last line of stdout: what _children reads


if __name__ == "__main__":
    main()
