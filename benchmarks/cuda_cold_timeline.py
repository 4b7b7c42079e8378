"""Where a first CUDA run's set-up goes: a timeline of one `heuriscale run` with empty caches.

`benchmarks/first_run.py` says how much longer a first run takes than a warm one (issue 30:
at most 3 s on CUDA); this says where the difference goes. A child process with empty Triton
and inductor caches runs the CLI command with Triton's compiler instrumented: each kernel's
compile (its Python front end `make_ir` and every backend stage: ttir, ttgir, llir, ptx, cubin),
each external tool Triton starts (ptxas, the C compiler for launchers and for its driver
module), Triton's one-time work (`heuriscale.triton_ahead`, started before torch's import as
the command line does) and the engine's phases (kernels compiled together, launchers built,
the graph's warm-up and capture), with the thread each ran on. Then the same with the caches
it left.

    PYTHONPATH=src python3 benchmarks/cuda_cold_timeline.py fep --problem fep-f5 --pop 6400 --engine fused
    PYTHONPATH=src python3 benchmarks/cuda_cold_timeline.py --config "fep paper 004" --iters 20
        # first_run.py's configurations, with their fast engine

Times are seconds from the child's start; a stage's time includes waiting for the GIL while
other threads run Python. The child imports Triton (to instrument it) before it starts
`triton_ahead`'s thread, which the command line does not: there, that thread imports Triton
(0.1-0.2 s) before its first step, the library hash.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

T0 = time.perf_counter()
EVENTS: list[tuple[float, float, str, str]] = []  # (start, end, thread, what)


def _timed(what, fn):
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            EVENTS.append((started - T0, time.perf_counter() - T0, threading.current_thread().name,
                           what(*args, **kwargs) if callable(what) else what))
    wrapper.__wrapped__ = fn
    return wrapper


def _kernel_name(src) -> str:
    fn = getattr(src, "fn", None)
    return getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", "?")


def instrument_triton() -> None:
    """Wrap Triton's compiler and the external tools it starts in timers (imports no torch)."""
    import triton
    import triton.compiler
    import triton.compiler.compiler as cc
    from triton.backends.nvidia.compiler import CUDABackend

    inner_compile = cc.compile
    current = threading.local()

    def compile_(src, *args, **kwargs):
        current.kernel = _kernel_name(src)
        return inner_compile(src, *args, **kwargs)

    timed_compile = _timed(lambda src, *a, **k: f"compile {_kernel_name(src)}", compile_)
    triton.compiler.compile = cc.compile = triton.compile = timed_compile

    make_ir = cc.ASTSource.make_ir
    cc.ASTSource.make_ir = _timed(lambda self, *a, **k: f"  front end {_kernel_name(self)}", make_ir)

    add_stages = CUDABackend.add_stages

    def stages_(self, stages, options, *args, **kwargs):
        add_stages(self, stages, options, *args, **kwargs)
        for name, fn in list(stages.items()):
            stages[name] = _timed(lambda *a, _n=name, **k: f"  {_n} {getattr(current, 'kernel', '?')}", fn)
    CUDABackend.add_stages = stages_

    popen_init, popen_wait = subprocess.Popen.__init__, subprocess.Popen.wait

    def init(self, args, *a, **k):
        self._timeline = (time.perf_counter(), Path(str(args[0] if isinstance(args, (list, tuple)) else args)).name)
        popen_init(self, args, *a, **k)

    def wait(self, *a, **k):
        rc = popen_wait(self, *a, **k)
        started, name = getattr(self, "_timeline", (None, None))
        if started is not None:
            EVENTS.append((started - T0, time.perf_counter() - T0, threading.current_thread().name,
                           f"    tool {name}"))
            self._timeline = (None, None)
        return rc
    subprocess.Popen.__init__, subprocess.Popen.wait = init, wait

    from heuriscale import triton_ahead

    triton_ahead._prepare = _timed("Triton's one-time work (triton_ahead)", triton_ahead._prepare)
    triton_ahead.wait = _timed("engine: waiting for triton_ahead", triton_ahead.wait)


def instrument_engine() -> None:
    """Wrap the engine's set-up phases in timers."""
    from heuriscale.engine import graph
    from heuriscale.engine.kernels import cuda_common

    together = cuda_common.compiled_together

    class _Together:
        def __init__(self, *a, **k):
            self.cm = together(*a, **k)

        def __enter__(self):
            self.started = time.perf_counter()
            return self.cm.__enter__()

        def __exit__(self, *exc):
            out = self.cm.__exit__(*exc)
            EVENTS.append((self.started - T0, time.perf_counter() - T0, threading.current_thread().name,
                           "engine: kernels compiled together (and launchers)"))
            return out
    cuda_common.compiled_together = _Together
    cuda_common.build_launcher = _timed("  launcher built ahead", cuda_common.build_launcher)
    for name in ("_warm_up", "_capture"):
        method = vars(graph.GraphStepper)[name]
        if isinstance(method, staticmethod):
            setattr(graph.GraphStepper, name, staticmethod(_timed(f"engine: graph {name[1:]}", method.__func__)))
        else:
            setattr(graph.GraphStepper, name, _timed(f"engine: graph {name[1:]}", method))


def child(argv: list[str]) -> None:
    """As the command line does: Triton's one-time work starts, then torch is imported."""
    import runpy

    instrument_triton()
    from heuriscale import triton_ahead

    engine = argv[argv.index("--engine") + 1] if "--engine" in argv else "auto"
    triton_ahead.start(engine)
    started = time.perf_counter()
    import torch
    EVENTS.append((started - T0, time.perf_counter() - T0, "MainThread", "import torch"))
    instrument_engine()
    sys.argv = ["heuriscale", "run", *argv]
    started = time.perf_counter()
    try:
        runpy.run_module("heuriscale", run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    finally:
        EVENTS.append((started - T0, time.perf_counter() - T0, "MainThread", "heuriscale run"))
        print("TIMELINE " + json.dumps(sorted(EVENTS)))


def show(events: list, result: dict) -> None:
    print(f"  engine {result['extra']['engine']}, set-up {result['extra']['setup_time']:.2f} s, "
          f"run {result['wall_time']:.2f} s")
    for start, end, thread, what in events:
        print(f"  {start:7.2f} {end:7.2f} {end - start:6.2f}  {thread[:18]:18s} {what}")
    totals: dict[str, float] = {}
    for start, end, _, what in events:
        parts = what.split()
        if parts[0] in ("ttir", "ttgir", "llir", "ptx", "cubin", "front", "tool"):
            key = " ".join(parts[:2]) if parts[0] in ("front", "tool") else parts[0]
            totals[key] = totals.get(key, 0.0) + end - start
    print("  summed over threads: " + ", ".join(f"{k} {v:.2f} s" for k, v in sorted(totals.items())))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2:])
    argv = sys.argv[1:]
    if argv[:1] == ["--config"]:
        sys.path.insert(0, str(Path(__file__).parent))
        from first_run import CONFIGS
        args, engine = CONFIGS[argv[1]]
        argv = args.split() + ["--engine", engine] + argv[2:]
    with tempfile.TemporaryDirectory() as caches, tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**os.environ, "TRITON_CACHE_DIR": f"{caches}/triton", "TORCHINDUCTOR_CACHE_DIR": f"{caches}/inductor"}
        for label in ("empty caches", "caches left by the first"):
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, __file__, "--child", *argv, "-q", "--seed", "0", "--json",
                                   out.name], env=env, capture_output=True, text=True)
            wall = time.perf_counter() - started
            print(f"{' '.join(argv)}: {label}, process {wall:.2f} s")
            lines = [line for line in proc.stdout.splitlines() if line.startswith("TIMELINE ")]
            if proc.returncode != 0 or not lines:
                print(proc.stdout[-2000:], proc.stderr[-3000:])
                raise SystemExit(1)
            show(json.loads(lines[-1][len("TIMELINE "):]), json.load(open(out.name)))


if __name__ == "__main__":
    main()
