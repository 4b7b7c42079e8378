"""Where the time of replayed chunks goes, on a CUDA device (a diagnostic, not a benchmark).

At the Runner's default chunk of 64, FEP at paper 004's size took twice as long a generation as
one isolated replay of a chunk of 512 (speed.py); it was a one-time stall of a process's first
run set, inside the chunk-64 window only (docs/benchmarks.md). This script separates the
candidates:

- `synthetic`: graphs of 64, 448 and 3,584 dependent launches of a trivial Triton kernel with
  30 pointer arguments (FEP's launches have 20-40), of 1 or 100 programs, of one kernel or
  cycling through 7, with and without programmatic dependent launch (PDL), replayed back to
  back, alternating between two such graphs, and isolated: the cost of a node on this machine,
  and whether relaunching a graph that still runs stalls.
- `run`: a whole run (ITERS generations, seed 0) at each chunk, replays back to back (what
  speed.py times) or isolated (a synchronisation before each): the wall time per generation
  and, from CUDA events, each replay's device time per generation in order, so that
  generations early and late in a run are told apart (speed.py times different windows of the
  run at different chunks), plus the idle gap between replays.
- `kernels`: each kernel's device time per generation (torch profiler) over a chunk early in a
  run and one late in it.
- `identity`: a digest of the population after 320 generations (two trees or variants: equal
  digests mean bit-identical runs).
- `api`: the host's CUDA API calls over back-to-back chunks (torch profiler; a chrome trace
  beside the JSON).

Run on the device: `PYTHONPATH=src python3 benchmarks/chunk_gaps.py --json chunk_gaps.json`. A
process's first run set carries its one-time costs: compare it with the later ones.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import time
import warnings

import torch
import triton
import triton.language as tl

import heuriscale as hs

try:
    from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
except ImportError:  # a Triton before 3.3: no programmatic dependent launch
    gdc_launch_dependents = gdc_wait = None

CONFIGS = {
    "fep": lambda: (hs.get_problem("fep-f5"), hs.FEP(pop_size=6400)),
    "pso": lambda: (hs.get_problem("euclidean", dim=2), hs.get_algorithm("pso", preset="paper001", pop_size=65_536)),
    "prs": lambda: (hs.get_problem("rastrigin", dim=4, bounds=(-5.12, 5.12)), hs.PRS(pop_size=1024)),
}
#: Generations of a `run` case (paper 004 runs 2,000): whole chunks of 64 and of 512.
ITERS = 2048


def _median_us(values) -> float:
    return round(statistics.median(values) * 1e6, 2) if values else float("nan")


class _Timed:
    """Wraps a CUDA graph's replay: host seconds of each call, and CUDA events around it."""

    def __init__(self, graph) -> None:
        self.graph, self.replay = graph, graph.replay
        self.host: list[float] = []
        self.events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
        graph.replay = self  # (instance attribute: GraphStepper calls self.graph.replay())

    def __call__(self) -> None:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        t = time.perf_counter()
        self.replay()
        self.host.append(time.perf_counter() - t)
        end.record()
        self.events.append((start, end))

    def restore(self) -> None:
        del self.graph.replay

    def spans(self) -> tuple[list[float], list[float]]:
        """(device seconds of each replay, idle seconds between one replay's end and the next's start)."""
        torch.cuda.synchronize()
        busy = [a.elapsed_time(b) / 1e3 for a, b in self.events]
        gaps = [self.events[i][1].elapsed_time(self.events[i + 1][0]) / 1e3 for i in range(len(self.events) - 1)]
        return busy, gaps


def _runner(name: str, chunk: int) -> hs.Runner:
    problem, algorithm = CONFIGS[name]()
    return hs.Runner(problem, algorithm.with_horizon(ITERS), engine="fused", device="cuda", seed=0, chunk=chunk)


def run_case(name: str, chunk: int, mode: str) -> dict:
    """A whole run of ITERS generations after its first chunk (which builds and captures): the
    wall time per generation, and from CUDA events each replay's device time per generation,
    in order (does it change as the population converges?), and the idle gaps between them.
    `mode`: "runner" (`Runner.step`, replays back to back), "isolated" (a synchronisation
    before each chunk), "raw" (the graph's replays back to back, without the Runner's work)."""
    runner = _runner(name, chunk)
    runner.step(chunk)
    torch.cuda.synchronize()
    timed = _Timed(runner._stepper.graph)
    chunks = (ITERS - chunk) // chunk
    caught: list = []
    t0 = time.perf_counter()
    if mode == "isolated":
        for _ in range(chunks):
            torch.cuda.synchronize()
            runner.step(chunk)
        torch.cuda.synchronize()
    elif mode == "raw":
        for _ in range(chunks):
            runner._stepper.graph.replay()
        torch.cuda.synchronize()
    else:
        torch.cuda.set_sync_debug_mode("warn")  # (a synchronising op between chunks would warn)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                runner.step(chunks * chunk)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    busy, gaps = timed.spans()
    timed.restore()
    return {"algorithm": name, "chunk": chunk, "mode": mode, "generations": chunks * chunk,
            "wall_per_gen_us": round(wall / (chunks * chunk) * 1e6, 2),
            "device_per_gen_us": [round(b / chunk * 1e6, 2) for b in busy],
            "gap_before_next_us": _median_us(gaps), "replay_call_us": _median_us(timed.host),
            "synchronising_calls": sorted({str(w.message)[:120] for w in caught})}


def kernel_case(name: str, windows=(64, 512, 1536)) -> dict:
    """Each kernel's device time per generation (torch profiler) over one chunk of 64 that
    starts at each of `windows` (generations): early and late in a run."""
    from torch.profiler import ProfilerActivity, profile

    runner = _runner(name, 64)
    out: dict = {"algorithm": name}
    for start in windows:
        runner.step(start - runner.iteration)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            runner.step(64)
            torch.cuda.synchronize()
        device = {e.key[:40]: getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0.0)
                  for e in prof.key_averages()}
        rows = {k: round(t / 64, 2) for k, t in device.items() if t > 0}
        out[f"from_{start}"] = {"sum_us": round(sum(rows.values()), 2), "kernels_us": rows}
    return out


def identity_case(name: str, iters: int = 320) -> dict:
    """A digest of the population and best values after `iters` generations (seed 0): equal
    digests from two trees or variants mean bit-identical runs."""
    runner = _runner(name, 64)
    runner.step(iters)
    digest = hashlib.sha256()
    for t in (runner.state.x, runner.state.f, getattr(runner.state, "eta", runner.state.x), runner.best_f, runner.best_x):
        digest.update(t.detach().cpu().contiguous().numpy().tobytes())
    return {"algorithm": name, "iters": iters, "sha256": digest.hexdigest()[:24],
            "best_f": float(runner.best_f.min())}


@triton.jit
def _bump(p, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21,
          a22, a23, a24, a25, a26, a27, a28, a29, KIND: tl.constexpr, PDL: tl.constexpr):
    """A trivial launch with FEP-like arguments (30 pointers): one load and store (each KIND a
    kernel of its own)."""
    if PDL:  # programmatic dependent launch: wait for the launch before, then let the next one start
        gdc_wait()
        gdc_launch_dependents()
    i = tl.program_id(0)
    tl.store(p + i, tl.load(p + i) + KIND + 1)


def synthetic_case(nodes: int, replays: int, kinds: int = 1, pdl: bool = False, programs: int = 1) -> dict:
    bufs = [torch.zeros(128, device="cuda", dtype=torch.int32) for _ in range(30)]
    fn = lambda k: _bump[(programs,)](*bufs, KIND=k % kinds, PDL=pdl, **({"launch_pdl": True} if pdl else {}))
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        for k in range(kinds):
            fn(k)
    torch.cuda.synchronize()
    graphs = []
    for _ in range(2):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for k in range(nodes):
                fn(k)
        g.replay()
        graphs.append(g)
    torch.cuda.synchronize()
    out: dict = {"nodes": nodes, "kernels": kinds, "pdl": pdl, "programs": programs}
    for how, order in (("back_to_back", [0] * replays), ("ping_pong", [0, 1] * (replays // 2))):
        timers = [_Timed(g) for g in graphs]
        t0 = time.perf_counter()
        for i in order:
            graphs[i].replay()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
        host = timers[0].host[1:] + timers[1].host[1:]
        busy0, gaps0 = timers[0].spans()
        out[how] = {"wall_per_replay_us": round(wall / len(order) * 1e6, 2), "replay_call_us": _median_us(host),
                    "device_span_us": _median_us(busy0)}
        if how == "back_to_back":
            out[how]["gap_before_next_us"] = _median_us(gaps0)
        for t in timers:
            t.restore()
    timer = _Timed(graphs[0])
    for _ in range(replays):
        torch.cuda.synchronize()
        graphs[0].replay()
    torch.cuda.synchronize()
    out["isolated"] = {"replay_call_us": _median_us(timer.host), "device_span_us": _median_us(timer.spans()[0])}
    timer.restore()
    return out


def api_calls(name: str, chunk: int, chunks: int, trace: str | None) -> dict:
    """The host's CUDA API calls and torch operations over `chunks` back-to-back chunks (torch
    profiler): e.g. cudaGraphLaunch's host time per call, and any copy or synchronisation."""
    from torch.profiler import ProfilerActivity, profile

    problem, algorithm = CONFIGS[name]()
    runner = hs.Runner(problem, algorithm.with_horizon(10**7), engine="fused", device="cuda", seed=0, chunk=chunk)
    runner.step(2 * chunk)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        runner.step(chunks * chunk)
        torch.cuda.synchronize()
    if trace:
        prof.export_chrome_trace(trace)
    rows = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:20]
    return {"algorithm": name, "chunk": chunk, "chunks": chunks,
            "host_calls": [{"name": e.key[:80], "calls": e.count, "self_cpu_us_per_chunk": round(e.self_cpu_time_total / chunks, 2)}
                           for e in rows]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="synthetic,run,kernels,api", help="synthetic, run, kernels, identity, api")
    ap.add_argument("--algorithms", default="fep,pso")
    ap.add_argument("--chunks", default="64,512", help="chunk sizes to try")
    ap.add_argument("--replays", type=int, default=24, help="synthetic graphs replayed per measurement")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        driver = "unknown"
    results: dict = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": driver}
    print(json.dumps({k: results[k] for k in ("torch", "cuda", "gpu")}), flush=True)

    def attempt(part: str, fn, *fn_args) -> None:
        """One measurement; a failure is recorded and the others still run."""
        try:
            row = fn(*fn_args)
        except Exception as exc:  # noqa: BLE001 - a diagnostic: keep what the other parts measure
            row = {"args": [str(a) for a in fn_args], "error": f"{type(exc).__name__}: {exc}"[:300]}
        results.setdefault(part, []).append(row)
        print(json.dumps({"part": part, **row}), flush=True)

    parts, names = args.parts.split(","), args.algorithms.split(",")
    if "synthetic" in parts:
        for nodes, kinds, pdl, programs in ((64, 1, False, 1), (448, 1, False, 1), (448, 7, False, 1),
                                            (3584, 7, False, 1), (448, 7, False, 100), (448, 7, True, 100),
                                            (448, 7, True, 1)):  # (FEP: 448 launches a chunk of 64)
            attempt("synthetic", synthetic_case, nodes, args.replays, kinds, pdl, programs)
    for name in names:
        if "identity" in parts:
            attempt("identity", identity_case, name)
        if "run" in parts:
            for chunk in map(int, args.chunks.split(",")):
                for mode in ("runner", "isolated", "raw"):
                    attempt("run", run_case, name, chunk, mode)
        if "kernels" in parts:
            attempt("kernels", kernel_case, name)
    if "api" in parts:
        attempt("api_calls", api_calls, "fep", 64, 8, f"{args.json}.fep.trace.json" if args.json else None)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
