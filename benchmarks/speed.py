"""Time per iteration: CPU, our eager, graph, compiled and fused paths, and EvoX 1.4.

    PYTHONPATH=src python3 benchmarks/speed.py --json speed.json            # everything
    PYTHONPATH=src python3 benchmarks/speed.py --only pso-paper,prs-paper   # some rows
    PYTHONPATH=src python3 benchmarks/speed.py --only 'apo-*' --no-cpu      # paper 003's rows
    PYTHONPATH=src python3 benchmarks/speed.py --profile                    # + top kernels
    PYTHONPATH=src python3 benchmarks/speed.py --paths none --chunk 512     # the fast path alone, longer graphs
    PYTHONPATH=src python3 benchmarks/speed.py --only 'apo-*' --cold        # + whole runs, cold and warm

`--cold` adds whole runs (the configuration's iterations, `minimize`) of eager, compiled,
fused and auto, each in a fresh process: first with empty Triton and inductor caches (a new
machine: the set-up includes building the kernels), then again with the caches that left
(every later run); each reports its set-up (build + capture), its steps and its total.

The fast path is what `engine="auto"` picks on CUDA for a long run: the fused Triton kernels
where they exist and are picked for the configuration (`why_not_picked`), else the compiled
step; both are shown where both exist.
Each configuration of issue 6 is timed after a warm-up (which includes compilation and
graph capture, reported separately as setup). Full runs of the fast path are timed end to
end when `--full` is given; otherwise full-run times are time/iteration x iterations.
The floor column is the least time one iteration needs on the hardware: bytes that must
cross HBM once at the card's bandwidth (memory-bound rows) or FLOPs at its FP32 peak
(Firefly); see docs/benchmarks.md for how each is computed.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import torch

import heuriscale as hs
from heuriscale.engine.device import synchronize
from heuriscale.engine.kernels import why_not_fused, why_not_picked

# H100 SXM5 80 GB (HBM3): 3.35 TB/s, 67 TFLOP/s FP32 (non-tensor). Override on other cards.
PEAK_BANDWIDTH = 3.35e12
PEAK_FP32 = 67e12


@dataclass
class Config:
    key: str
    label: str
    problem: callable
    algorithm: callable
    iters: int  # a full run
    runs: int = 1
    target_s: float | None = None  # target for the full run (or per iteration if per_iter_target)
    per_iter_target: bool = False
    floor_s: float = 0.0  # per iteration
    floor_how: str = ""
    evox: str | None = None
    dtype: str = "float32"


def _pso_bytes(n: int, d: int) -> float:
    # a fused step must read x, v, pbest_x and write x, v (and pbest_x where improved): 6 arrays
    return 6 * n * d * 4


CONFIGS = [
    Config("pso-paper", "PSO, paper 001: 65,536 x D=2, euclidean, w=1 c=2",
           lambda: hs.get_problem("euclidean", dim=2), lambda: hs.get_algorithm("pso", preset="paper001", pop_size=65_536),
           100_000, target_s=1.0, floor_s=_pso_bytes(65_536, 2) / PEAK_BANDWIDTH,
           floor_how="6 arrays of N*D fp32 through HBM", evox="paper"),
    Config("pso-1m", "PSO: 1,000,000 x D=30, sphere",
           lambda: hs.get_problem("sphere", dim=30), lambda: hs.PSO(pop_size=1_000_000), 200,
           floor_s=_pso_bytes(1_000_000, 30) / PEAK_BANDWIDTH, floor_how="6 arrays of N*D fp32 through HBM", evox="sphere"),
    Config("prs-paper", "PRS, paper 000: Rastrigin D=4, pop 1,024",
           lambda: hs.get_problem("rastrigin", dim=4, bounds=(-5.12, 5.12)), lambda: hs.PRS(pop_size=1024),
           12_000, target_s=0.15, floor_s=4 * 1024 * 4 * 4 / PEAK_BANDWIDTH, floor_how="theta in/out + x + r, N*D fp32"),
    Config("apo-paper", "APO, paper 003: Bent Cigar D=1,000, 10,000 protozoa",
           lambda: hs.get_problem("bent-cigar", dim=1000), lambda: hs.APO(pop_size=10_000), 1000,
           target_s=5.0, floor_s=6 * 10_000 * 1000 * 4 / PEAK_BANDWIDTH,
           floor_how="sorted x read, candidate write+read, selection read+write, x write: 6 N*D fp32"),
    # Paper 003's other configurations: Table 2's population sizes (D = 1,000, 1,000 iterations), an
    # objective inside the fused kernels (Griewank; bent cigar is evaluated between two launches),
    # the like-for-like rerun's shifted and rotated functions (a D x D product per evaluation),
    # Table 3's spring (float64; Table 4's Otsu runs 50 iterations: eager, below one chunk).
    *[Config(f"apo-{n // 1000}k", f"APO, paper 003: Bent Cigar D=1,000, {n:,} protozoa",
             lambda: hs.get_problem("bent-cigar", dim=1000, bounds=(-100, 100)), lambda n=n: hs.APO(pop_size=n), 1000,
             floor_s=6 * n * 1000 * 4 / PEAK_BANDWIDTH, floor_how="as apo-paper")
      for n in (1000, 2000, 5000)],
    Config("apo-griewank", "APO, paper 003: Griewank D=1,000, 10,000 protozoa (inline objective)",
           lambda: hs.get_problem("griewank", dim=1000, bounds=(-100, 100)), lambda: hs.APO(pop_size=10_000), 1000,
           floor_s=4 * 10_000 * 1000 * 4 / PEAK_BANDWIDTH,
           floor_how="x read, the rows read at the masks (~1), new x write: 4 N*D fp32"),
    Config("apo-rotated", "APO, paper 003 like for like: shifted+rotated Bent Cigar D=1,000, 10,000 protozoa",
           lambda: hs.get_problem("bent-cigar", dim=1000, bounds=(-100, 100), shift=3, rotate=3),
           lambda: hs.APO(pop_size=10_000), 1000, floor_s=2 * 10_000 * 1000**2 / PEAK_FP32,
           floor_how="the rotation: 2 N D^2 FLOPs at FP32 peak"),
    Config("apo-small", "APO: Rosenbrock D=4, 50 protozoa (evaluated between launches; below PICKED_FROM)",
           lambda: hs.get_problem("rosenbrock", dim=4), lambda: hs.APO(pop_size=50), 1000, floor_how="~0 (launch-bound)"),
    Config("apo-spring", "APO, paper 003 Table 3: spring design, 50 protozoa, float64",
           lambda: hs.get_problem("spring"), lambda: hs.APO(pop_size=50), 1000, dtype="float64",
           floor_how="~0 (launch-bound)"),
    Config("fep-paper", "FEP, paper 004: f5 D=32, mu=6,400, q=10",
           lambda: hs.get_problem("fep-f5"), lambda: hs.FEP(pop_size=6400), 2000, target_s=0.5,
           floor_s=8 * 6400 * 32 * 4 / PEAK_BANDWIDTH, floor_how="x, eta in; x', eta' out; union gather: 8 N*D fp32"),
    Config("firefly", "Firefly: N=16,384, D=32",
           lambda: hs.get_problem("sphere", dim=32), lambda: hs.Firefly(pop_size=16_384), 50,
           target_s=2e-3, per_iter_target=True, floor_s=4 * 16_384**2 * 32 / PEAK_FP32,
           floor_how="2 N^2 D-FMA matmuls (distances, weighted sum) at FP32 peak"),
    Config("prs-100", "100 runs of the PRS configuration, batched",
           lambda: hs.get_problem("rastrigin", dim=4, bounds=(-5.12, 5.12)), lambda: hs.PRS(pop_size=1024),
           12_000, runs=100, floor_s=100 * 4 * 1024 * 4 * 4 / PEAK_BANDWIDTH, floor_how="as PRS, x100 runs"),
]


#: Steps per captured graph (None: the Runner's default); `--chunk`.
CHUNK: int | None = None


def _runner(cfg: Config, device: str, engine: str) -> hs.Runner:
    chunk = {} if CHUNK is None or engine == "eager" else {"chunk": CHUNK}
    return hs.Runner(cfg.problem(), cfg.algorithm().with_horizon(cfg.iters), runs=cfg.runs, device=device,
                     engine=engine, seed=0, dtype=cfg.dtype, **chunk)


def time_runner(cfg: Config, device: str, engine: str, budget_s: float, full: bool) -> dict:
    """Seconds per iteration after warm-up; setup = compile + capture + first chunk."""
    runner = _runner(cfg, device, engine)
    chunk = runner.chunk if engine != "eager" else 1
    t0 = time.perf_counter()
    runner.step(chunk)
    synchronize(runner.device)
    setup = time.perf_counter() - t0
    # estimate, then measure about budget_s worth of iterations (whole chunks)
    t0 = time.perf_counter()
    runner.step(chunk)
    synchronize(runner.device)
    one = (time.perf_counter() - t0) / chunk
    n = cfg.iters - 2 * chunk if full else max(chunk, int(budget_s / max(one, 1e-7)) // chunk * chunk)
    n = max(chunk, min(n, cfg.iters - 2 * chunk)) // chunk * chunk
    t0 = time.perf_counter()
    runner.step(n)
    synchronize(runner.device)
    per_iter = (time.perf_counter() - t0) / n
    return {"per_iter": per_iter, "setup": setup, "measured_iters": n,
            "engine": runner._engine_used(), "best": float(runner.best_f.min())}


def kernel_profile(cfg: Config, engine: str, top: int = 8) -> list[dict]:
    """The CUDA kernels of one replayed chunk of the fast path, by device time per iteration."""
    from torch.profiler import ProfilerActivity, profile

    runner = _runner(cfg, "cuda", engine)
    runner.step(2 * runner.chunk)
    synchronize(runner.device)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        runner.step(runner.chunk)
        synchronize(runner.device)
    rows = []
    for event in prof.key_averages():
        t = getattr(event, "device_time_total", None) or getattr(event, "cuda_time_total", 0.0)
        if t > 0:
            rows.append({"kernel": event.key[:90], "us_per_iter": t / runner.chunk, "calls_per_iter": event.count / runner.chunk})
    rows.sort(key=lambda r: -r["us_per_iter"])
    return rows[:top]


def time_evox(cfg: Config, budget_s: float) -> dict | None:
    try:
        from evox.algorithms import PSO as EvoxPSO
        from evox.core import Problem as EvoxProblem
        from evox.workflows import StdWorkflow
    except ImportError:
        return None

    class Euclid(EvoxProblem):
        def evaluate(self, pop):
            return torch.linalg.vector_norm(pop, dim=-1)

    class Sphere(EvoxProblem):
        def evaluate(self, pop):
            return (pop * pop).sum(-1)

    p = cfg.problem()
    lb, ub = p.lower.float().cuda(), p.upper.float().cuda()
    n = cfg.algorithm().pop_size
    with torch.device("cuda"):  # EvoX creates its tensors on the default device
        if cfg.evox == "paper":
            algo, prob = EvoxPSO(n, lb, ub, w=1.0, phi_p=2.0, phi_g=2.0), Euclid()
        else:
            algo, prob = EvoxPSO(n, lb, ub, w=0.7298, phi_p=1.49618, phi_g=1.49618), Sphere()
        wf = StdWorkflow(algo, prob)
        wf.init_step()
        step = torch.compile(wf.step)
        t0 = time.perf_counter()
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        setup = time.perf_counter() - t0
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        reps = max(10, int(budget_s / max(time.perf_counter() - t0, 1e-6)))
        t0 = time.perf_counter()
        for _ in range(reps):
            step()
        torch.cuda.synchronize()
        return {"per_iter": (time.perf_counter() - t0) / reps, "setup": setup, "measured_iters": reps}


def crossover(name: str, make, pops: list[int], budget_s: float) -> dict:
    """Smallest population at which CUDA (fused kernels, else the uncompiled graph engine:
    compiling each size would cost minutes) beats the CPU per iteration."""
    rows = []
    for n in pops:
        cfg = Config(name, name, lambda: hs.get_problem("rastrigin", dim=30), lambda n=n: make(n), 10_000)
        engine = "fused" if why_not_fused(make(n), cfg.problem(), torch.device("cuda")) is None else "graph"
        cpu = time_runner(cfg, "cpu", "eager", budget_s, False)["per_iter"]
        gpu = time_runner(cfg, "cuda", engine, budget_s, False)["per_iter"]
        rows.append({"pop": n, "cpu": cpu, "cuda": gpu})
    first = next((r["pop"] for r in rows if r["cuda"] < r["cpu"]), None)
    return {"algorithm": name, "rows": rows, "cuda_overtakes_at": first}


FULL_RUN_ENGINES = ("eager", "compiled", "fused", "auto")


def full_run(key: str, engine: str) -> dict:
    """One whole run of configuration `key` with `engine` in this process (`--child`)."""
    cfg = next(c for c in CONFIGS if c.key == key)
    started = time.perf_counter()
    r = hs.minimize(cfg.problem(), cfg.algorithm(), iters=cfg.iters, runs=cfg.runs, device="cuda", engine=engine,
                    seed=0, dtype=cfg.dtype)
    total = time.perf_counter() - started
    setup = r.extra["setup_time"]
    return {"engine": r.extra["engine"], "setup": setup, "steps": r.wall_time - setup, "total": total,
            "best": float(r.best_f.min()), "reason": r.extra.get("engine_reason", "")}


def cold_and_warm(key: str, engines: list[str]) -> dict:
    """`full_run` of each engine in a fresh process: with empty kernel caches, then again."""
    out = {}
    for engine in engines:
        with tempfile.TemporaryDirectory() as caches:
            env = {**os.environ, "TRITON_CACHE_DIR": f"{caches}/triton",
                   "TORCHINDUCTOR_CACHE_DIR": f"{caches}/inductor"}
            runs = {}
            for caches_are in ("cold", "warm"):
                started = time.perf_counter()
                proc = subprocess.run([sys.executable, __file__, "--child", key, engine], env=env, capture_output=True,
                                      text=True)
                if proc.returncode != 0:
                    runs[caches_are] = {"error": (proc.stderr or proc.stdout).strip().splitlines()[-3:]}
                    continue
                runs[caches_are] = {**json.loads(proc.stdout.strip().splitlines()[-1]),
                                    "process": time.perf_counter() - started}
            out[engine] = runs
            print(f"    {engine:8s} " + "  ".join(
                f"{k}: " + (f"setup {v['setup']:.2f} s + steps {v['steps']:.2f} s ({v['engine']}; process "
                            f"{v['process']:.1f} s)" if "error" not in v else f"failed {v['error']}")
                for k, v in runs.items()), flush=True)
    return out


def fmt(seconds: float | None) -> str:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="comma-separated config keys (wildcards too: 'apo-*')")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of timing per measurement")
    ap.add_argument("--full", action="store_true", help="time the fast path over each full run")
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--paths", default="eager,graph,compiled",
                    help="the CUDA paths timed besides the fast one ('none': the fast path alone)")
    ap.add_argument("--chunk", type=int, default=None, help="steps per captured graph (default: the Runner's)")
    ap.add_argument("--crossover", action="store_true", help="also find where CUDA overtakes the CPU")
    ap.add_argument("--profile", action="store_true", help="also list the fast path's top CUDA kernels")
    ap.add_argument("--cold", action="store_true",
                    help="also whole runs in fresh processes, on empty kernel caches and then warm ones")
    ap.add_argument("--engines", default=",".join(FULL_RUN_ENGINES), help="the engines --cold runs")
    ap.add_argument("--child", nargs=2, metavar=("KEY", "ENGINE"), help=argparse.SUPPRESS)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(full_run(*args.child)))
        return
    global CHUNK
    CHUNK = args.chunk
    paths = [] if args.paths == "none" else args.paths.split(",")
    patterns = None if args.only is None else args.only.split(",")
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "none"
    print(f"torch {torch.__version__}, GPU {gpu}, CPU threads {torch.get_num_threads()}")
    results = []
    for cfg in CONFIGS:
        if patterns is not None and not any(fnmatch.fnmatchcase(cfg.key, p) for p in patterns):
            continue
        row = {"key": cfg.key, "label": cfg.label, "iters": cfg.iters, "runs": cfg.runs, "floor": cfg.floor_s,
               "floor_how": cfg.floor_how, "target": cfg.target_s, "per_iter_target": cfg.per_iter_target}
        if not args.no_cpu:
            row["cpu"] = time_runner(cfg, "cpu", "eager", args.budget / 2, False)
        for path in paths:
            row[path] = time_runner(cfg, "cuda", path, args.budget, args.full and path == "compiled")
        fused = why_not_fused(cfg.algorithm(), cfg.problem(), torch.device("cuda")) is None
        if fused:
            row["fused"] = time_runner(cfg, "cuda", "fused", args.budget, args.full)
        if fused and why_not_picked(cfg.algorithm(), cfg.problem(), torch.device("cuda")) is None:
            row["fast"] = row["fused"]  # what auto takes for long runs (else the compiled step)
        else:
            row["fast"] = row.get("compiled") or time_runner(cfg, "cuda", "compiled", args.budget, args.full)
        if args.profile:
            engine = "fused" if "fused" in row else "compiled"
            row["profile"] = kernel_profile(cfg, engine)
            for k in row["profile"]:
                print(f"    {k['us_per_iter']:9.2f} us/it  x{k['calls_per_iter']:.0f}  {k['kernel']}")
        if cfg.evox:
            row["evox"] = time_evox(cfg, args.budget)
        results.append(row)
        fast = row["fast"]["per_iter"]
        full = fast * cfg.iters
        floor = f"  floor {fmt(cfg.floor_s)}/it  x{fast / cfg.floor_s:.1f}" if cfg.floor_s else ""
        print(f"{cfg.key:10s} cpu {fmt(row.get('cpu', {}).get('per_iter'))}/it  "
              + "".join(f"{path} {fmt(row[path]['per_iter'])}/it  " for path in paths)
              + (f"fused (not picked) {fmt(row['fused']['per_iter'])}/it  " if "fused" in row and row["fast"] is not row["fused"] else "")
              + f"fast {fmt(fast)}/it ({row['fast']['engine']}, setup {row['fast']['setup']:.1f} s)  "
              f"full run {fmt(full)} ({cfg.iters} it){floor}"
              + (f"  evox {fmt(row['evox']['per_iter'])}/it ({row['evox']['per_iter'] / fast:.1f}x slower)"
                 if row.get("evox") else ""), flush=True)
        if args.cold:
            row["whole_runs"] = cold_and_warm(cfg.key, args.engines.split(","))
    if "prs-paper" in {r["key"] for r in results} and "prs-100" in {r["key"] for r in results}:
        one = next(r for r in results if r["key"] == "prs-paper")["fast"]["per_iter"]
        hundred = next(r for r in results if r["key"] == "prs-100")["fast"]["per_iter"]
        print(f"100 batched PRS runs cost {hundred / one:.2f}x one run (target <= 3x)")
    cross = []
    if args.crossover:
        for name, make, pops in (
            ("pso", lambda n: hs.PSO(pop_size=n), [64, 256, 1024, 4096, 16384, 65536]),
            ("prs", lambda n: hs.PRS(pop_size=n), [64, 256, 1024, 4096, 16384, 65536]),
            ("apo", lambda n: hs.APO(pop_size=n), [64, 256, 1024, 4096, 16384]),
            ("fep", lambda n: hs.FEP(pop_size=n), [64, 256, 1024, 4096, 16384]),
            ("firefly", lambda n: hs.Firefly(pop_size=n), [16, 64, 256, 1024, 4096]),
        ):
            c = crossover(name, make, pops, args.budget / 4)
            cross.append(c)
            print(f"crossover {name}: CUDA overtakes the CPU at pop {c['cuda_overtakes_at']}  "
                  + "  ".join(f"{r['pop']}: {fmt(r['cpu'])}/{fmt(r['cuda'])}" for r in c["rows"]), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"torch": torch.__version__, "gpu": gpu, "chunk": args.chunk, "results": results,
                       "crossover": cross}, fh, indent=1)


if __name__ == "__main__":
    main()
