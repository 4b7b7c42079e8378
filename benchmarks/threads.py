"""Time per iteration of every native CPU kernel at 1, 2, 4, ... threads and at the default
(the count the engine chooses from the work), as JSON: does the default follow the work?

    PYTHONPATH=src python3 benchmarks/threads.py --out benchmarks/results/threads/NAME.json \
        [--threads 1,2,4] [--runs 1,30] [--rounds 3] [--only pso,fep] [--sizes "pso 32 x 2"]

Each configuration (algorithm, problem, population x dimension, runs) is a Runner (engine
"native", seed 0) per thread setting, warmed up by 2 iterations, then stepped for as many
iterations as take at least --min-time seconds; its time per iteration is one sample. The
settings of a configuration are measured one after another, in an order shuffled for each
round (seeded), and that whole round again --rounds times (interleaved, so that a shared
machine's load falls on every setting alike); a setting's time is its best sample. The JSON
is rewritten after each configuration, so an interrupted run keeps what it measured.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import subprocess
import time
from pathlib import Path

import numba
import torch

from heuriscale.algorithms.registry import get_algorithm
from heuriscale.engine import Runner, set_cpu_threads
from heuriscale.engine.threads import cpu_cores, share_cpu_threads
from heuriscale.problems import get_problem

#: (algorithm, size label, problem, dim, population, dtype): each algorithm's default
#: population at D = 30 and its paper's size (or the issue's larger sizes where its paper has none).
CONFIGS = [
    ("pso", "default", "rastrigin", 30, 100, "float32"),
    ("pso", "small", "sphere", 2, 32, "float64"),
    ("pso", "1,024 x 30", "rastrigin", 30, 1024, "float32"),
    ("pso", "paper 001", "euclidean", 2, 65536, "float32"),
    ("prs", "default", "rastrigin", 30, 100, "float32"),
    ("prs", "paper 000", "rastrigin", 4, 1024, "float32"),
    ("fep", "default", "rastrigin", 30, 100, "float32"),
    ("fep", "400 x 30", "rastrigin", 30, 400, "float32"),
    ("fep", "paper 004", "fep-f5", None, 6400, "float32"),
    ("apo", "default", "rastrigin", 30, 100, "float32"),
    ("apo", "1,024 x 30", "rastrigin", 30, 1024, "float32"),
    ("firefly", "default", "rastrigin", 30, 100, "float32"),
    ("firefly", "1,024 x 32", "sphere", 32, 1024, "float32"),
    ("de", "default", "rastrigin", 30, 100, "float64"),
    ("de", "NP = 10 D", "rastrigin", 30, 300, "float64"),
    ("lshade", "default = paper (18 D)", "rastrigin", 30, 540, "float64"),
    ("jso", "default = paper", "rastrigin", 30, 466, "float64"),
    ("cmaes", "default = paper", "rastrigin", 30, 14, "float64"),
    ("cmaes", "64 x 100", "rastrigin", 100, 64, "float64"),
]


def per_iteration(runner: Runner, min_time: float) -> float:
    """Seconds per iteration over at least `min_time` seconds of steps (after 2 to warm up)."""
    runner.step(2)
    n = 1
    while True:
        started = time.perf_counter()
        runner.step(n)
        elapsed = time.perf_counter() - started
        if elapsed >= min_time:
            return elapsed / n
        n = max(n * 2, int(n * min_time / max(elapsed, 1e-9) * 1.2))


def use_setting(setting) -> None:
    """A fixed count (int), the rule ("default"), or the rule under another cap ("cap N": what the
    rule chooses on a machine whose cap is N, for comparing caps on one machine)."""
    set_cpu_threads(None if setting == "default" or str(setting).startswith("cap ") else setting)
    if str(setting).startswith("cap "):
        share_cpu_threads(int(setting[4:]), f"the rule's cap set to {setting[4:]} (benchmark)")


def measure(config, runs: int, setting, min_time: float) -> tuple[float, dict]:
    alg, _, prob, dim, pop, dtype = config
    use_setting(setting)
    problem = get_problem(prob) if dim is None else get_problem(prob, dim=dim)
    algorithm = get_algorithm(alg, pop_size=pop).with_horizon(10**6)
    runner = Runner(problem, algorithm, runs=runs, device="cpu", dtype=dtype, engine="native", seed=0)
    with torch.no_grad():
        seconds = per_iteration(runner, min_time)
    threads, why = runner._kernels.threads
    return seconds, {"threads": threads, "from": why, "dim": runner.problem.dim, "work": runner._kernels.work(),
                     "parts": runner._kernels.parts()}


def machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return {"cpu": model, "cores": cpu_cores(), "numba_pool": numba.config.NUMBA_NUM_THREADS,
            "python": platform.python_version(), "torch": torch.__version__, "numba": numba.__version__}


def commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cores = cpu_cores()
    counts = [n for n in (1, 2, 4, 8, 16, 32, 64, 128, 256) if n <= min(cores, numba.config.NUMBA_NUM_THREADS)]
    ap.add_argument("--threads", default=",".join(map(str, counts)), help="comma-separated counts (default: 1, 2, "
                    "4, ... up to the cores; 'none': the default setting alone); the default setting is always measured")
    ap.add_argument("--runs", default="1,30")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=0.1, help="seconds of steps per sample")
    ap.add_argument("--caps", default=None, help="comma-separated caps: also measure the rule as it would choose "
                    "on a machine whose cap is each (settings 'cap N')")
    ap.add_argument("--only", default=None, help="comma-separated algorithms")
    ap.add_argument("--sizes", default=None, help="comma-separated 'algorithm label' or 'algorithm pop x dim' "
                    "(pop without a thousands separator)")
    ap.add_argument("--budget", type=float, default=None, help="seconds; configurations after it are skipped")
    ap.add_argument("--commit", default=None, help="the code's commit (default: git rev-parse HEAD)")
    ap.add_argument("--compile-only", action="store_true", help="build (or load) the kernels: one step of each "
                    "configuration at the default threads and at 2, nothing measured (run one process per algorithm "
                    "beforehand on a new machine: a process that forks compilers after its parallel launches may wait "
                    "on a lock)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    settings = [int(t) for t in args.threads.split(",") if t.strip() not in ("", "none")] + ["default"]
    settings += [f"cap {c}" for c in args.caps.split(",")] if args.caps else []
    only = set(args.only.split(",")) if args.only else None
    sizes = {s.strip() for s in args.sizes.split(",")} if args.sizes else None
    started = time.perf_counter()
    given = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v not in (None, False)
                     and k != "out")
    report = {"machine": machine(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "commit": args.commit or commit(), "command": f"benchmarks/threads.py {given}",
              "rounds": args.rounds, "min_time": args.min_time, "rows": [], "skipped": []}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for config in CONFIGS:
        alg, label, prob, dim, pop, dtype = config
        if only and alg not in only or sizes and not ({f"{alg} {label}", f"{alg} {pop} x {dim}"} & sizes):
            continue
        for runs in map(int, args.runs.split(",")):
            if args.compile_only:
                for setting in (1, "default", 2):  # serial build first: compiling after a parallel launch can hang
                    use_setting(setting)
                    problem = get_problem(prob) if dim is None else get_problem(prob, dim=dim)
                    Runner(problem, get_algorithm(alg, pop_size=pop).with_horizon(10**6), runs=runs, device="cpu",
                           dtype=dtype, engine="native", seed=0).step(1)
                continue
            if args.budget is not None and time.perf_counter() - started > args.budget:
                report["skipped"].append(f"{alg} {label} x {runs}")
                continue
            samples = {str(s): [] for s in settings}
            chosen, caps_chosen = None, {}
            for round_ in range(args.rounds):  # each round in its own order: no setting always follows another
                for setting in random.Random(round_ * 7919 + len(report["rows"])).sample(settings, len(settings)):
                    seconds, info = measure(config, runs, setting, args.min_time)
                    samples[str(setting)].append(seconds)
                    if setting == "default":
                        chosen = info
                    elif str(setting).startswith("cap "):
                        caps_chosen[setting] = info["threads"]
            best = {k: min(v) for k, v in samples.items()}
            fixed = {k: v for k, v in best.items() if k.isdigit()} or {"1": best["default"]}  # (default only:
            fastest = min(fixed, key=fixed.get)  # ratios against itself; threads_report.py --defaults puts it beside counts)
            row = {"algorithm": alg, "size": label, "problem": prob, "dim": chosen["dim"], "pop": pop, "dtype": dtype,
                   "runs": runs, "seconds": samples, "best": best, "fastest": int(fastest),
                   "default_threads": chosen["threads"], "default_from": chosen["from"], "caps_threads": caps_chosen,
                   "work": chosen["work"], "parts": chosen["parts"],
                   "default_vs_fastest": best["default"] / fixed[fastest],
                   "default_vs_one": best["default"] / fixed.get("1", best["default"]), "elapsed": time.perf_counter() - started}
            report["rows"].append(row)
            report["elapsed"] = time.perf_counter() - started
            out.write_text(json.dumps(report, indent=1))
            cells = " ".join(f"{k}:{v * 1e6:.0f}" for k, v in best.items())
            print(f"{alg} {pop} x {dim} x {runs}: {cells} us; default {chosen['threads']} threads, "
                  f"{row['default_vs_fastest']:.2f}x the fastest ({fastest})", flush=True)
    set_cpu_threads(None)
    report["elapsed"] = time.perf_counter() - started
    out.write_text(json.dumps(report, indent=1))
    os.sync()


if __name__ == "__main__":
    main()
