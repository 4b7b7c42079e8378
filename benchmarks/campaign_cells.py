"""A whole CPU campaign, and its cells alone, at one thread, at the default and with several
cells at once: what `compare --device cpu` gains from the cores.

    PYTHONPATH=src python3 benchmarks/campaign_cells.py --out benchmarks/results/threads/NAME.json \
        [--algorithms pso,prs,firefly,apo,fep] [--functions f1,f4,f6,f10 | all] [--runs 30] [--evals 50000] \
        [--cell-algorithms pso,fep] [--cell-threads 1,16]

1. Build: one process per algorithm runs a tiny campaign of it (2,000 evaluations a run, the
   campaign's runs) at the default threads and at one thread, so that both builds of its
   kernels are in Numba's cache before anything is timed; then this process runs that tiny
   campaign once at each setting (it loads what the timed campaigns reuse).
2. Campaign: every algorithm x function, 30 runs, --evals per run (default: the suite's
   budget): one cell at a time on one thread (the papers' single-threaded CPU), one cell at a
   time at the default threads, --parallel-cells auto and, when auto chose one at a time,
   --parallel-cells with one per core; each in a fresh folder.
3. Cells: each of --cell-algorithms' 30-run cell on the first function (CEC 2022, D = 10, its
   full budget) as a campaign of one cell, at each of --cell-threads and at the default.

Each time is the wall time of the `compare` call (`seconds`, its report included) and of its
runs alone (`runs_s`: from the call to the last cell's commit).

The campaigns' stores are compared row by row (what each run computed, not its times): the
JSON says whether every way stored the same numbers. The JSON is rewritten after each step.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from threads import commit, machine  # noqa: E402 - benchmarks/threads.py: the machine's facts

from heuriscale.engine import set_cpu_threads  # noqa: E402
from heuriscale.engine.threads import cpu_cores  # noqa: E402
from heuriscale.studies import cells, compare  # noqa: E402
from heuriscale.studies.compare import plan  # noqa: E402

COMPUTED = ("config_key", "repeat", "seed", "best_f", "best_x", "evals", "history")


def campaign(algorithms, functions, runs, out, threads, parallel_cells, evals=None) -> tuple[float, float]:
    """Seconds of one `compare` call (threads: None = the rule's), and of its runs alone: from
    the call to the last cell's commit (the report, written after, is the same work every way)."""
    set_cpu_threads(threads)
    started = time.perf_counter()
    last = [started]

    def stored(config, n):
        last[0] = time.perf_counter()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(algorithms, "cec2022", dims=[10], runs=runs, functions=functions, device="cpu", out=out,
                evals=evals, parallel_cells=parallel_cells, progress=stored)
    seconds = time.perf_counter() - started
    set_cpu_threads(None)
    return seconds, last[0] - started


def computed(store: Path) -> list:
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as con:
        return con.execute(f"SELECT {', '.join(COMPUTED)} FROM runs ORDER BY config_key, repeat").fetchall()


def threads_used(store: Path) -> list[str]:
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as con:
        return sorted({json.loads(e).get("cpu_threads_from", "") for (e,) in con.execute("SELECT extra FROM runs")})


def build(algorithms, functions, runs, scratch: Path) -> float:
    """Both builds of every algorithm's kernels, one process per algorithm at once."""
    started = time.perf_counter()
    code = ("import sys, warnings; warnings.simplefilter('ignore'); sys.path.insert(0, {here!r}); "
            "from campaign_cells import campaign; "
            "[campaign([{a!r}], {f!r}, {r}, {out!r} + str(t), t, 1, evals=2000) for t in (None, 1)]")
    # (evals=2000: about 19 iterations, enough to load or compile every kernel the campaign calls)
    procs = [subprocess.Popen([sys.executable, "-c", code.format(here=str(Path(__file__).parent), a=a, f=functions,
                                                                  r=runs, out=str(scratch / f"build-{a}-"))])
             for a in algorithms]
    for p in procs:
        p.wait()
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algorithms", default="pso,prs,firefly,apo,fep")
    ap.add_argument("--functions", default="f1,f4,f6,f10", help="comma-separated, or 'all': the suite's 12")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--evals", type=int, default=None, help="the campaign's budget per run (default: the suite's)")
    ap.add_argument("--cell-algorithms", default="pso,fep")
    ap.add_argument("--cell-threads", default="1,16")
    ap.add_argument("--commit", default=None, help="the code's commit (default: git rev-parse HEAD)")
    ap.add_argument("--ways", default=None, help="comma-separated campaign ways, in this order, of: one (one thread, "
                    "one cell at a time), default (the rule's threads, one cell at a time), auto (--parallel-cells "
                    "auto), cores (a worker per core), a number N (--parallel-cells N); default: one,default,auto, and cores when auto runs one at a time")
    ap.add_argument("--skip", default="", help="comma-separated steps to leave out: build, cells, campaign")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    algorithms = args.algorithms.split(",")
    functions = None if args.functions == "all" else args.functions.split(",")  # (None: compare's whole suite)
    first = (functions or ["f1"])[:1]  # the cells' function
    skip = set(args.skip.split(","))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    given = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v and k != "out")
    report = {"machine": machine(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "commit": args.commit or commit(), "command": f"benchmarks/campaign_cells.py {given}", "suite": "cec2022",
              "dim": 10, "runs": args.runs, "algorithms": algorithms, "functions": functions or "all", "cells": [], "campaign": {}}

    def save():
        out.write_text(json.dumps(report, indent=1))
        os.sync()

    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        if "build" not in skip:
            report["build_s"] = build(algorithms, functions, args.runs, scratch)
            print(f"build: {report['build_s']:.1f} s", flush=True)
            save()
        if not {"campaign", "cells"} <= skip:  # this process's first campaigns load what the later ones reuse
            started = time.perf_counter()
            for t in (None, 1):
                campaign(algorithms, functions, args.runs, scratch / f"warm-{t}", t, 1, evals=2000)
            report["warm_s"] = time.perf_counter() - started
        if "campaign" not in skip:
            todo = [(c, c.runs) for _, c in plan(algorithms, "cec2022", [10], runs=args.runs, functions=functions,
                                                 device="cpu", evals=args.evals).configs]
            auto = cells.plan_workers("auto", todo)
            report["campaign_auto_plan"] = auto[2]
            known = {"one": ("one thread, one cell at a time", (1, 1)),
                     "default": ("default threads, one cell at a time", (None, 1)),
                     "auto": ("parallel cells (auto)", (None, "auto")),
                     "cores": (f"parallel cells ({cpu_cores()})", (None, cpu_cores()))}
            chosen = args.ways.split(",") if args.ways else ["one", "default", "auto"] + ["cores"] * (auto[0] == 1)
            ways = dict(known[w] if w in known else (f"parallel cells ({int(w)})", (None, int(w))) for w in chosen)
            stores = {}
            for name, (t, at_once) in ways.items():
                folder = scratch / f"campaign-{len(stores)}"
                seconds, runs_s = campaign(algorithms, functions, args.runs, folder, t, at_once, args.evals)
                stores[name] = computed(folder / "results.sqlite")
                report["campaign"][name] = {"seconds": seconds, "runs_s": runs_s, "runs": len(stores[name]),
                                            "threads_from": threads_used(folder / "results.sqlite")[:3]}
                print(f"campaign, {name}: {seconds:.1f} s ({runs_s:.1f} s to the last cell stored)", flush=True)
                save()
            first = next(iter(stores.values()))
            report["campaign_stores_equal"] = all(rows == first for rows in stores.values())
            one = report["campaign"].get("one thread, one cell at a time")
            for entry in report["campaign"].values() if one else ():
                entry["speedup_vs_one_thread"] = one["seconds"] / entry["seconds"]
                entry["runs_speedup_vs_one_thread"] = one["runs_s"] / entry["runs_s"]
            save()
        if "cells" not in skip:
            for a in args.cell_algorithms.split(","):
                row = {"algorithm": a, "function": first[0], "seconds": {}}
                for t in [*map(int, args.cell_threads.split(",")), None]:
                    key = "default" if t is None else str(t)
                    folder = scratch / f"cell-{a}-{key}"
                    row["seconds"][key], row.setdefault("runs_s", {})[key] = campaign([a], first, args.runs,
                                                                                      folder, t, 1)
                    if t is None:
                        row["default_from"] = threads_used(folder / "results.sqlite")
                report["cells"].append(row)
                print(f"cell {a} {first[0]}: " + ", ".join(f"{k}: {v:.2f} s" for k, v in row["seconds"].items()),
                      flush=True)
                save()
    print(json.dumps({k: v for k, v in report.items() if k != "machine"}, indent=1), flush=True)


if __name__ == "__main__":
    main()
