"""30-run CEC cells timed at several thread counts, for two source trees side by side (e.g. one
that evaluates the CEC functions with torch between kernel calls, and one that computes them
inside the kernels), in interleaved rounds.

    python3 benchmarks/cec_cells.py --trees before=/path/to/old/src,after=src --out FILE.json \
        [--algorithms pso,fep] [--functions 1,4] [--threads 1,2] [--evals 100000] [--runs 30] \
        [--rounds 3] [--suite cec2022] [--dim 10]

Each (tree, round) is a process of its own with that tree's `src` first on the path: it runs
every cell once untimed at 2,000 evaluations (the kernels built or loaded from the cache,
serial and parallel), then times each cell (`hs.minimize`, native engine, float64, seed 0,
the library's default algorithm settings) at each thread count and the default
(`set_cpu_threads(None)`). Rounds alternate which tree goes first. The first round of a fresh
machine builds the kernels in both trees at once (`--build-together`), untimed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, sys, time, warnings
import heuriscale as hs
from heuriscale.engine import set_cpu_threads
args = json.loads(sys.argv[1])
warnings.simplefilter("ignore")

def cell(algorithm, function, evals, threads):
    set_cpu_threads(threads)
    started = time.perf_counter()
    r = hs.minimize(hs.get_problem(f"{args['suite']}-f{function}", dim=args["dim"]), hs.get_algorithm(algorithm),
                    evals=evals, runs=args["runs"], seed=0, device="cpu", dtype="float64", engine="native")
    seconds = time.perf_counter() - started
    set_cpu_threads(None)
    return seconds, r

out = {}
for a in args["algorithms"]:
    for f in args["functions"]:
        for t in args["threads"] + [None]:
            cell(a, f, 2000, t)  # built or loaded, untimed
if not args["build_only"]:
    for a in args["algorithms"]:
        for f in args["functions"]:
            for t in args["threads"] + [None]:
                s, r = cell(a, f, args["evals"], t)
                out[f"{a} f{f} {t or 'default'}"] = {"s": s, "threads": r.extra.get("cpu_threads"),
                                                      "best_f_median": float(r.best_f.median())}
print("RESULT " + json.dumps(out))
"""


def run_tree(src: str, args: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(src).resolve()), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"tree {src} failed:\n{done.stderr[-3000:]}")
    return json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))[7:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", required=True, help="name=src,name=src")
    ap.add_argument("--algorithms", default="pso,fep")
    ap.add_argument("--functions", default="1,4")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--evals", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--suite", default="cec2022")
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--build-together", action="store_true", help="first build both trees' kernels at once")
    ap.add_argument("--commit", default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    trees = dict(t.split("=", 1) for t in a.trees.split(","))
    child = {"suite": a.suite, "dim": a.dim, "runs": a.runs, "evals": a.evals, "algorithms": a.algorithms.split(","),
             "functions": [int(f) for f in a.functions.split(",")], "threads": [int(t) for t in a.threads.split(",")],
             "build_only": False}
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from threads import commit, machine  # benchmarks/threads.py: the machine's facts

    report = {"what": __doc__.splitlines()[0], "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), "commit": a.commit or commit(), "command": " ".join(["benchmarks/cec_cells.py", *sys.argv[1:]]),
              "machine": machine(), "trees": trees, "settings": child, "rounds": []}
    started = time.perf_counter()
    if a.build_together:
        procs = [subprocess.Popen([sys.executable, __file__.replace("cec_cells.py", "cec_cells.py"), "--trees",
                                   f"{name}={src}", "--out", os.devnull, "--rounds", "0", "--algorithms", a.algorithms,
                                   "--functions", a.functions, "--threads", a.threads, "--suite", a.suite, "--dim",
                                   str(a.dim), "--runs", str(a.runs)]) for name, src in trees.items()]
        for p in procs:
            p.wait()
        report["build_s"] = time.perf_counter() - started
    for r in range(a.rounds):
        order = list(trees) if r % 2 == 0 else list(trees)[::-1]
        row = {}
        for name in order:
            row[name] = run_tree(trees[name], child)
            print(f"round {r} {name}: " + ", ".join(f"{k} {v['s']:.2f}" for k, v in row[name].items()), flush=True)
            if len(row) == 1:
                report["rounds"].append(row)
            done = [rr for rr in report["rounds"] if len(rr) == len(trees)]  # (saved after each tree)
            report["medians_s"] = {n: {k: statistics.median(rr[n][k]["s"] for rr in done) for k in done[0][n]}
                                   for n in trees} if done else {}
            Path(a.out).write_text(json.dumps(report, indent=1))
    if a.rounds == 0:  # (a build-only process of --build-together)
        for name, src in trees.items():
            run_tree(src, {**child, "build_only": True})


if __name__ == "__main__":
    main()
