"""First-run cost: `heuriscale run` with empty kernel caches, then warm, then after `warmup`.

Each configuration runs as a fresh CLI process (what a user meets): first with empty Triton
and inductor caches (a new machine), then again with the caches the first run left (every
later run); each time with the fast engine pinned, then with `--engine auto` (what it chose,
and why), then pinned eager. Process wall time includes Python start-up, torch import and
CUDA initialisation; "setup" is the engine's own build + capture time from the result JSON.
It also times `heuriscale warmup` (the papers' fused configurations) on empty caches and again.

    PYTHONPATH=src python3 benchmarks/first_run.py [--json first_run.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CONFIGS = {  # name: (CLI arguments, fast engine)
    "prs paper 000": ("prs --problem rastrigin --dim 4 --pop 1024 --iters 12000 -P bounds=-5.12,5.12", "fused"),
    "fep paper 004": ("fep --problem fep-f5 --pop 6400 --iters 2000", "fused"),
    "apo paper 003": ("apo --problem bent-cigar --dim 1000 --pop 10000 --iters 1000", "compiled"),
    "pso paper 001": ("pso --problem euclidean --dim 2 --pop 65536 --iters 100000 --preset paper001", "fused"),
    "firefly 16,384 x 32": ("firefly --problem sphere --dim 32 --pop 16384 --iters 200", "fused"),
}


def cli(args: str, caches: str, timeout: float = 300) -> dict:
    env = {**os.environ, "TRITON_CACHE_DIR": f"{caches}/triton", "TORCHINDUCTOR_CACHE_DIR": f"{caches}/inductor"}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "heuriscale", *args.split(), "-q", "--seed", "0",
                               "--json", out.name], env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            return {"wall": wall, "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
        result = json.load(open(out.name))
        extra = result["extra"]
        return {"wall": wall, "run": result["wall_time"], "setup": extra["setup_time"], "engine": extra["engine"],
                "reason": extra.get("engine_reason", "")}


nan = float("nan")


def _t(row: dict) -> str:
    return f"{row['wall']:.1f} s / {row.get('run', nan):.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default=None, help="comma-separated configuration names")
    args = ap.parse_args()
    rows = {}
    for name, (cmd, fast) in CONFIGS.items():
        if args.only and name not in args.only.split(","):
            continue
        with tempfile.TemporaryDirectory() as caches:
            row = {"cold": cli(f"run {cmd} --engine {fast}", caches)}
            row["warm"] = cli(f"run {cmd} --engine {fast}", caches)
            row["auto"] = cli(f"run {cmd} --engine auto", caches)
            row["eager"] = cli(f"run {cmd} --engine eager", caches)
        rows[name] = row
        print(name, json.dumps(row), flush=True)
    with tempfile.TemporaryDirectory() as caches:
        env = {**os.environ, "TRITON_CACHE_DIR": f"{caches}/triton", "TORCHINDUCTOR_CACHE_DIR": f"{caches}/inductor"}
        warmups = []
        for _ in range(2):
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "heuriscale", "warmup"], env=env, capture_output=True,
                                  text=True, timeout=600)
            warmups.append({"wall": time.perf_counter() - started, "rc": proc.returncode,
                            "tail": (proc.stdout + proc.stderr).strip().splitlines()[-3:]})
        rows["heuriscale warmup (papers' fused configurations)"] = {"cold": warmups[0], "warm": warmups[1]}
        print("warmup", json.dumps(warmups), flush=True)

    print("\nprocess = the CLI process's wall time; run = the result's wall time (setup included)")
    print("| configuration | fast engine | first run: process / run / setup | warm: process / run / setup "
          "| auto: engine, process / run | eager: process / run |")
    print("|---|---|---|---|---|---|")
    for name, row in rows.items():
        if "auto" not in row:
            continue
        c, w, a, e = row["cold"], row["warm"], row["auto"], row["eager"]
        print(f"| {name} | {c.get('engine')} | {_t(c)} / {c.get('setup', nan):.2f} s | {_t(w)} / {w.get('setup', nan):.2f} s "
              f"| {a.get('engine')}, {_t(a)} | {_t(e)} |")
    w = rows["heuriscale warmup (papers' fused configurations)"]
    print(f"\n`heuriscale warmup`: {w['cold']['wall']:.1f} s on empty caches, {w['warm']['wall']:.1f} s again")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
