"""Wall time of the CEC 2022 campaign with mealpy 3 on one CPU core, extrapolated from a subset.

The campaign is the one of `heuriscale compare --suite cec2022 --dims 10,20 --runs 30`:
F1-F12, D = 10 and 20, 30 runs per (algorithm, function, dim), 200,000 evaluations per run
at D = 10 and 1,000,000 at D = 20, population 100. This script times the algorithms that
mealpy has as well, on opfunu's CEC 2022 functions (the reference NumPy implementation that
mealpy's own examples use), and extrapolates the campaign's wall time from a measured subset.

It does NOT run in heuriscale's environment: mealpy 3.0.3 requires numpy<=1.26.0 and has no use for
torch. Make a separate virtualenv outside the repository and run it from the repo root:

    python3 -m venv /tmp/mealpy-venv
    /tmp/mealpy-venv/bin/pip install "mealpy>=3,<4" opfunu numpy threadpoolctl
    #   (add "setuptools<81" if `import opfunu` fails for lack of pkg_resources)
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
        /tmp/mealpy-venv/bin/python benchmarks/mealpy_campaign.py

(the three variables are also set by the script itself before NumPy is imported, so the
plain `/tmp/mealpy-venv/bin/python benchmarks/mealpy_campaign.py` is the same). It takes
about 21 minutes on one core of an AMD EPYC and writes `benchmarks/results/campaigns/mealpy_campaign.json`.

mealpy classes (mealpy 3.0.3; its docstrings are its documentation):

- PSO: `swarm_based.PSO.OriginalPSO` (Kennedy & Eberhart; constant inertia w, global best):
  the one closest to heuriscale's global-best inertia PSO. The other PSO classes are
  variants (LDW_PSO: linearly decreasing w; AIW_PSO: adaptive w; P_PSO: phasor; HPSO_TVAC,
  C_PSO: chaotic; CL_PSO: comprehensive learning). Its quirks: out-of-bounds coordinates are
  re-drawn uniformly, the velocity is not clamped, and a particle only moves when its new
  position is better than its current one.
- EP: `evolutionary_based.EP.OriginalEP` (cites Yao, Liu & Lin 1999, but is classical EP:
  Gaussian mutation, additive step-size update `s + N(0,1) sqrt|s|`, (mu + mu) selection by
  `bout_size * pop = 5` tournament opponents). mealpy has no Cauchy-mutation (fast) EP.
  `LevyEP` still mutates every parent with a Gaussian and adds a Levy-flight (beta = 1, i.e.
  Cauchy-tailed, Mantegna) re-draw of half the losers (150 evaluations per generation), so
  it is not FEP either. OriginalEP has FEP's per-generation structure (one offspring per
  parent, tournament (mu + mu) selection; a Cauchy draw costs what a Gaussian does) and is
  the one counted in the campaign; LevyEP is measured too and reported beside it.
- Firefly: `swarm_based.FFA.OriginalFFA` (Gandomi et al. 2011 variant). Unlike heuriscale's
  firefly, every attraction move is evaluated, and each firefly's generation is topped up
  with fresh random points to `pop_size` evaluations, so one generation costs pop^2 =
  10,000 evaluations (20 generations at D = 10, 100 at D = 20 within the budget).

All at mealpy's default hyper-parameters, `pop_size=100`, `epoch=100000` (mealpy's maximum;
never reached) and `termination={"max_fe": budget}`: mealpy checks the count after each
generation, so a run ends within one generation past the budget (at most 149 evaluations,
or 9,999 for the firefly; the recorded `nfe` is the actual count and times per evaluation
divide by it). `log_to=None` (no per-generation printing); mealpy's own history keeping
(global best per generation, diversity) stays on, as a user would have it.

What is measured (one process, one run at a time, a fixed seed per run):

1. opfunu alone: time per `evaluate(x)` of each function on random points in the box: the
   objective's share of each evaluation.
2. Every (algorithm, function, dim), one whole run at a fraction of the budget (default
   10 % at D = 10: 20,000 evaluations; 4 % at D = 20: 40,000) and, for the three counted
   algorithms, one at half that fraction: time per evaluation at two budget sizes.
   All 12 functions are measured, not a representative few: opfunu's F7 and F8 (hybrids) cost
   0.4-0.7 ms per evaluation, 30-90 times F1's, so they dominate and no subset stands for the
   rest.
3. One whole run at the full budget of F1 (the cheapest function) per counted algorithm and
   dim (200,000 evaluations at D = 10, 1,000,000 at D = 20), against the fraction run.
4. OpenBLAS / OpenMP at 1 thread vs 2 (this machine's cores), each in a fresh process, on
   the firefly (the one algorithm with a matmul) on F12 (a composition, rotations).

Time per evaluation is constant in mealpy except for one term, which the script separates:
mealpy 3 calls `History.get_global_repeated_times` (a Python loop over the whole history, for
its early-stopping counter) after every generation whenever a `termination` is given, so a
run of G generations spends c G(G+1)/2 in it, c = 1.2-2.0 us per element here. That is
nothing for the firefly (G = 20 / 100 generations) but about 3 s per run for PSO and EP at
D = 10 (G = 1,999) and 70-100 s per run at D = 20 (G = 9,999), about a fifth of the
campaign. It is timed apart (the method is wrapped with a timer) and extrapolated as
c G(G+1)/2, c from the full-budget runs. (A fixed `epoch` without a `termination` would
skip it; the campaign's budgets are evaluations, hence `max_fe`.)

seconds per run = l x evaluations of a full run + c G(G+1)/2, with l the time per
evaluation without the scan, pooled over the fraction runs of that cell (main + half: total
time / total evaluations); the campaign is that x 30 runs, summed over the 12 functions.
Beside it: "naive" (plain linear scaling, the main fraction run's wall / evaluation x budget)
and "with F1 drift" (each cell's full-budget F1 run's excess time per evaluation over its
fraction runs, scan excluded, added to all 12 functions), as a sensitivity check. Single runs
on this shared 2-core machine vary by +-20 % (same seed, same work), which is the main
uncertainty; it averages out over the 12 functions to a few per cent.

    /tmp/mealpy-venv/bin/python benchmarks/mealpy_campaign.py --reanalyse   # re-extrapolate the JSON
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from mealpy import EP, FFA, PSO, FloatVar, Problem  # noqa: E402
from mealpy.utils.history import History  # noqa: E402
from opfunu.cec_based import cec2022  # noqa: E402

try:
    import threadpoolctl
except ImportError:  # optional: only for reporting BLAS threads and the 1-vs-2 thread check
    threadpoolctl = None

BUDGET = {10: 200_000, 20: 1_000_000}  # CEC 2022: evaluations per run
RUNS = 30  # per (algorithm, function, dim)
POP = 100
FUNCTIONS = list(range(1, 13))

# key: (mealpy class, label, counted in the campaign total)
ALGORITHMS = {
    "pso": (PSO.OriginalPSO, "mealpy PSO.OriginalPSO", True),
    "ep": (EP.OriginalEP, "mealpy EP.OriginalEP", True),
    "firefly": (FFA.OriginalFFA, "mealpy FFA.OriginalFFA", True),
    "levy_ep": (EP.LevyEP, "mealpy EP.LevyEP (alternative to OriginalEP)", False),
}
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "campaigns" / "mealpy_campaign.json"
METHOD = {
    "measured": "1 whole run per (algorithm, function, dim) at a fraction of the budget (main), "
                "1 at half that fraction (counted algorithms), one full-budget F1 run per counted "
                "algorithm and dim, opfunu evaluate() alone on random points; wall time of "
                "Optimizer.solve, mealpy's History.get_global_repeated_times timed apart",
    "extrapolated": "seconds per full run = (time without the history scan / evaluations, pooled "
                    "over the main and half fraction runs) x evaluations of a full run + scan "
                    "seconds per element x G(G+1)/2 (G generations of a full run, per-element cost "
                    "from the full-budget runs with G >= 1000); campaign = sum over the 12 "
                    "functions x 30 runs; full-budget F1 runs reported as measured / predicted",
}


def cec(fn: int, dim: int):
    return getattr(cec2022, f"F{fn}2022")(ndim=dim)


def problem_for(f) -> Problem:
    return Problem(bounds=FloatVar(lb=f.lb, ub=f.ub), minmax="min", obj_func=f.evaluate,
                   log_to=None, name=f.__class__.__name__)


# mealpy 3 calls History.get_global_repeated_times (a Python loop over the whole history, for
# its early-stopping counter) after every generation whenever a `termination` is given, so a
# run of G generations spends c G(G+1)/2 in it: quadratic in G. It is timed apart here.
_SCAN = {"s": 0.0, "calls": 0}
_scan = History.get_global_repeated_times


def _timed_scan(self, epsilon):
    t0 = time.perf_counter()
    try:
        return _scan(self, epsilon)
    finally:
        _SCAN["s"] += time.perf_counter() - t0
        _SCAN["calls"] += 1


History.get_global_repeated_times = _timed_scan

#: evaluations per generation (after the pop_size of the initial population)
PER_GENERATION = {"pso": POP, "ep": POP, "levy_ep": POP + POP // 2, "firefly": POP * POP}


def generations(key: str, evals: int) -> int:
    """Generations mealpy runs for `max_fe = evals` (it stops at the first count >= evals)."""
    return max(1, -(-(evals - POP) // PER_GENERATION[key]))


def time_run(key: str, fn: int, dim: int, evals: int, seed: int) -> dict:
    """One whole mealpy run of `evals` evaluations; wall time of `solve` only."""
    cls = ALGORITHMS[key][0]
    f = cec(fn, dim)
    problem = problem_for(f)
    model = cls(epoch=100_000, pop_size=POP)
    _SCAN["s"], _SCAN["calls"] = 0.0, 0
    t0, c0 = time.perf_counter(), time.process_time()
    best = model.solve(problem, mode="single", termination={"max_fe": evals}, seed=seed)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    nfe, gens = int(model.nfe_counter), len(model.history.list_epoch_time)
    scan = _SCAN["s"]
    return {
        "algorithm": key, "function": f"F{fn}", "dim": dim, "max_fe": evals, "nfe": nfe,
        "generations": gens, "seed": seed, "wall_s": wall, "cpu_s": cpu,
        "history_scan_s": scan, "scan_ns_per_element": scan / (gens * (gens + 1) / 2) * 1e9,
        "us_per_eval": wall / nfe * 1e6, "linear_us_per_eval": (wall - scan) / nfe * 1e6,
        "error": float(best.target.fitness - f.f_global),
    }


def time_objective(fn: int, dim: int, n: int, rng) -> float:
    """Microseconds per opfunu `evaluate(x)`, x uniform in the box."""
    f = cec(fn, dim)
    xs = rng.uniform(f.lb, f.ub, (n, dim))
    f.evaluate(xs[0])
    t0 = time.perf_counter()
    for x in xs:
        f.evaluate(x)
    return (time.perf_counter() - t0) / n * 1e6


def machine() -> dict:
    model = "unknown"
    mhz = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("cpu MHz") and mhz is None:
                mhz = float(line.split(":", 1)[1])
    except OSError:
        pass
    info = {"cpu": model, "cpu_mhz": mhz, "logical_cpus": os.cpu_count(),
            "usable_cpus": len(os.sched_getaffinity(0)), "platform": platform.platform(),
            "python": platform.python_version()}
    return info


def versions() -> dict:
    out = {}
    for pkg in ("mealpy", "opfunu", "numpy", "scipy", "threadpoolctl"):
        try:
            out[pkg] = version(pkg)
        except Exception:  # noqa: BLE001
            out[pkg] = None
    if threadpoolctl is not None:
        out["blas"] = [{k: p.get(k) for k in ("internal_api", "version", "num_threads", "threading_layer")}
                       for p in threadpoolctl.threadpool_info()]
    return out


def hours(seconds: float) -> float:
    return seconds / 3600.0


def same_cell(a: dict, key: str, fn: str, dim: int) -> bool:
    return (a["algorithm"], a["function"], a["dim"]) == (key, fn, dim)


def extrapolate(main_rows: list[dict], half_rows: list[dict], full_rows: list[dict]) -> dict:
    """Per algorithm and dim: seconds per full run of each function, and the campaign's time.

    seconds per run = l x evaluations of a full run + c G(G+1)/2, where l is the time per
    evaluation without the history scan, pooled over the fraction runs of that cell (main and
    half: total time / total evaluations), G the generations of a full run and c the scan's
    seconds per history element, from the full-budget runs with G >= 1000 (median per dim).
    The full-budget F1 runs are the check: measured / predicted by the same formula.
    """
    long_scans = {}
    for r in full_rows:
        if r["generations"] >= 1000:
            long_scans.setdefault(r["dim"], []).append(r["scan_ns_per_element"])
    all_long = [v for vs in long_scans.values() for v in vs]
    table = {}
    for key, (_, label, counted) in ALGORITHMS.items():
        for dim in BUDGET:
            rows = [r for r in main_rows if r["algorithm"] == key and r["dim"] == dim]
            if not rows:
                continue
            c_ns = float(np.median(long_scans.get(dim) or all_long or [r["scan_ns_per_element"] for r in rows]))
            gens = generations(key, BUDGET[dim])
            nfe = POP + gens * PER_GENERATION[key]
            scan_s = c_ns * 1e-9 * gens * (gens + 1) / 2
            pooled = {}
            for r in rows:
                cell = [r] + [h for h in half_rows if same_cell(h, key, r["function"], dim)]
                pooled[r["function"]] = sum(x["wall_s"] - x["history_scan_s"] for x in cell) / sum(x["nfe"] for x in cell)
            per_fn = {fn: us * nfe + scan_s for fn, us in pooled.items()}
            naive = {r["function"]: r["us_per_eval"] * 1e-6 * BUDGET[dim] for r in rows}
            checks = []
            for f in [r for r in full_rows if same_cell(r, key, "F1", dim)]:
                g = f["generations"]
                predicted = pooled["F1"] * f["nfe"] + c_ns * 1e-9 * g * (g + 1) / 2
                checks.append({"measured_s": f["wall_s"], "predicted_s": predicted,
                               "measured_over_predicted": f["wall_s"] / predicted,
                               "linear_us_per_eval_full": f["linear_us_per_eval"],
                               "linear_us_per_eval_fraction_runs": pooled["F1"] * 1e6})
            complete = len(rows) == len(FUNCTIONS)
            run_sum, naive_sum = sum(per_fn.values()), sum(naive.values())
            # sensitivity: the F1 full run's excess time per evaluation over the fraction runs'
            # (scan excluded), as if it held for every function of this algorithm and dim
            drift_us = float(np.mean([c["linear_us_per_eval_full"] - c["linear_us_per_eval_fraction_runs"]
                                      for c in checks])) if checks else 0.0
            drift_s = drift_us * 1e-6 * nfe * len(rows) * RUNS
            table[f"{key}/D{dim}"] = {
                "algorithm": key, "mealpy_class": label, "dim": dim, "counted": counted,
                "budget_per_run": BUDGET[dim], "mealpy_nfe_per_run": nfe, "generations_per_run": gens,
                "functions_measured": len(rows),
                "linear_us_per_eval": {fn: us * 1e6 for fn, us in pooled.items()},
                "linear_us_per_eval_mean": float(np.mean(list(pooled.values()))) * 1e6,
                "scan_ns_per_element": c_ns, "scan_seconds_per_run": scan_s,
                "seconds_per_run": per_fn,
                "us_per_eval_full_run_mean": run_sum / len(rows) / nfe * 1e6,
                "full_budget_F1_check": checks,
                "seconds_12_functions_1_run": run_sum if complete else None,
                "campaign_seconds": run_sum * RUNS if complete else None,
                "campaign_hours": hours(run_sum * RUNS) if complete else None,
                "naive_campaign_hours": hours(naive_sum * RUNS) if complete else None,
                "naive": "main fraction run's wall/eval (scan included) x budget",
                "F1_drift_us_per_eval": drift_us,
                "campaign_hours_with_F1_drift": hours(run_sum * RUNS + drift_s) if complete else None,
            }
    return table


def print_table(table: dict, objective: dict) -> None:
    print("\nExtrapolated campaign: per algorithm and dim, 12 functions x 30 runs x full budget, one core")
    head = (f"{'algorithm':<9}{'D':>4}{'opfunu':>9}{'mealpy':>9}{'gens':>7}{'scan s':>9}{'s/run':>9}"
            f"{'campaign h':>12}{'naive h':>9}{'F1 full check':>15}")
    print(head)
    print(f"{'':<13}{'us/eval':>18}{'':>7}{'/run':>9}{'mean':>9}{'':>21}{'meas./pred.':>15}")
    print("-" * len(head))
    nan = float("nan")
    for row in table.values():
        dim = row["dim"]
        obj = float(np.mean([objective[f"F{fn}/D{dim}"] for fn in FUNCTIONS])) if objective else nan
        check = ", ".join(f"{c['measured_over_predicted']:.2f}" for c in row["full_budget_F1_check"]) or "-"
        print(f"{row['algorithm']:<9}{dim:>4}{obj:>9.1f}{row['us_per_eval_full_run_mean']:>9.1f}"
              f"{row['generations_per_run']:>7}{row['scan_seconds_per_run']:>9.1f}"
              f"{np.mean(list(row['seconds_per_run'].values())):>9.1f}"
              f"{row['campaign_hours'] or nan:>12.2f}{row['naive_campaign_hours'] or nan:>9.2f}{check:>15}"
              + ("" if row["counted"] else "   (not in total)"))
    print("opfunu: evaluate() alone on random points; mealpy: seconds per full run / evaluations "
          "(scan included), both means over the 12 functions")


def summarise(report: dict) -> dict:
    """Extrapolation and totals from report['measured']; returns the table."""
    m = report["measured"]
    table = extrapolate(m.get("main_runs", []), m.get("half_runs", []), m.get("full_budget_runs", []))
    counted = [r for r in table.values() if r["counted"] and r["campaign_seconds"] is not None]
    total = sum(r["campaign_seconds"] for r in counted)
    report["extrapolated"] = table
    report["total"] = {
        "campaign_seconds": total, "campaign_hours": hours(total), "campaign_days": total / 86400,
        "naive_campaign_hours": sum(r["naive_campaign_hours"] for r in counted),
        "campaign_hours_with_F1_drift": sum(r["campaign_hours_with_F1_drift"] for r in counted),
        "history_scan_share": sum(r["scan_seconds_per_run"] * 12 * RUNS for r in counted) / total if total else None,
        "cells": [f"{r['algorithm']}/D{r['dim']}" for r in counted],
        "note": "sum over the counted algorithms (pso, ep = OriginalEP, firefly) and both dims, "
                "one process on one core, runs one after another; extrapolated, not measured",
    }
    if all(table.get(f"{k}/D{d}", {}).get("campaign_seconds") for k in ("ep", "levy_ep") for d in BUDGET):
        alt = total - sum(table[f"ep/D{d}"]["campaign_seconds"] for d in BUDGET) \
            + sum(table[f"levy_ep/D{d}"]["campaign_seconds"] for d in BUDGET)
        report["total"]["campaign_hours_with_levy_ep_instead_of_ep"] = hours(alt)
    return table


def print_summary(report: dict, table: dict) -> None:
    print_table(table, report["measured"].get("opfunu_us_per_eval", {}))
    t = report["total"]
    print(f"\nTotal (pso + ep + firefly, D = 10 and 20): {t['campaign_hours']:.1f} h "
          f"= {t['campaign_days']:.2f} days on one core (extrapolated; naive linear scaling: "
          f"{t['naive_campaign_hours']:.1f} h; with each cell's F1 drift added to all its functions: "
          f"{t['campaign_hours_with_F1_drift']:.1f} h)")
    if "campaign_hours_with_levy_ep_instead_of_ep" in t:
        print(f"with LevyEP instead of OriginalEP: {t['campaign_hours_with_levy_ep_instead_of_ep']:.1f} h")


def cell_in_subprocess(key: str, fn: int, dim: int, evals: int, seed: int, threads: int) -> dict:
    """time_run in a fresh interpreter with BLAS / OpenMP at `threads` threads."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__, "--cell", f"{key},{fn},{dim},{evals},{seed}"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS), help="comma-separated keys")
    ap.add_argument("--functions", default=",".join(map(str, FUNCTIONS)), help="e.g. 1,7,8")
    ap.add_argument("--dims", default="10,20")
    ap.add_argument("--fraction10", type=float, default=0.10, help="fraction of the D=10 budget")
    ap.add_argument("--fraction20", type=float, default=0.04, help="fraction of the D=20 budget")
    ap.add_argument("--no-half", action="store_true", help="skip the half-fraction runs")
    ap.add_argument("--full-dims", default="10,20", help="dims of the full-budget F1 runs ('' for none)")
    ap.add_argument("--no-thread-check", action="store_true")
    ap.add_argument("--objective-evals", type=int, default=2000)
    ap.add_argument("--json", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--reanalyse", action="store_true",
                    help="recompute the extrapolation from the measurements already in --json")
    ap.add_argument("--cell", help=argparse.SUPPRESS)  # key,fn,dim,evals,seed: one run, JSON out
    args = ap.parse_args()

    if args.cell:
        key, fn, dim, evals, seed = args.cell.split(",")
        time_run(key, 1, 10, 2 * POP + 50, seed=0)  # warm-up
        row = time_run(key, int(fn), int(dim), int(evals), int(seed))
        row["blas_threads"] = versions().get("blas")
        print(json.dumps(row))
        return

    if args.reanalyse:
        report = json.loads(args.json.read_text())
        report["method"] = METHOD
        report["reanalysed"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        table = summarise(report)
        args.json.write_text(json.dumps(report, indent=1) + "\n")
        print_summary(report, table)
        return

    algos = args.algorithms.split(",")
    fns = [int(s) for s in args.functions.split(",")]
    dims = [int(s) for s in args.dims.split(",")]
    full_dims = [int(s) for s in args.full_dims.split(",") if s]
    fraction = {10: args.fraction10, 20: args.fraction20}
    started = time.perf_counter()
    load_before = os.getloadavg()

    report = {
        "what": "mealpy 3 wall time for the CEC 2022 campaign (F1-F12, D=10,20, 30 runs, "
                "200,000 / 1,000,000 evaluations per run, pop 100) on one CPU core, "
                "extrapolated from measured runs",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).as_posix(), *sys.argv]),
        "machine": machine(),
        "versions": versions(),
        "threads": {v: os.environ.get(v) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
        "campaign": {"functions": [f"F{i}" for i in FUNCTIONS], "dims": list(BUDGET), "runs": RUNS,
                     "budget_per_run": {str(d): b for d, b in BUDGET.items()}, "pop_size": POP,
                     "objective": "opfunu.cec_based.cec2022.F{n}2022(ndim=D).evaluate, one point per call"},
        "algorithms": {k: {"class": ALGORITHMS[k][1], "counted_in_total": ALGORITHMS[k][2],
                           "evaluations_per_generation": PER_GENERATION[k],
                           "hyper_parameters": "mealpy defaults, pop_size=100, epoch=100000, "
                                               "termination={'max_fe': budget}, mode='single'"}
                       for k in algos},
        "method": METHOD,
        "measured": {"fractions": {str(d): fraction[d] for d in dims}},
    }

    def save() -> None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(json.dumps(report, indent=1) + "\n")
        tmp.replace(args.json)

    # 1. the objective alone
    rng = np.random.default_rng(0)
    objective = {}
    for dim in dims:
        for fn in FUNCTIONS:
            objective[f"F{fn}/D{dim}"] = time_objective(fn, dim, args.objective_evals, rng)
    report["measured"]["opfunu_us_per_eval"] = objective
    print("opfunu evaluate(x), us:", {k: round(v, 1) for k, v in objective.items()}, flush=True)
    save()

    for key in algos:  # warm-up (imports, first-call caches), not recorded
        time_run(key, 1, 10, 2 * POP + 50, seed=0)

    # 2. fraction runs (half, then main) for every cell
    main_rows, half_rows, full_rows = [], [], []
    report["measured"].update(main_runs=main_rows, half_runs=half_rows, full_budget_runs=full_rows)
    for key in algos:
        for dim in dims:
            for fn in fns:
                evals = int(round(fraction[dim] * BUDGET[dim]))
                seed = 1000 * dim + fn
                half = None
                if not args.no_half and ALGORITHMS[key][2]:
                    half = time_run(key, fn, dim, evals // 2, seed)
                    half_rows.append(half)
                row = time_run(key, fn, dim, evals, seed)
                main_rows.append(row)
                print(f"{key:<8} D={dim:<3} F{fn:<3} {row['nfe']:>8} evals {row['wall_s']:8.2f} s "
                      f"{row['linear_us_per_eval']:8.1f} us/eval w/o scan"
                      + (f" (half budget: {half['linear_us_per_eval']:.1f})" if half else "")
                      + f"  cpu/wall {row['cpu_s'] / row['wall_s']:.3f}  err {row['error']:.3g}", flush=True)
                save()

    # time per evaluation: main vs half budget (scan excluded)
    if half_rows:
        ratio = {}
        for h in half_rows:
            m = next(m for m in main_rows if same_cell(m, h["algorithm"], h["function"], h["dim"]))
            ratio.setdefault(h["algorithm"], []).append(m["linear_us_per_eval"] / h["linear_us_per_eval"])
        allr = [v for vs in ratio.values() for v in vs]
        report["measured"]["main_over_half_linear_us_per_eval"] = {
            "median": float(np.median(allr)), "min": float(np.min(allr)), "max": float(np.max(allr)),
            "median_per_algorithm": {k: float(np.median(v)) for k, v in ratio.items()},
        }
        print("main/half us per eval:", report["measured"]["main_over_half_linear_us_per_eval"], flush=True)

    # 3. full budget, F1, against the fraction run
    if 1 in fns:
        for dim in [d for d in full_dims if d in dims]:
            for key in [k for k in algos if ALGORITHMS[k][2]]:
                row = time_run(key, 1, dim, BUDGET[dim], seed=10_000 + dim)
                frac = next(m for m in main_rows if same_cell(m, key, "F1", dim))
                row["naive_predicted_wall_s"] = frac["us_per_eval"] * 1e-6 * row["nfe"]
                full_rows.append(row)
                print(f"full budget {key:<8} F1 D={dim}: {row['wall_s']:.1f} s measured "
                      f"({row['history_scan_s']:.1f} s history scan, {row['generations']} generations); "
                      f"{row['naive_predicted_wall_s']:.1f} s by fraction-run wall/eval x evals; "
                      f"linear us/eval {row['linear_us_per_eval']:.1f} vs {frac['linear_us_per_eval']:.1f} in the "
                      f"fraction run", flush=True)
                save()

    # 4. BLAS threads: 1 vs 2 (this machine's cores), in fresh processes, alternating, best of 2
    if not args.no_thread_check and "firefly" in algos:
        dim = max(dims)
        check = {"cell": f"firefly F12 D={dim} 10,100 evaluations, best of 2", "1": [], "2": []}
        for _ in range(2):
            for n in (1, 2):
                r = cell_in_subprocess("firefly", 12, dim, 10_100, 7, n)
                check[str(n)].append(r["us_per_eval"])
                check[f"blas_{n}"] = r["blas_threads"]
        check["us_per_eval_1_thread"], check["us_per_eval_2_threads"] = min(check["1"]), min(check["2"])
        report["measured"]["blas_threads_check"] = check
        print(f"firefly F12 D={dim}: {check['us_per_eval_1_thread']:.1f} us/eval with 1 BLAS thread, "
              f"{check['us_per_eval_2_threads']:.1f} with 2", flush=True)

    table = summarise(report)
    report["measuring_seconds"] = time.perf_counter() - started
    report["load_average"] = {"before": load_before, "after": os.getloadavg()}
    save()
    print_summary(report, table)
    print(f"measuring took {report['measuring_seconds'] / 60:.1f} min; wrote {args.json}")


if __name__ == "__main__":
    main()
