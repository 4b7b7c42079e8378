"""First-run cost: `heuriscale run` with empty kernel caches, then warm, then after `warmup`.

Each configuration runs as a fresh CLI process (what a user meets): first with empty Triton
and inductor caches (a new machine), then again with the caches the first run left (every
later run); each time with the fast engine pinned, then with `--engine auto` (what it chose,
and why), then pinned eager. Process wall time includes Python start-up, torch import and
CUDA initialisation; "setup" is the engine's own build + capture time from the result JSON.
It also times `heuriscale warmup` (the papers' fused configurations) on empty caches and again.

    PYTHONPATH=src python3 benchmarks/first_run.py [--repeats 3] [--json first_run.json]

A fresh machine's first process varies by a second or more from one machine to the next, so
each cold/warm pair runs `--repeats` times (each with new empty caches; the table gives
medians). DEFAULT_CONFIGS are the issue's command at every algorithm's default population,
with `--engine auto` (what a user meets: it may find eager cheaper for 500 iterations) and
with the fast engine pinned where it has fused kernels; `--no-warmup` skips `heuriscale warmup`.

`--cpu` measures the native CPU kernels instead (issue 30): each configuration of
CPU_CONFIGS with an empty NUMBA_CACHE_DIR (a new machine) and again with the cache it left,
`--repeats` times (medians; wall and CPU seconds of the process, whose difference between
cold and warm is the build), then the small `compare` of the issue the same way:

    PYTHONPATH=src python3 benchmarks/first_run.py --cpu [--repeats 3] [--json first_run_cpu.json]
    PYTHONPATH=src python3 benchmarks/first_run.py --cpu --profile [--only "fep default"]   # where a build goes
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = {  # name: (CLI arguments, fast engine)
    "prs paper 000": ("prs --problem rastrigin --dim 4 --pop 1024 --iters 12000 -P bounds=-5.12,5.12", "fused"),
    "fep paper 004": ("fep --problem fep-f5 --pop 6400 --iters 2000", "fused"),
    "apo paper 003": ("apo --problem bent-cigar --dim 1000 --pop 10000 --iters 1000", "fused"),
    "pso paper 001": ("pso --problem euclidean --dim 2 --pop 65536 --iters 100000 --preset paper001", "fused"),
    "firefly 16,384 x 32": ("firefly --problem sphere --dim 32 --pop 16384 --iters 200", "fused"),
}
#: The issue's command at the defaults, on CUDA: name: (CLI arguments, fast engine to pin or None).
DEFAULT_CONFIGS = {f"{alg} default": (f"{alg} --problem rastrigin --dim 30 --iters 500", fast)
                   for alg, fast in (("pso", "fused"), ("prs", "fused"), ("fep", "fused"), ("apo", "fused"),
                                     ("firefly", "fused"), ("de", None), ("lshade", None), ("jso", None),
                                     ("cmaes", None))}


def cli(args: str, caches: str, timeout: float = 300) -> dict:
    env = {**os.environ, "TRITON_CACHE_DIR": f"{caches}/triton", "TORCHINDUCTOR_CACHE_DIR": f"{caches}/inductor"}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        started = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-m", "heuriscale", *args.split(), "-q", "--seed", "0",
                                   "--json", out.name], env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"wall": time.perf_counter() - started, "error": [f"timed out after {timeout} s"]}
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            return {"wall": wall, "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
        result = json.load(open(out.name))
        extra = result["extra"]
        return {"wall": wall, "run": result["wall_time"], "setup": extra["setup_time"], "engine": extra["engine"],
                "reason": extra.get("engine_reason", "")}


#: The native CPU kernels, `heuriscale run ... --device cpu --engine native`: the issue's
#: command for every algorithm (default population, float32: their serial builds), the
#: papers' sizes (few iterations: the build is what is measured; parallel builds where the
#: work asks for them) and parallel builds of the kernels whose papers' sizes take the serial one.
CPU_CONFIGS = {
    "pso default": "pso --problem rastrigin --dim 30 --iters 500",
    "prs default": "prs --problem rastrigin --dim 30 --iters 500",
    "fep default": "fep --problem rastrigin --dim 30 --iters 500",
    "apo default": "apo --problem rastrigin --dim 30 --iters 500",
    "firefly default": "firefly --problem rastrigin --dim 30 --iters 500",
    "pso paper 001": "pso --problem euclidean --dim 2 --pop 65536 --iters 200 --preset paper001",
    "prs paper 000": "prs --problem rastrigin --dim 4 --pop 1024 --iters 2000 -P bounds=-5.12,5.12 --preset paper000",
    "fep paper 004": "fep --problem fep-f5 --pop 6400 --iters 20 --preset paper004",
    "apo paper 003": "apo --problem bent-cigar --dim 1000 --pop 1000 --iters 10 --preset paper003",
    "firefly paper 002": ("firefly --problem rastrigin --dim 2 --pop 40 --iters 2000 --preset paper002 --dtype float64 "
                          "-P bounds=-5.12,5.12"),
    "firefly 1,024 x 32": "firefly --problem sphere --dim 32 --pop 1024 --iters 3",
    "prs 1,024 x 30": "prs --problem rastrigin --dim 30 --pop 1024 --iters 50",
    # the field's baselines (their native kernels), at the issue's command
    "de default": "de --problem rastrigin --dim 30 --iters 500",
    "lshade default": "lshade --problem rastrigin --dim 30 --iters 500",
    "jso default": "jso --problem rastrigin --dim 30 --iters 500",
    "cmaes default": "cmaes --problem rastrigin --dim 30 --iters 500",
}
#: The issue's small comparison: PSO, PRS and FEP on five classic functions, 5 runs of 3,000 evaluations.
CPU_COMPARE = "compare -a pso,prs,fep --suite classic --functions f1,f5,f9,f10,f11 --runs 5 --evals 3000 --device cpu"


def _process(args: list[str], env: dict, timeout: float) -> tuple[subprocess.CompletedProcess, float, float]:
    """A `python -m heuriscale` process: its result, wall seconds and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "heuriscale", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_run(args: str, cache: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        proc, wall, cpu = _process(["run", *args.split(), "--device", "cpu", "--engine", "native", "--seed", "0", "-q",
                                    "--json", out.name], env, 900)
        if proc.returncode != 0:
            return {"wall": wall, "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
        result = json.load(open(out.name))
    return {"wall": wall, "cpu": cpu, "run": result["wall_time"], "setup": result["extra"]["setup_time"],
            "engine": result["extra"]["engine"], "best_f": result["best_f"]}


def cpu_compare(cache: str) -> dict:
    with tempfile.TemporaryDirectory() as out:
        proc, wall, cpu = _process([*CPU_COMPARE.split(), "--out", out], {**os.environ, "NUMBA_CACHE_DIR": cache}, 1800)
    return {"wall": wall, "cpu": cpu, **({"error": proc.stderr.strip().splitlines()[-1:]} if proc.returncode else {})}


#: In a child process with an empty Numba cache: `heuriscale run`, with every Numba compile
#: timed (thread CPU seconds, less the compiles nested in it), printed as JSON by function.
_PROFILE = """
import collections, json, sys, time
import numba.core.event as ev
stack, own, count = [], collections.Counter(), collections.Counter()
class Compiles(ev.Listener):
    def on_start(self, event):
        stack.append([time.thread_time(), 0.0])
    def on_end(self, event):
        started, nested = stack.pop()
        spent = time.thread_time() - started
        if stack:
            stack[-1][1] += spent
        fn = event.data["dispatcher"].py_func
        name = f"{fn.__module__}.{fn.__qualname__}".replace("heuriscale.engine.kernels.", "")
        own[name] += spent - nested
        count[name] += 1
ev.register("numba:compile", Compiles())
from heuriscale.cli import app
try:
    app(sys.argv[1:], prog_name="heuriscale", standalone_mode=False)
except SystemExit:
    pass
print(json.dumps({"total": sum(own.values()), "functions": [[n, count[n], t] for n, t in own.most_common()]}))
"""


def cpu_profile(name: str, top: int = 12) -> None:
    """Where a configuration's cold build goes: the functions Numba compiles, each one's own
    seconds (without the functions it compiles on the way) and how many times (signatures)."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        args = [*CPU_CONFIGS[name].split(), "--device", "cpu", "--engine", "native", "--seed", "0", "-q"]
        proc = subprocess.run([sys.executable, "-c", _PROFILE, "run", *args], capture_output=True, text=True,
                              env={**os.environ, "NUMBA_CACHE_DIR": cache}, timeout=900)
    if proc.returncode != 0:
        print(name, "failed:", (proc.stderr or proc.stdout).strip().splitlines()[-1:])
        return
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"\n{name}: {report['total']:.2f} s compiling ({len(report['functions'])} functions)")
    for fn, n, spent in report["functions"][:top]:
        print(f"  {spent:6.2f} s  {n} x  {fn}")


def _median(rows: list[dict], key: str) -> float:
    values = [r[key] for r in rows if key in r]
    return statistics.median(values) if values else nan


def cpu_main(repeats: int, only: list[str] | None) -> dict:
    rows = {}
    for name, cmd in CPU_CONFIGS.items():
        if only and name not in only:
            continue
        cold, warm = [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
                cold.append(cpu_run(cmd, cache))
                warm.append(cpu_run(cmd, cache))
        rows[name] = {"args": cmd, "cold": cold, "warm": warm, "load1": os.getloadavg()[0],
                      "same_best_f": len({json.dumps(r.get("best_f")) for r in cold + warm}) == 1}
        walls = {k: [round(r.get("wall", nan), 2) for r in rows[name][k]] for k in ("cold", "warm")}
        print(name, json.dumps({**{k: v for k, v in rows[name].items() if k not in ("cold", "warm")}, **walls}),
              flush=True)  # each configuration as it ends: a run cut short still tells
    if not only or "compare" in only:
        cold, warm = [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
                cold.append(cpu_compare(cache))
                warm.append(cpu_compare(cache))
        rows["compare"] = {"args": CPU_COMPARE, "cold": cold, "warm": warm, "load1": os.getloadavg()[0]}
    print("\nmedians of", repeats, "; process wall / CPU seconds; build = cold wall - warm wall")
    print("| configuration | engine | cold: wall / CPU | warm: wall / CPU | build (cold - warm) | load |")
    print("|---|---|---|---|---|---|")
    for name, row in rows.items():
        c, w = row["cold"], row["warm"]
        engine = next((r["engine"] for r in c if "engine" in r), "-")
        build = _median(c, "wall") - _median(w, "wall")
        print(f"| {name} | {engine} | {_median(c, 'wall'):.1f} / {_median(c, 'cpu'):.1f} s "
              f"| {_median(w, 'wall'):.1f} / {_median(w, 'cpu'):.1f} s | {build:.1f} s | {row['load1']:.1f} |")
    return rows


nan = float("nan")


def _t(runs: list[dict]) -> str:
    """Median process and run seconds of `runs`."""
    return f"{_median(runs, 'wall'):.1f} s / {_median(runs, 'run'):.2f} s"


def _names(only: str, known) -> list[str]:
    """`--only`'s comma-separated names, where a name may hold commas itself ("prs 1,024 x 30"):
    pieces are joined until they make a known name; anything else is an error that lists them."""
    names, piece = [], ""
    for part in only.split(","):
        piece = f"{piece},{part}" if piece else part
        if piece.strip() in known:
            names.append(piece.strip())
            piece = ""
    if piece:
        raise SystemExit(f"--only: unknown configuration {piece.strip()!r}; known: {'; '.join(known)}")
    return names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default=None, help="comma-separated configuration names")
    ap.add_argument("--cpu", action="store_true", help="the native CPU kernels (empty NUMBA_CACHE_DIR), not CUDA")
    ap.add_argument("--repeats", type=int, default=3, help="cold and warm pairs per configuration")
    ap.add_argument("--no-warmup", action="store_true", help="CUDA: do not time `heuriscale warmup`")
    ap.add_argument("--profile", action="store_true", help="--cpu: which functions each cold build compiles, how long")
    args = ap.parse_args()
    if args.cpu and args.profile:
        for name in _names(args.only, CPU_CONFIGS) if args.only else CPU_CONFIGS:
            cpu_profile(name)
        return
    if args.cpu:
        rows = cpu_main(args.repeats, _names(args.only, [*CPU_CONFIGS, "compare"]) if args.only else None)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
        return
    known = {**CONFIGS, **DEFAULT_CONFIGS}
    names = _names(args.only, known) if args.only else list(known)
    rows = {}
    for name in names:
        cmd, fast = known[name]
        row = {"args": cmd, "fast": fast}
        if name in CONFIGS:  # the fast engine pinned, cold and warm; then auto and eager, warm
            row["cold"], row["warm"], caches = cuda_pairs(cmd, fast, args.repeats)
            row["auto"], row["eager"] = cli(f"run {cmd} --engine auto", caches), cli(f"run {cmd} --engine eager", caches)
        else:  # auto cold and warm (what a user meets), then the fast engine pinned
            row["auto_cold"], row["auto_warm"], caches = cuda_pairs(cmd, "auto", args.repeats)
            if fast:
                shutil.rmtree(caches, ignore_errors=True)
                row["cold"], row["warm"], caches = cuda_pairs(cmd, fast, args.repeats)
        shutil.rmtree(caches, ignore_errors=True)
        rows[name] = row
        print(name, json.dumps(row), flush=True)
    if not args.no_warmup:
        rows["heuriscale warmup (papers' fused configurations)"] = warmup_twice()

    print(f"\nmedians of {args.repeats} cold/warm pairs; process = the CLI process's wall time; run = the result's wall "
          "time (setup included); build = first - warm of the process")
    print("| configuration | engine | first run: process / run / setup | warm: process / run / setup | build "
          "| auto: engine, process / run | eager: process / run |")
    print("|---|---|---|---|---|---|---|")
    for name, row in rows.items():
        for cold_key, warm_key in (("cold", "warm"), ("auto_cold", "auto_warm")):
            if not isinstance(row.get(cold_key), list):  # (none, or the warmup's row)
                continue
            c, w = row[cold_key], row[warm_key]
            engines = sorted({r.get("engine", "error") for r in c + w})
            auto = f"{row['auto'].get('engine')}, {_t([row['auto']])}" if "auto" in row else "-"
            eager = _t([row["eager"]]) if "eager" in row else "-"
            label = f"{name} (auto)" if cold_key == "auto_cold" else name
            print(f"| {label} | {', '.join(engines)} | {_t(c)} / {_median(c, 'setup'):.2f} s "
                  f"| {_t(w)} / {_median(w, 'setup'):.2f} s | {_median(c, 'wall') - _median(w, 'wall'):.1f} s "
                  f"| {auto} | {eager} |")
    warm = rows.get("heuriscale warmup (papers' fused configurations)")
    if warm:
        print(f"\n`heuriscale warmup`: {warm['cold']['wall']:.1f} s on empty caches, {warm['warm']['wall']:.1f} s again")
    errors = [(name, r["error"]) for name, row in rows.items() for runs in row.values()
              for r in (runs if isinstance(runs, list) else [runs]) if isinstance(r, dict) and "error" in r]
    for name, error in errors:
        print("error:", name, error)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def cuda_pairs(cmd: str, engine: str, repeats: int) -> tuple[list[dict], list[dict], str]:
    """`repeats` (first, warm) pairs of `heuriscale run <cmd> --engine <engine>`, each pair with new
    empty Triton and inductor caches; the last pair's caches are kept (returned) for more runs."""
    cold, warm, caches = [], [], None
    for _ in range(max(1, repeats)):
        if caches:
            shutil.rmtree(caches, ignore_errors=True)
        caches = tempfile.mkdtemp(prefix="first-run-")
        cold.append(cli(f"run {cmd} --engine {engine}", caches))
        warm.append(cli(f"run {cmd} --engine {engine}", caches))
    return cold, warm, caches


def warmup_twice() -> dict:
    """`heuriscale warmup` on empty caches, then again."""
    with tempfile.TemporaryDirectory() as caches:
        env = {**os.environ, "TRITON_CACHE_DIR": f"{caches}/triton", "TORCHINDUCTOR_CACHE_DIR": f"{caches}/inductor"}
        runs = []
        for _ in range(2):
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "heuriscale", "warmup"], env=env, capture_output=True,
                                  text=True, timeout=600)
            runs.append({"wall": time.perf_counter() - started, "rc": proc.returncode,
                         "tail": (proc.stdout + proc.stderr).strip().splitlines()[-3:]})
    print("warmup", json.dumps(runs), flush=True)
    return {"cold": runs[0], "warm": runs[1]}


if __name__ == "__main__":
    main()
