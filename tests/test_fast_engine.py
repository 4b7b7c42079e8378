"""The CUDA fast path (graph replay, compiled step) against the eager reference.

`engine="graph"` replays the uncompiled step and draws the same random numbers, so it must
equal eager exactly; `engine="compiled"` uses inductor's random streams, so it must match
eager in distribution: both checked for every algorithm in test_every_algorithm.py. Here,
the engine's own behaviour on CUDA. These run with `pytest -m gpu`; the CPU checks run
everywhere.
"""

import gc
import logging
import sys
import warnings

import pytest
import torch

import heuriscale as hs
from registered import small

def _cuda():
    if not torch.cuda.is_available():
        pytest.fail("GPU tests were selected (-m gpu) but torch sees no CUDA device")


@pytest.mark.gpu
def test_stop_criteria_stop_within_one_chunk():
    _cuda()
    chunk = 32
    r = hs.minimize("sphere", hs.PSO(pop_size=64), dim=5, target=1e-4, iters=100_000, runs=4, seed=0,
                    device="cuda", engine="graph", chunk=chunk)
    assert r.stop_reason == "target"
    reached = int(((r.evals_to_target - 64) // 64).max())  # iteration at which the last run got there
    assert reached <= r.iterations < reached + chunk + 1
    r = hs.minimize("sphere", hs.PSO(pop_size=64), dim=5, evals=64 * 101, device="cuda", engine="graph", chunk=chunk)
    assert r.iterations == 100 and r.evals == 64 * 101  # 3 chunks and 4 eager steps
    r = hs.minimize("rastrigin", hs.PSO(pop_size=64), dim=5, time_limit=0.5, device="cuda", engine="graph", chunk=chunk)
    assert r.stop_reason == "time_limit" and r.iterations % chunk == 0 and r.wall_time < 0.5 + 0.3


@pytest.mark.gpu
def test_compile_failure_falls_back_with_a_clear_message(monkeypatch):
    _cuda()

    def broken_compile(*args, **kwargs):
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(torch, "compile", broken_compile)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = hs.minimize("sphere", hs.PSO(pop_size=32), dim=3, iters=64, device="cuda", engine="compiled", chunk=16)
    assert any("could not compile" in str(w.message) for w in caught)
    assert r.extra["engine"] == "graph" and torch.isfinite(r.best_f).all()


def _compiled_run_went_wrong(name: str, problem: str, dim: int | None, dtype: str):
    """What went wrong in a short compiled run of this configuration on CUDA, or None."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = hs.minimize(problem, small(name, pop=16), dim=dim, iters=16, chunk=8, runs=2, seed=0, device="cuda",
                            dtype=dtype, engine="compiled")
        except Exception as exc:  # noqa: BLE001 - every configuration's outcome is reported
            return f"{type(exc).__name__}: {str(exc)[:300]}"
    fallback = [str(w.message) for w in caught if "could not compile" in str(w.message)]
    if r.extra["engine"] != "compiled+graph" or fallback or r.iterations != 16 or not torch.isfinite(r.best_f).all():
        return r.extra["engine"], r.iterations, fallback
    return None


@pytest.mark.gpu
def test_a_long_lived_process_keeps_every_configuration_compiled():
    """Thirty configurations compiled in one process (5 algorithms x 3 kinds of problem: a
    classic function, a rotated BBOB one, a constrained design; x 2 dtypes), more than
    dynamo's recompile limit (8) for one frame: each compiles in a frame of its own
    (engine/compiled.py), dynamo warns of nothing, and each result names what ran (a step
    that ran uncompiled would have raised inside the engine and been reported "graph")."""
    _cuda()
    records, wrong = [], []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logging.getLogger("torch._dynamo").addHandler(handler)
    try:
        for name in ("pso", "prs", "fep", "apo", "firefly"):
            for problem, dim in (("sphere", 4), ("bbob-f15", 4), ("spring", None)):
                for dtype in ("float32", "float64"):
                    if (what := _compiled_run_went_wrong(name, problem, dim, dtype)) is not None:
                        wrong.append((name, problem, dtype, what))
    finally:
        logging.getLogger("torch._dynamo").removeHandler(handler)
    assert not wrong and not records, (wrong, [rec.getMessage()[:400] for rec in records])


@pytest.mark.gpu
@pytest.mark.parametrize("engine", ["fused", "graph"])
def test_graph_replayed_chunks_never_wait_for_the_device(monkeypatch, engine):
    """Thousands of replayed chunks, the history thinning itself many times on the way and the
    milestones read in blocks: nothing between two chunks synchronises the host with the GPU
    (torch's sync debug mode raises at the first operation that would)."""
    _cuda()
    from heuriscale.engine import history as history_module

    monkeypatch.setattr(history_module, "HISTORY_SIZE", 8)  # (thins at 17 samples: about every chunk or two)
    problem, algorithm = hs.get_problem("rastrigin", dim=4), hs.PSO(pop_size=256)
    runner = hs.Runner(problem, algorithm.with_horizon(10**6), engine=engine, device="cuda", seed=0, chunk=16)
    runner.step(32)  # (capture and set-up may synchronise)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        runner.step(16 * 300)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    result = runner.result()
    assert result.iterations == 32 + 16 * 300 and 8 <= result.history_iter.numel() <= 17
    assert (result.history_f[:, 1:] <= result.history_f[:, :-1]).all()


@pytest.mark.gpu
def test_host_objective_cannot_be_captured_but_runs_the_fused_kernels():
    _cuda()
    numpy_sphere = hs.NumpyFunction(lambda X: (X**2).sum(1), 3, -1, 1)
    with pytest.raises(ValueError, match="evaluated on the host and cannot be graph-captured"):
        hs.minimize(numpy_sphere, "pso", iters=10, device="cuda", engine="graph")
    long = hs.minimize(numpy_sphere, "pso", iters=8000, device="cuda")  # (at 3,000: 1.7 s eager, ~1.72 s fused)
    assert long.extra["engine"] == "fused", long.extra["engine_reason"]  # launched around each evaluation
    assert "no graph: the problem is evaluated on the host" in long.extra["engine_reason"]
    assert hs.minimize(numpy_sphere, "de", iters=300, device="cuda").extra["engine"] == "eager"  # no fused DE


def test_graph_engines_need_cuda():
    with pytest.raises(ValueError, match="needs a CUDA device"):
        hs.minimize("sphere", "pso", dim=2, iters=10, device="cpu", engine="graph")
    with pytest.raises(ValueError, match="unknown engine 'turbo'"):
        hs.minimize("sphere", "pso", dim=2, iters=10, device="cpu", engine="turbo")
    r = hs.minimize("sphere", "pso", dim=2, iters=500, device="cpu")
    assert r.extra["engine"] in ("eager", "native")  # auto on the CPU: by timings, never a graph


@pytest.mark.gpu
def test_graph_warm_up_leaves_nan_counts_alone():
    _cuda()

    def half_nan(x):
        return torch.where(x[..., 0] > 0, torch.nan, (x * x).sum(-1))

    kw = dict(iters=64, runs=2, seed=4, device="cuda", chunk=32)
    eager = hs.minimize(hs.TorchFunction(half_nan, 3, -1.0, 1.0), hs.PSO(pop_size=16), engine="eager", **kw)
    graph = hs.minimize(hs.TorchFunction(half_nan, 3, -1.0, 1.0), hs.PSO(pop_size=16), engine="graph", **kw)
    assert (eager.nan_evals > 0).all() and torch.equal(graph.nan_evals, eager.nan_evals)


@pytest.mark.gpu
def test_no_garbage_collection_runs_while_a_graph_is_captured():
    """Python's cyclic collector may free another runner's graph and tensors at any
    allocation; inside a capture that breaks it (seen as "operation failed due to a
    previous error during capture" in a later test). Captures therefore run with the
    collector paused, even when it is set to collect at nearly every allocation."""
    _cuda()
    during_capture = []

    def watch(phase, info):
        if phase == "start":
            during_capture.append(torch.cuda.is_current_stream_capturing())

    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    gc.callbacks.append(watch)
    try:
        r = hs.minimize("rastrigin", hs.PSO(pop_size=64), dim=6, iters=32, runs=3, seed=11, device="cuda",
                        engine="graph", chunk=16)
    finally:
        gc.callbacks.remove(watch)
        gc.set_threshold(*thresholds)
    assert r.extra["engine"] == "graph" and len(during_capture) > 100  # it did collect, often
    assert not any(during_capture)


def test_launch_compiles_only_inside_compiled_together(monkeypatch):
    """A fused iteration's kernels go through `launch`: a launch outside, only a compilation
    (handed to a thread) inside, so a first run compiles all of them at once; each one's
    launcher is built once it is compiled, and all before the block ends."""
    from heuriscale.engine.kernels import cuda_common
    from heuriscale.engine.kernels.cuda_common import compiled_together, compiling_only, launch

    calls = []
    monkeypatch.setattr(cuda_common, "build_launcher", lambda compiled: calls.append(("launcher", compiled)))

    class Kernel:
        def __init__(self, name):
            self.build = [f"{name} compiled"]  # what Triton returns: one object per build

        def warmup(self, *args, grid, **kwargs):
            calls.append(("compile", grid, args, kwargs))
            return self.build

        def __getitem__(self, grid):
            return lambda *args, **kwargs: calls.append(("launch", grid, args, kwargs))

    launch(Kernel("a"), (2, 3), 1, x=2)
    assert not compiling_only()
    b, d = Kernel("b"), Kernel("d")
    with compiled_together():
        assert compiling_only()
        launch(b, (4,), 5, y=6)
        launch(b, (4,), 5, y=6)  # the same kernel again (Triton returns the same build): one launcher
        launch(d, (9,), 10)
    launch(Kernel("c"), (7,), 8)
    # each launcher is built (in a thread) once its kernel is compiled, and all before the block ends
    launchers = [call for call in calls if call[0] == "launcher"]
    assert sorted(launchers) == [("launcher", ["b compiled"]), ("launcher", ["d compiled"])]
    assert [call for call in calls if call[0] != "launcher"] == [
        ("launch", (2, 3), (1,), {"x": 2}), ("compile", (4,), (5,), {"y": 6}), ("compile", (4,), (5,), {"y": 6}),
        ("compile", (9,), (10,), {}), ("launch", (7,), (8,), {})]
    assert calls[-1][0] == "launch"


def test_a_launcher_that_cannot_be_built_ahead_is_left_to_the_first_launch(caplog):
    from concurrent.futures import Future

    from heuriscale.engine.kernels.cuda_common import build_launcher

    class Broken:  # no src or metadata, as a Triton with another driver interface might give
        pass

    class Failed:  # a compile that raised: the launch reports it
        def __init__(self):
            self.future = Future()
            self.future.set_exception(RuntimeError("PassManager::run failed"))

    with caplog.at_level("DEBUG", logger="heuriscale"):
        build_launcher(Broken())  # no error here: the launch itself reports one
        build_launcher(Failed())
    assert caplog.text.count("was not built ahead") == 2 and "its first launch builds it" in caplog.text
    assert "RuntimeError: PassManager::run failed" in caplog.text


def test_a_launcher_is_built_from_the_compile_future_without_finalising_it(monkeypatch):
    """In AsyncCompileMode a launch gives a future kernel; its launcher's thread waits for the
    compile itself and leaves the finalising (which fills Triton's kernel cache) to the main
    thread at the block's end."""
    import threading
    import types
    from concurrent.futures import Future

    import triton.runtime.driver  # noqa: F401 (the module: `triton.runtime.driver` names its object)

    from heuriscale.engine.kernels.cuda_common import build_launcher

    built = []
    monkeypatch.setattr(sys.modules["triton.runtime.driver"], "driver", types.SimpleNamespace(
        active=types.SimpleNamespace(launcher_cls=lambda src, metadata: built.append((src, metadata)))))

    class Pending:
        def __init__(self):
            self.future = Future()

        def result(self):
            raise AssertionError("finalised off the main thread")

    pending = Pending()
    thread = threading.Thread(target=build_launcher, args=(pending,))
    thread.start()
    thread.join(0.2)
    assert thread.is_alive() and not built  # waiting for the compile
    pending.future.set_result(types.SimpleNamespace(src="source", metadata="metadata"))
    thread.join(5)
    assert built == [("source", "metadata")]


def test_triton_is_prepared_ahead_only_with_a_gpu_driver_and_never_fails_a_run(monkeypatch, caplog):
    from heuriscale import triton_ahead

    monkeypatch.setattr(triton_ahead, "_thread", None)
    monkeypatch.setattr(triton_ahead, "_gpu_driver_present", lambda: False)
    triton_ahead.start("fused")
    assert triton_ahead._thread is None  # no GPU driver: nothing to prepare
    monkeypatch.setattr(triton_ahead, "_gpu_driver_present", lambda: True)
    for engine in ("eager", "graph", "native"):
        triton_ahead.start(engine)
        assert triton_ahead._thread is None  # engines that compile no Triton kernel
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    triton_ahead.start("fused")
    assert triton_ahead._thread is None  # interpreted kernels are never compiled
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    import triton.runtime.driver  # noqa: F401

    class NoDriver:  # what Triton's driver says on a machine without a GPU
        @property
        def active(self):
            raise RuntimeError("0 active drivers")
    monkeypatch.setattr(sys.modules["triton.runtime.driver"], "driver", NoDriver())
    import triton.runtime.cache

    hashed = []
    monkeypatch.setattr(triton.runtime.cache, "triton_key", lambda: hashed.append(1))  # (not 415 MB here)
    with caplog.at_level("DEBUG", logger="heuriscale"):
        triton_ahead.start("fused")
        thread = triton_ahead._thread
        assert thread is not None
        triton_ahead.start("fused")  # once per process
        assert triton_ahead._thread is thread
        triton_ahead.wait()
    assert not thread.is_alive() and hashed == [1]  # the hash first (it needs no torch), then the driver
    assert "preparing Triton ahead failed (RuntimeError: 0 active drivers)" in caplog.text


@pytest.mark.slow  # minutes under load on 2 cores: `pytest -m slow`
def test_the_command_line_prepares_triton_before_it_imports_torch():
    """`heuriscale run` on a GPU machine starts Triton's one-time work before torch's import
    (which it then overlaps); on the CPU, or with the eager engine, it starts nothing."""
    import os
    import subprocess

    code = ("import sys; from heuriscale import cli, triton_ahead; started = []\n"
            "triton_ahead._gpu_driver_present, triton_ahead._prepare = (lambda: True), (lambda: None)\n"
            "real = triton_ahead.start\n"
            "def start(engine):  # whether torch was imported when the thread was started\n"
            "    before = 'torch' in sys.modules\n"
            "    real(engine)\n"
            "    if triton_ahead._thread is not None and not started: started.append(before)\n"
            "triton_ahead.start = start\n"
            "args = sys.argv[1:]\n"
            "try: cli.app(['run', 'pso', '--iters', '2', '--pop', '4', '--dim', '2', '-q', *args])\n"
            "except SystemExit: pass\n"
            "triton_ahead.wait(); print('STARTED', started, 'torch' in sys.modules)")
    seen = {}
    for args in ((), ("--device", "cpu"), ("--engine", "eager")):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "TRITON_INTERPRET": "0"})  # (the suite interprets)
        seen[args] = out.stdout.strip().splitlines()[-1]
    assert seen[()] == "STARTED [False] True"  # started before torch was imported, and then it was
    assert seen[("--device", "cpu")] == seen[("--engine", "eager")] == "STARTED [] True"


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["pso", "prs", "fep", "firefly", "apo"])
def test_a_fused_run_compiles_its_kernels_in_its_set_up_and_launches_nothing_then(name, monkeypatch):
    from heuriscale.engine.kernels import cuda_common
    from heuriscale.engine.kernels.cuda_common import compiled_together

    _cuda()
    algo = small(name, pop=64, horizon=50)
    r = hs.Runner("rastrigin", algo, dim=8, runs=2, device="cuda", engine="fused", seed=0)
    assert r.setup_time > 0
    before = {k: v.clone() for k, v in vars(r.state).items()}
    nan = r._guarded.nan_evals.clone()
    with compiled_together():  # compiled already: nothing to build, and nothing runs
        r._kernels(r.state, r.best_x, r._hit_iter, r._it, r.best_f, record=torch.empty_like(r.best_f))
    torch.cuda.synchronize()
    assert all(torch.equal(getattr(r.state, k), v) for k, v in before.items())
    assert torch.equal(r._guarded.nan_evals, nan)
    together = hs.minimize("rastrigin", algo, dim=8, runs=2, iters=40, device="cuda", engine="fused", seed=3)
    monkeypatch.setattr(cuda_common, "can_compile_together", lambda: False)  # as before: no compile-only call
    one_by_one = hs.minimize("rastrigin", algo, dim=8, runs=2, iters=40, device="cuda", engine="fused", seed=3)
    assert torch.equal(together.best_f, one_by_one.best_f) and torch.equal(together.best_x, one_by_one.best_x)


_BUILDS_PER_PHASE = """
import json, sys, torch
from triton import knobs
import heuriscale as hs
built = []
knobs.runtime.jit_cache_hook = lambda **kw: built.append(kw["fn"].name)  # each kernel a process builds or loads
out = {}
for name in sys.argv[1:]:
    r = hs.Runner("rastrigin", hs.get_algorithm(name, pop_size=64).with_horizon(1000), dim=8, runs=1, device="cuda",
                  engine="fused", dtype="float32", seed=0)
    r.step(1)  # the set-up (kernels compiled together), one step: shorter than a chunk, no graph
    setup, built[:] = list(built), []
    r.step(2 * r.chunk)  # a graph's warm-up and capture, then replays
    out[name] = {"setup": setup, "graph": list(built), "row_1_offset": r._stepper.history[1].data_ptr() % 16}
    built.clear()
print(json.dumps(out))
"""


@pytest.mark.gpu
def test_a_graph_capture_builds_no_kernel_that_the_set_up_did_not():
    """One float32 run: three of every four rows of a graph's history start off Triton's 16-byte
    alignment, and the kernel that records them was built again, for that, inside the first
    capture, after the set-up (issue 30). In a fresh process, so that no kernel is in memory."""
    import json
    import subprocess

    _cuda()
    knobs = pytest.importorskip("triton.knobs", reason="Triton < 3.4 has no jit_cache_hook to count builds with")
    if not hasattr(knobs.runtime, "jit_cache_hook"):
        pytest.skip("this Triton has no jit_cache_hook to count builds with")
    names = ["pso", "prs", "fep", "firefly", "apo"]
    proc = subprocess.run([sys.executable, "-c", _BUILDS_PER_PHASE, *names], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    phases = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in names:
        assert phases[name]["setup"], f"{name}: the set-up built no kernel"  # (the hook works)
        assert phases[name]["row_1_offset"] != 0  # (the case in point: a history row off 16 bytes)
        assert phases[name]["graph"] == [], f"{name}: built {phases[name]['graph']} after its set-up"


#: torch operations that make the host wait for the device (a tensor read as a Python number or
#: truth value, or sized by its values).
_WAITING_OPS = {"aten._local_scalar_dense.default", "aten.is_nonzero.default", "aten.item.default",
                "aten.nonzero.default", "aten.equal.default", "aten.masked_select.default", "aten.unique_dim.default",
                "aten._unique2.default"}


def test_between_replayed_chunks_the_runner_launches_three_copies_and_never_waits(monkeypatch):
    """The host's work between two replays of a chunk, with a stand-in for the CUDA graph (on
    the CPU): the chunk's history rows kept (a copy for the milestones, a slice and a copy for
    the samples), nothing read back to the host. Any per-chunk read or bookkeeping added there
    runs while the GPU waits at every chunk boundary."""
    from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

    from heuriscale.engine import runner as runner_module

    counted: list[str] = []

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            counted.append(str(func))
            return func(*args, **(kwargs or {}))

    class StandIn:  # GraphStepper's interface; its replay steps eagerly, uncounted
        def __init__(self, advance, carry, chunk, compile_step, counters=(), sample=None):
            self.advance, self.chunk, self.static, self.samples = advance, chunk, carry, []
            self.history = torch.empty(chunk, *carry[-1].shape, dtype=carry[-1].dtype)

        def load(self, carry):
            self.static = carry

        def replay(self):
            with _disable_current_modes():  # (uncounted, and at full speed)
                for k in range(self.chunk):
                    self.static = self.advance(*self.static, record=self.history[k])
            return self.static

    monkeypatch.setattr(runner_module, "GraphStepper", StandIn)
    monkeypatch.setattr(runner_module.Runner, "replays_graphs", property(lambda self: True))
    chunk, chunks = 4, 8  # 32 rows: fewer than the milestones' PENDING_ROWS, read when the result is
    runner = hs.Runner("fep-f5", hs.FEP(pop_size=16), device="cpu", seed=0, chunk=chunk, runs=2)
    runner.step(chunk)  # (the stand-in is built)
    with Count():
        runner.step(chunks * chunk)
    assert isinstance(runner._stepper, StandIn) and runner.iteration == (chunks + 1) * chunk  # (chunks replayed)
    assert not _WAITING_OPS & set(counted), counted
    assert len(counted) <= 3 * chunks, sorted(set(counted))


def test_a_graph_engines_set_up_reads_throwaway_milestones_and_leaves_the_runs_own_as_they_were(monkeypatch):
    """`History.warm_up` (called when a graph is captured) runs a milestone read, the target
    ladder's searchsorted included, so that its CUDA kernels are loaded before the steps, once
    a process for each kind of run set; the run's history and milestones do not change."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from heuriscale.engine import history as history_module

    monkeypatch.setattr(history_module, "_WARMED", set())

    runner = hs.Runner("fep-f5", hs.FEP(pop_size=16), device="cpu", seed=0, runs=2)
    runner.step(3)
    before = runner._history.state_dict()
    counted: list[str] = []

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            counted.append(str(func))
            return func(*args, **(kwargs or {}))

    with Count():
        runner._history.warm_up(64)
    after = runner._history.state_dict()
    assert "aten.searchsorted.Tensor" in counted and "aten.argmax.default" in counted, sorted(set(counted))
    counted.clear()
    with Count():
        runner._history.warm_up(64)  # (this process has read such milestones now)
    assert counted == []
    assert after.keys() == before.keys()
    for key, value in before.items():
        other = after[key]
        if isinstance(value, dict):
            assert all(torch.equal(value[k], other[k]) if torch.is_tensor(value[k]) else value[k] == other[k]
                       for k in value), key
        else:
            assert torch.equal(value, other) if torch.is_tensor(value) else value == other, key
